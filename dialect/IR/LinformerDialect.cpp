//===- LinformerDialect.cpp - Linformer dialect -----------------*- C++ -*-===//
//
// Registers the Linformer dialect's ops and attributes and implements the
// custom syntax of the sharing attribute (paper presets or explicit flags).
//
//===----------------------------------------------------------------------===//

#include "dialect/IR/LinformerDialect.h"
#include "dialect/IR/LinformerOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::linformer;

#include "dialect/IR/LinformerDialect.cpp.inc"
#include "dialect/IR/LinformerEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "dialect/IR/LinformerAttrs.cpp.inc"

void LinformerDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialect/IR/LinformerOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialect/IR/LinformerAttrs.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// SharingAttr
//===----------------------------------------------------------------------===//

namespace {
struct Preset {
  StringLiteral name;
  bool heads, kv, layers;
};
} // namespace

/// The paper's presets are nested: each one shares more than the one before.
static constexpr Preset kPresets[] = {
    {"none", false, false, false},
    {"headwise", true, false, false},
    {"key_value", true, true, false},
    {"layerwise", true, true, true},
};

StringRef SharingAttr::getPresetName() const {
  for (const Preset &p : kPresets)
    if (p.heads == getHeads() && p.kv == getKv() && p.layers == getLayers())
      return p.name;
  return {};
}

SharingAttr SharingAttr::getPreset(MLIRContext *ctx, StringRef name) {
  for (const Preset &p : kPresets)
    if (p.name == name)
      return SharingAttr::get(ctx, p.heads, p.kv, p.layers);
  return {};
}

/// Parses `<preset>` or `<flag, flag, ...>` with flags heads, kv, layers.
Attribute SharingAttr::parse(AsmParser &parser, Type) {
  MLIRContext *ctx = parser.getContext();
  if (parser.parseLess())
    return {};
  bool flags[3] = {false, false, false};
  bool sawFlag = false;
  auto parseOne = [&]() -> ParseResult {
    SMLoc loc = parser.getCurrentLocation();
    StringRef word;
    if (parser.parseKeyword(&word))
      return failure();
    int index = llvm::StringSwitch<int>(word)
                    .Case("heads", 0)
                    .Case("kv", 1)
                    .Case("layers", 2)
                    .Default(-1);
    if (index < 0) {
      SharingAttr preset = getPreset(ctx, word);
      if (preset && sawFlag)
        return parser.emitError(loc)
               << "a sharing preset ('" << word
               << "') cannot be combined with other flags";
      if (!preset)
        return parser.emitError(loc)
               << "unknown sharing '" << word
               << "': expected one preset (none, headwise, key_value, "
                  "layerwise) or a list of flags (heads, kv, layers)";
      flags[0] = preset.getHeads();
      flags[1] = preset.getKv();
      flags[2] = preset.getLayers();
      sawFlag = true;
      // A preset stands alone.
      if (succeeded(parser.parseOptionalComma()))
        return parser.emitError(loc)
               << "a sharing preset ('" << word
               << "') cannot be combined with other flags";
      return success();
    }
    if (flags[index])
      return parser.emitError(loc) << "sharing flag '" << word << "' repeated";
    flags[index] = true;
    sawFlag = true;
    return success();
  };
  if (parser.parseCommaSeparatedList(parseOne) || parser.parseGreater())
    return {};
  return SharingAttr::get(ctx, flags[0], flags[1], flags[2]);
}

void SharingAttr::print(AsmPrinter &printer) const {
  printer << '<';
  StringRef preset = getPresetName();
  if (!preset.empty()) {
    printer << preset << '>';
    return;
  }
  SmallVector<StringRef, 3> flags;
  if (getHeads())
    flags.push_back("heads");
  if (getKv())
    flags.push_back("kv");
  if (getLayers())
    flags.push_back("layers");
  llvm::interleaveComma(flags, printer);
  printer << '>';
}

//===----------------------------------------------------------------------===//
// CPUTargetAttr, CPUScheduleAttr
//===----------------------------------------------------------------------===//

LogicalResult
CPUTargetAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                      StringRef cpu, StringRef features, StringRef isa,
                      int64_t vectorBits, int64_t vectorRegisters,
                      int64_t fmaUnits, int64_t fmaLatency, int64_t l1Bytes,
                      int64_t l2Bytes, int64_t l3Bytes, int64_t cores) {
  if (!llvm::is_contained({"avx512", "avx2", "sse", "generic"}, isa))
    return emitError() << "isa must be one of avx512, avx2, sse, generic; "
                          "got '"
                       << isa << "'";
  if (vectorBits < 64 || vectorBits % 32 != 0)
    return emitError() << "vector_bits must be a multiple of 32 and at least "
                          "64; got "
                       << vectorBits;
  if (vectorRegisters < 4)
    return emitError() << "vector_registers must be at least 4; got "
                       << vectorRegisters;
  if (fmaUnits < 1 || fmaLatency < 1)
    return emitError() << "fma_units and fma_latency must be positive";
  if (l1Bytes < 1024 || l2Bytes < 1024 || l3Bytes < 0)
    return emitError() << "cache sizes must be at least 1 KiB (L3: >= 0)";
  if (cores < 1)
    return emitError() << "cores must be positive; got " << cores;
  return success();
}

LogicalResult
CPUScheduleAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                        ArrayRef<int64_t> workgroup, int64_t rows,
                        int64_t columns, int64_t reduction, bool pack,
                        int64_t split) {
  for (auto [i, t] : llvm::enumerate(workgroup))
    if (t < 0)
      return emitError() << "workgroup tile " << i
                         << " is negative (" << t << "); 0 means whole";
  if (rows < 1 || columns < 1)
    return emitError() << "register tile [" << rows << ", " << columns
                       << "] must be positive";
  if (reduction < 0)
    return emitError() << "reduction block must be >= 0 (0 = none); got "
                       << reduction;
  if (split < 1)
    return emitError() << "split must be >= 1 (1 = none); got " << split;
  return success();
}

int64_t WorkgroupMappingAttr::getMappingId() const { return getDim(); }
bool WorkgroupMappingAttr::isLinearMapping() const { return false; }
int64_t WorkgroupMappingAttr::getRelativeIndex() const { return getDim(); }
