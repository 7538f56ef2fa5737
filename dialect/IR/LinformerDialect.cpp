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
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::linformer;

#include "dialect/IR/LinformerDialect.cpp.inc"
#include "dialect/IR/LinformerEnums.cpp.inc"

// #linformer.cuda_schedule's optional tail: `, in_flight = N` where N is
// not 0, `, swizzle = S` where S is not 0, then `, pair_stores = false`
// where they are off (optional groups all opening with a comma would be
// ambiguous to the generated parser).
static ParseResult parseScheduleTail(AsmParser &parser, int64_t &inFlight,
                                     int64_t &swizzle, bool &pairStores) {
  inFlight = 0;
  swizzle = 0;
  pairStores = true;
  llvm::StringSet<> seen;
  while (succeeded(parser.parseOptionalComma())) {
    StringRef key;
    SMLoc at = parser.getCurrentLocation();
    if (parser.parseKeyword(&key) || parser.parseEqual())
      return failure();
    if (!seen.insert(key).second)
      return parser.emitError(at, "'") << key << "' given twice";
    if (key == "in_flight") {
      if (parser.parseInteger(inFlight))
        return failure();
    } else if (key == "swizzle") {
      if (parser.parseInteger(swizzle))
        return failure();
    } else if (key == "pair_stores") {
      StringRef b;
      if (parser.parseKeyword(&b) || (b != "true" && b != "false"))
        return parser.emitError(parser.getCurrentLocation(),
                                "pair_stores takes true or false");
      pairStores = b == "true";
    } else {
      return parser.emitError(
                 parser.getCurrentLocation(),
                 "expected in_flight, swizzle or pair_stores, got '")
             << key << "'";
    }
  }
  return success();
}

static void printScheduleTail(AsmPrinter &printer, int64_t inFlight,
                              int64_t swizzle, bool pairStores) {
  if (inFlight != 0)
    printer << ", in_flight = " << inFlight;
  if (swizzle != 0)
    printer << ", swizzle = " << swizzle;
  if (!pairStores)
    printer << ", pair_stores = false";
}

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
  detail::attachAttentionCoreBufferization(*getContext());
}

//===----------------------------------------------------------------------===//
// Discardable attributes
//===----------------------------------------------------------------------===//

namespace {
/// A `linformer.*` attribute on another dialect's op (LinformerBase.td):
/// its name, whether a value has its type, and that type in words.
struct DiscardableAttr {
  StringLiteral name;
  bool (*hasType)(Attribute);
  StringLiteral type;
};
template <typename T>
bool isA(Attribute a) {
  return isa<T>(a);
}
using D = LinformerDialect;
constexpr DiscardableAttr kDiscardableAttrs[] = {
    {D::DispatchPlanAttrHelper::getNameStr(), isA<DispatchPlanAttr>,
     "a #linformer.dispatch_plan"},
    {D::TargetAttrHelper::getNameStr(), isA<CPUTargetAttr>,
     "a #linformer.cpu_target"},
    {D::RootAttrHelper::getNameStr(), isA<UnitAttr>, "a unit attribute"},
    {D::ScheduleAttrHelper::getNameStr(), isA<CPUScheduleAttr>,
     "a #linformer.cpu_schedule"},
    {D::KernelAttrHelper::getNameStr(), isA<KernelShapeAttr>,
     "a #linformer.kernel_shape"},
    {D::InitializerAttrHelper::getNameStr(), isA<UnitAttr>, "a unit attribute"},
    {D::TileSizesAttrHelper::getNameStr(), isA<DenseI64ArrayAttr>,
     "an array<i64: ...>"},
    {D::TokenBoundAttrHelper::getNameStr(), isA<TokenBoundAttr>,
     "a #linformer.token_bound"},
    {D::UnreadPaddingAttrHelper::getNameStr(), isA<DenseI64ArrayAttr>,
     "an array<i64: ...>"},
    {D::TokenRowsAttrHelper::getNameStr(), isA<DenseI64ArrayAttr>,
     "an array<i64: ...>"},
    {D::WorkgroupsAttrHelper::getNameStr(), isA<IntegerAttr>, "an integer"},
    {D::BufferBytesAttrHelper::getNameStr(), isA<DenseI64ArrayAttr>,
     "an array<i64: ...>"},
    {D::TokenRowsRecordAttrHelper::getNameStr(), isA<DenseI64ArrayAttr>,
     "an array<i64: ...>"},
    {D::PackedBuffersAttrHelper::getNameStr(), isA<DenseI64ArrayAttr>,
     "an array<i64: ...>"},
    {D::RegisterLoopAttrHelper::getNameStr(), isA<UnitAttr>,
     "a unit attribute"},
    {D::Bf16ScoresAttrHelper::getNameStr(), isA<UnitAttr>,
     "a unit attribute"},
    {D::F16PairsAttrHelper::getNameStr(), isA<UnitAttr>, "a unit attribute"},
    {D::Bf16EngineAttrHelper::getNameStr(), isA<StringAttr>, "a string"},
    {D::Bf16EpilogueAttrHelper::getNameStr(), isA<UnitAttr>,
     "a unit attribute"},
    {D::TensorCoreAttrHelper::getNameStr(), isA<UnitAttr>, "a unit attribute"},
    {D::CudaWholeWarpsAttrHelper::getNameStr(), isA<UnitAttr>,
     "a unit attribute"},
    {D::CudaTokensPerIterationAttrHelper::getNameStr(), isA<IntegerAttr>,
     "an integer"},
    {D::NarrowedAttrHelper::getNameStr(), isA<UnitAttr>, "a unit attribute"},
    {D::TokenLoopsAttrHelper::getNameStr(), isA<DenseI64ArrayAttr>,
     "an array<i64: ...>"},
    {D::CudaSlotRowsAttrHelper::getNameStr(), isA<DenseI64ArrayAttr>,
     "an array<i64: ...>"},
    {D::CudaTokenRowsAttrHelper::getNameStr(), isA<TokenRowsAttr>,
     "a #linformer.token_rows"},
    {D::CudaLaunchRowsAttrHelper::getNameStr(), isA<ArrayAttr>, "an array"},
    {D::CudaScheduleAttrHelper::getNameStr(), isA<CUDAScheduleAttr>,
     "a #linformer.cuda_schedule"},
    {D::CudaAbsorbsAttrHelper::getNameStr(), isA<CUDAAbsorptionAttr>,
     "a #linformer.cuda_absorption"},
    {D::CudaCoreScheduleAttrHelper::getNameStr(), isA<CUDACoreScheduleAttr>,
     "a #linformer.cuda_core_schedule"},
    {D::CudaF32CoreScheduleAttrHelper::getNameStr(),
     isA<CUDAF32CoreScheduleAttr>, "a #linformer.cuda_f32_core_schedule"},
    {D::CudaHostWgmmaAttrHelper::getNameStr(), isA<DenseI64ArrayAttr>,
     "an array<i64: ...>"},
    {D::CudaSchedulesAttrHelper::getNameStr(), isA<ArrayAttr>, "an array"},
    {D::CudaLengthSplitsAttrHelper::getNameStr(), isA<DenseI64ArrayAttr>,
     "an array<i64: ...>"},
    {D::LengthGuardAttrHelper::getNameStr(), isA<IntegerAttr>, "an integer"},
    {D::LengthVariantAttrHelper::getNameStr(), isA<IntegerAttr>, "an integer"},
    {D::ReassociationCostAttrHelper::getNameStr(), isA<DictionaryAttr>,
     "a dictionary"},
};
} // namespace

LogicalResult LinformerDialect::verifyOperationAttribute(Operation *op,
                                                         NamedAttribute attr) {
  StringRef name = attr.getName().strref();
  for (const DiscardableAttr &known : kDiscardableAttrs) {
    if (name != known.name)
      continue;
    if (known.hasType(attr.getValue()))
      return success();
    return op->emitError() << "'" << name << "' must be " << known.type
                           << ", not " << attr.getValue();
  }
  std::string names;
  for (const DiscardableAttr &known : kDiscardableAttrs)
    names += (names.empty() ? "" : ", ") + known.name.str();
  if (name == kSequenceArgAttrName || name == kLengthsArgAttrName ||
      name == kPackedSequenceArgAttrName)
    return op->emitError() << "'" << name
                           << "' marks a function argument (an argument "
                              "attribute), not an op";
  return op->emitError() << "'" << name
                         << "' is not an attribute of the linformer dialect "
                            "(it attaches "
                         << names << " to ops)";
}

LogicalResult LinformerDialect::verifyRegionArgAttribute(
    Operation *op, unsigned region, unsigned argIndex, NamedAttribute attr) {
  StringRef name = attr.getName().strref();
  if (name == kSequenceSplitArgAttrName) {
    auto parts = dyn_cast<IntegerAttr>(attr.getValue());
    if (!parts || parts.getInt() < 2)
      return op->emitError() << "argument " << argIndex << ": '" << name
                             << "' must be the number of ranks (an integer "
                                ">= 2), not "
                             << attr.getValue();
    return success();
  }
  if (name != kSequenceArgAttrName && name != kLengthsArgAttrName &&
      name != kPackedSequenceArgAttrName)
    return op->emitError() << "argument " << argIndex << ": '" << name
                           << "' is not an argument attribute of the "
                              "linformer dialect (it has "
                           << kSequenceArgAttrName << ", "
                           << kLengthsArgAttrName << ", "
                           << kPackedSequenceArgAttrName << " and "
                           << kSequenceSplitArgAttrName << ")";
  if (!isa<UnitAttr>(attr.getValue()))
    return op->emitError() << "argument " << argIndex << ": '" << name
                           << "' must be a unit attribute, not "
                           << attr.getValue();
  return success();
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
                      int64_t l2Bytes, int64_t l3Bytes, int64_t cores,
                      int64_t fmaBits, int64_t l2BytesPerCycle) {
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
  if (fmaBits < 0 || fmaBits % 32 != 0)
    return emitError() << "fma_bits must be 0 (as wide as the vectors) or a "
                          "multiple of 32; got "
                       << fmaBits;
  if (l2BytesPerCycle < 1)
    return emitError() << "l2_bytes_per_cycle must be positive; got "
                       << l2BytesPerCycle;
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

LogicalResult CUDAScheduleAttr::verify(
    function_ref<InFlightDiagnostic()> emitError, int64_t tilesM,
    int64_t tilesN, int64_t split, int64_t warpsM, int64_t warpsN,
    int64_t chunk, int64_t buffers, bool asyncA, bool asyncB, bool naturalB,
    bool ldmatrixA, bool wgmma, int64_t inFlight, int64_t swizzle,
    bool /*pairStores*/) {
  auto powerOfTwo = [](int64_t v, int64_t most) {
    return v >= 1 && v <= most && llvm::isPowerOf2_64(v);
  };
  if (!powerOfTwo(tilesM, 8) || !powerOfTwo(tilesN, 32) ||
      (!wgmma && tilesN > 8))
    return emitError() << "warp_tiles [" << tilesM << ", " << tilesN
                       << "] must be powers of two, up to 8 (32 columns, "
                          "a warpgroup's m64n256, with wgmma)";
  if (!powerOfTwo(split, 64))
    return emitError() << "split must be a power of two from 1 to 64; got "
                       << split;
  if (inFlight != 0 && (!isInFlight(inFlight) || !wgmma || buffers < 3))
    return emitError() << "in_flight " << inFlight
                       << " must be 0, or 1 with wgmma and at least 3 "
                          "buffers (a batch of warpgroup MMAs left running "
                          "reads its buffer a chunk longer)";
  if (swizzle != 0 && (!isSwizzle(swizzle) || !wgmma))
    return emitError() << "swizzle " << swizzle
                       << " must be 0, or 32, 64 or 128 (bytes) with wgmma "
                          "(only warpgroup MMAs read swizzled buffers)";
  if (warpsM == 0 && warpsN == 0) {
    if (chunk != 0 || buffers != 1 || asyncA || asyncB || naturalB ||
        ldmatrixA || wgmma)
      return emitError() << "an unstaged schedule (warps = [0, 0]) has no "
                            "chunk, buffers, async copies, natural B, "
                            "ldmatrix or wgmma";
    return success();
  }
  if (warpsM < 1 || warpsN < 1 || warpsM * warpsN < 2)
    return emitError() << "warps [" << warpsM << ", " << warpsN
                       << "] must be at least 2 in all, or [0, 0] for none";
  if (chunk != 16 && chunk != 32 && chunk != 64)
    return emitError() << "chunk must be 16, 32 or 64; got " << chunk;
  if (buffers < 1 || buffers > 8)
    return emitError() << "buffers must be 1 to 8; got " << buffers;
  if ((asyncA || asyncB) && buffers < 2)
    return emitError() << "async copies need prefetching (buffers >= 2)";
  if (buffers > 2 && !(asyncA && asyncB))
    return emitError() << "more than 2 buffers need both operands copied "
                          "with cp.async";
  if (wgmma && (tilesM != 1 || warpsN != 1 || warpsM % 4 || !asyncA ||
                !asyncB || ldmatrixA))
    return emitError() << "wgmma takes one row tile a warp, warps [4 x "
                          "warpgroups, 1] and both operands by cp.async "
                          "(no ldmatrix)";
  return success();
}

LogicalResult CUDACoreScheduleAttr::verify(
    function_ref<InFlightDiagnostic()> emitError, int64_t warps, int64_t slots,
    bool staged, int64_t groups, bool ldmatrix, bool wgmma, int64_t tiles) {
  if (warps < 1 || warps > 32)
    return emitError() << "warps must be 1 to 32; got " << warps;
  if (slots != 16 && slots != 32 && slots != 64)
    return emitError() << "slots must be 16, 32 or 64; got " << slots;
  if (groups < 1)
    return emitError() << "groups must be >= 1; got " << groups;
  if (!staged && (groups != 1 || ldmatrix || wgmma))
    return emitError() << "an unstaged core has one group, no ldmatrix "
                          "and no wgmma";
  if (wgmma && (warps % 4 || ldmatrix))
    return emitError() << "wgmma takes warps in whole warpgroups (4) and "
                          "no ldmatrix";
  if (tiles != 1 && tiles != 2)
    return emitError() << "tiles (query tiles a warp) must be 1 or 2; got "
                       << tiles;
  if (wgmma && tiles != 1)
    return emitError() << "wgmma takes one query tile a warp (a "
                          "warpgroup's m64), not "
                       << tiles;
  return success();
}

LogicalResult CUDAF32CoreScheduleAttr::verify(
    function_ref<InFlightDiagnostic()> emitError, int64_t lanes,
    int64_t rows) {
  if (lanes != 1 && lanes != 4 && lanes != 8 && lanes != 16)
    return emitError() << "lanes (a query row's) must be 1, 4, 8 or 16; got "
                       << lanes;
  if (rows != 1 && rows != 2 && rows != 4)
    return emitError() << "rows (a thread's) must be 1, 2 or 4; got " << rows;
  return success();
}

int64_t WorkgroupMappingAttr::getMappingId() const { return getDim(); }
bool WorkgroupMappingAttr::isLinearMapping() const { return false; }
int64_t WorkgroupMappingAttr::getRelativeIndex() const { return getDim(); }

//===----------------------------------------------------------------------===//
// The dispatch plan
//===----------------------------------------------------------------------===//

/// `[a, b, ...]` (possibly empty).
static void printInts(AsmPrinter &p, ArrayRef<int64_t> values) {
  p << '[';
  llvm::interleaveComma(values, p);
  p << ']';
}

static ParseResult parseInts(AsmParser &parser,
                             SmallVectorImpl<int64_t> &values) {
  return parser.parseCommaSeparatedList(
      AsmParser::Delimiter::Square, [&]() -> ParseResult {
        int64_t v;
        if (parser.parseInteger(v))
          return failure();
        values.push_back(v);
        return success();
      });
}

void KernelLaunchAttr::print(AsmPrinter &p) const {
  p << '<';
  p.printAttributeWithoutType(getName());
  p << ", workgroups = " << getWorkgroups() << ", buffers = ";
  printInts(p, getBuffers());
  if (!getWrites().empty()) {
    p << ", writes = ";
    printInts(p, getWrites());
  }
  if (getGenerator())
    p << ", generator = " << getGenerator();
  if (!getGrid().empty()) {
    p << ", grid = ";
    printInts(p, getGrid());
    p << ", block = ";
    printInts(p, getBlock());
  }
  if (getShared() != 0)
    p << ", shared = " << getShared();
  if (getBlocksPerSm() != 1)
    p << ", blocks_per_sm = " << getBlocksPerSm();
  if (getSchedule())
    p << ", schedule = " << getSchedule();
  if (getShape())
    p << ", shape = " << getShape();
  if (getRows())
    p << ", rows = " << getRows();
  if (!getMaxLength().empty()) {
    p << ", max_length = ";
    printInts(p, getMaxLength());
  }
  if (getInitializer())
    p << ", initializer";
  if (getAllReduce() != 0)
    p << ", all_reduce = " << getAllReduce();
  if (getGather() != 0)
    p << ", gather = " << getGather();
  p << '>';
}

Attribute KernelLaunchAttr::parse(AsmParser &parser, Type) {
  MLIRContext *ctx = parser.getContext();
  std::string name;
  std::optional<int64_t> workgroups;
  std::optional<SmallVector<int64_t>> buffers;
  SmallVector<int64_t> writes, grid, block, maxLength;
  int64_t shared = 0, blocksPerSm = 1, allReduce = 0, gather = 0;
  CPUScheduleAttr schedule;
  KernelShapeAttr shape;
  TokenRowsAttr rows;
  StringAttr generator;
  bool initializer = false;
  if (parser.parseLess() || parser.parseString(&name))
    return {};
  while (succeeded(parser.parseOptionalComma())) {
    StringRef field;
    llvm::SMLoc loc = parser.getCurrentLocation();
    if (parser.parseKeyword(&field))
      return {};
    if (field == "initializer") {
      initializer = true;
      continue;
    }
    if (parser.parseEqual())
      return {};
    ParseResult r = success();
    if (field == "workgroups") {
      workgroups.emplace();
      r = parser.parseInteger(*workgroups);
    } else if (field == "buffers") {
      buffers.emplace();
      r = parseInts(parser, *buffers);
    } else if (field == "writes") {
      r = parseInts(parser, writes);
    } else if (field == "grid") {
      r = parseInts(parser, grid);
    } else if (field == "block") {
      r = parseInts(parser, block);
    } else if (field == "shared") {
      r = parser.parseInteger(shared);
    } else if (field == "blocks_per_sm") {
      r = parser.parseInteger(blocksPerSm);
    } else if (field == "generator") {
      r = parser.parseAttribute(generator);
    } else if (field == "schedule") {
      r = parser.parseAttribute(schedule);
    } else if (field == "shape") {
      r = parser.parseAttribute(shape);
    } else if (field == "rows") {
      r = parser.parseAttribute(rows);
    } else if (field == "max_length") {
      r = parseInts(parser, maxLength);
    } else if (field == "all_reduce") {
      r = parser.parseInteger(allReduce);
    } else if (field == "gather") {
      r = parser.parseInteger(gather);
    } else {
      parser.emitError(loc)
          << "a kernel of a dispatch plan has no field '" << field
          << "' (workgroups, buffers, writes, generator, "
             "grid, block, shared, blocks_per_sm, "
             "schedule, shape, rows, max_length, initializer, all_reduce, "
             "gather)";
      return {};
    }
    if (failed(r))
      return {};
  }
  if (parser.parseGreater())
    return {};
  if (!workgroups || !buffers) {
    parser.emitError(parser.getNameLoc())
        << "a kernel of a dispatch plan needs its workgroups and buffers";
    return {};
  }
  return parser.getChecked<KernelLaunchAttr>(
      ctx, StringAttr::get(ctx, name), *workgroups, *buffers, writes, schedule,
      shape, generator, grid, block, shared, blocksPerSm, rows, maxLength,
      initializer, allReduce, gather);
}

LogicalResult KernelLaunchAttr::verify(
    function_ref<InFlightDiagnostic()> emitError, StringAttr name,
    int64_t workgroups, ArrayRef<int64_t> buffers, ArrayRef<int64_t> writes,
    CPUScheduleAttr schedule, KernelShapeAttr, StringAttr generator,
    ArrayRef<int64_t> grid,
    ArrayRef<int64_t> block, int64_t shared, int64_t blocksPerSm,
    TokenRowsAttr rows, ArrayRef<int64_t> maxLength, bool initializer,
    int64_t allReduce, int64_t gather) {
  if (!name || name.getValue().empty())
    return emitError() << "a kernel of a dispatch plan needs a name";
  if (gather != 0 &&
      (allReduce == 0 || gather < 0 || buffers.size() != 2 ||
       writes.size() != 1 || writes[0] != buffers[1] ||
       buffers[0] == buffers[1]))
    return emitError() << "'" << name.getValue()
                       << "': an all-gather step (gather = " << gather
                       << ") is an all-reduce step with gather >= 1 blocks "
                          "and two buffers, [share, whole], writing the "
                          "whole";
  size_t stepBuffers = gather != 0 ? 2 : 1;
  if (allReduce != 0 &&
      (allReduce < 2 || workgroups != 1 || buffers.size() != stepBuffers ||
       (gather == 0 && writes != buffers) || schedule || generator ||
       !grid.empty() || rows || !maxLength.empty() || initializer))
    return emitError() << "'" << name.getValue()
                       << "': an all-reduce step sums one buffer over 2 or "
                          "more ranks: all_reduce >= 2, one workgroup, that "
                          "buffer in buffers and writes, and no schedule, "
                          "generator, launch, length rule or initializer";
  if (workgroups < 1)
    return emitError() << "kernel '" << name.getValue()
                       << "' has " << workgroups
                       << " workgroups; a kernel runs at least one";
  for (int64_t id : llvm::concat<const int64_t>(buffers, writes))
    if (id < 0)
      return emitError() << "kernel '" << name.getValue()
                         << "' names buffer " << id
                         << "; buffer ids are >= 0";
  for (int64_t id : writes)
    if (!llvm::is_contained(buffers, id))
      return emitError() << "kernel '" << name.getValue()
                         << "' writes buffer " << id
                         << ", which is not one it takes";
  if (grid.size() != block.size() || (!grid.empty() && grid.size() != 3))
    return emitError() << "kernel '" << name.getValue()
                       << "': a CUDA launch has a grid and a block of 3 "
                          "sizes each; got "
                       << grid.size() << " and " << block.size();
  for (int64_t d : llvm::concat<const int64_t>(grid, block))
    if (d < 1)
      return emitError() << "kernel '" << name.getValue()
                         << "': grid and block sizes must be positive";
  if (shared < 0 || blocksPerSm < 1)
    return emitError() << "kernel '" << name.getValue()
                       << "': shared bytes must be >= 0 and blocks_per_sm "
                          ">= 1";
  if (rows) {
    int64_t total = 1;
    for (int64_t g : rows.getGrid().asArrayRef())
      total *= g;
    if (total != workgroups)
      return emitError() << "kernel '" << name.getValue()
                         << "': its length rule enumerates " << total
                         << " workgroups, but the kernel has " << workgroups;
    if (!grid.empty() && (grid[1] != 1 || grid[2] != 1))
      return emitError() << "kernel '" << name.getValue()
                         << "': a CUDA length rule numbers block x, so the "
                            "grid must be [workgroups, 1, 1]";
  }
  if (!maxLength.empty() &&
      (maxLength.size() != 2 || maxLength[0] < 0 ||
       maxLength[1] <= maxLength[0]))
    return emitError() << "kernel '" << name.getValue()
                       << "': max_length must be [lo, hi] with 0 <= lo < hi "
                          "(launched when lo < the longest length <= hi)";
  if (initializer && (rows || !maxLength.empty()))
    return emitError() << "kernel '" << name.getValue()
                       << "': an initializer runs once per session, for no "
                          "run's lengths; it takes no length rule or length "
                          "variant";
  return success();
}

LogicalResult TokenRowsAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                    DenseI64ArrayAttr grid, int64_t batch,
                                    int64_t row, int64_t tile) {
  if (!grid)
    return emitError() << "token_rows: needs a grid";
  int64_t rank = static_cast<int64_t>(grid.size());
  if (llvm::any_of(grid.asArrayRef(), [](int64_t g) { return g < 1; }))
    return emitError() << "token_rows: every grid size must be >= 1";
  if (batch < 0 || row <= batch || row >= rank)
    return emitError() << "token_rows: needs 0 <= batch < row < " << rank
                       << " (the grid's rank), got batch = " << batch
                       << ", row = " << row;
  if (tile < 1)
    return emitError() << "token_rows: a row tile holds at least one token, "
                          "got tile = "
                       << tile;
  return success();
}

LogicalResult
TokenBoundAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                       int64_t token, int64_t batch, int64_t part,
                       int64_t perPart, bool masked, int64_t perStep) {
  if (token < 0 || batch < 0 || token == batch)
    return emitError() << "token_bound: needs two different loops, got token "
                          "= "
                       << token << ", batch = " << batch;
  if (part < -1 || part == token || part == batch)
    return emitError() << "token_bound: the part loop must be a third loop "
                          "(or none, -1), got part = "
                       << part;
  if (part >= 0 && perPart < 1)
    return emitError() << "token_bound: a part holds at least one token, got "
                          "per_part = "
                       << perPart;
  if (part < 0 && perPart != 0)
    return emitError() << "token_bound: per_part describes parts, but there "
                          "is no part loop";
  if (perStep < 1 || (perStep > 1 && part >= 0))
    return emitError() << "token_bound: a step covers at least one token, "
                          "and steps of several (per_step) take no parts, "
                          "got per_step = "
                       << perStep << ", part = " << part;
  return success();
}

TokenBoundAttr
TokenBoundAttr::renumbered(function_ref<int64_t(int64_t)> position) const {
  return get(getContext(), position(getToken()), position(getBatch()),
             hasParts() ? position(getPart()) : getPart(), getPerPart(),
             getMasked(), getPerStep());
}

KernelLaunchAttr KernelLaunchAttr::withBuffers(ArrayRef<int64_t> buffers) const {
  return get(getContext(), getName(), getWorkgroups(), buffers, getWrites(),
             getSchedule(), getShape(), getGenerator(), getGrid(), getBlock(),
             getShared(), getBlocksPerSm(), getRows(), getMaxLength(),
             getInitializer(), getAllReduce(), getGather());
}

KernelLaunchAttr KernelLaunchAttr::asInitializer() const {
  return get(getContext(), getName(), getWorkgroups(), getBuffers(),
             getWrites(), getSchedule(), getShape(), getGenerator(), getGrid(),
             getBlock(), getShared(), getBlocksPerSm(), getRows(),
             getMaxLength(), /*initializer=*/true, getAllReduce(), getGather());
}

KernelLaunchAttr KernelLaunchAttr::withHalide(int64_t workgroups,
                                              ArrayRef<int64_t> writes) const {
  // The CPU schedule chose the kernel's boundaries, not its code.
  return get(getContext(), getName(), workgroups, getBuffers(), writes,
             CPUScheduleAttr(), getShape(),
             StringAttr::get(getContext(), "halide"), getGrid(), getBlock(),
             getShared(), getBlocksPerSm(),
             /*rows=*/TokenRowsAttr(), /*maxLength=*/{}, getInitializer(),
             /*allReduce=*/0, /*gather=*/0);
}

int64_t KernelLaunchAttr::threads() const {
  int64_t threads = 1;
  for (int64_t d : getBlock())
    threads *= d;
  return threads;
}

void DispatchPlanAttr::print(AsmPrinter &p) const {
  p << "<kernels = [";
  llvm::interleaveComma(getKernels(), p,
                        [&](KernelLaunchAttr k) { p.printAttribute(k); });
  p << "], intermediates = ";
  printInts(p, getIntermediates());
  if (!getSequences().empty()) {
    p << ", sequences = ";
    printInts(p, getSequences());
  }
  if (getPackedSequences())
    p << ", packed_sequences";
  p << '>';
}

Attribute DispatchPlanAttr::parse(AsmParser &parser, Type) {
  SmallVector<KernelLaunchAttr> kernels;
  SmallVector<int64_t> intermediates;
  if (parser.parseLess() || parser.parseKeyword("kernels") ||
      parser.parseEqual() ||
      parser.parseCommaSeparatedList(AsmParser::Delimiter::Square,
                                     [&]() -> ParseResult {
                                       KernelLaunchAttr k;
                                       if (parser.parseAttribute(k))
                                         return failure();
                                       kernels.push_back(k);
                                       return success();
                                     }) ||
      parser.parseComma() || parser.parseKeyword("intermediates") ||
      parser.parseEqual() || parseInts(parser, intermediates))
    return {};
  bool packed = false;
  SmallVector<int64_t> sequences;
  // Then `sequences = [...]` and `packed_sequences`, each optional, in
  // that order.
  if (succeeded(parser.parseOptionalComma())) {
    bool more = true;
    if (succeeded(parser.parseOptionalKeyword("sequences"))) {
      if (parser.parseEqual() || parseInts(parser, sequences))
        return {};
      more = succeeded(parser.parseOptionalComma());
    }
    if (more) {
      if (parser.parseKeyword("packed_sequences"))
        return {};
      packed = true;
    }
  }
  if (parser.parseGreater())
    return {};
  return parser.getChecked<DispatchPlanAttr>(parser.getContext(), kernels,
                                             intermediates, packed, sequences);
}

LogicalResult
DispatchPlanAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                         ArrayRef<KernelLaunchAttr> kernels,
                         ArrayRef<int64_t> intermediates, bool,
                         ArrayRef<int64_t> sequences) {
  for (auto [i, bytes] : llvm::enumerate(intermediates))
    if (bytes < 0)
      return emitError() << "intermediate " << i << " has " << bytes
                         << " bytes; sizes are >= 0";
  for (auto [i, id] : llvm::enumerate(sequences))
    if (id < 0 || (i > 0 && id <= sequences[i - 1]))
      return emitError() << "sequence buffers must be argument ids >= 0 in "
                            "increasing order, but entry "
                         << i << " is " << id;
  llvm::StringSet<> names;
  for (KernelLaunchAttr k : kernels)
    if (!names.insert(k.getName().getValue()).second)
      return emitError() << "kernel '" << k.getName().getValue()
                         << "' appears twice in the dispatch plan";
  return success();
}

bool mlir::linformer::isWeightArgument(FunctionOpInterface fn, unsigned index) {
  bool marks = false;
  for (unsigned i = 0; i < fn.getNumArguments(); ++i)
    marks |= bool(fn.getArgAttr(i, kSequenceArgAttrName));
  auto type = dyn_cast<ShapedType>(fn.getArgument(index).getType());
  return marks && type && isa<FloatType>(type.getElementType()) &&
         !fn.getArgAttr(index, kSequenceArgAttrName) &&
         !fn.getArgAttr(index, kLengthsArgAttrName);
}

SmallVector<int64_t>
mlir::linformer::sequenceArguments(FunctionOpInterface fn) {
  SmallVector<int64_t> ids;
  for (unsigned i = 0; i < fn.getNumArguments(); ++i)
    if (fn.getArgAttr(i, kSequenceArgAttrName))
      ids.push_back(int64_t(i));
  return ids;
}

DispatchPlanAttr mlir::linformer::getDispatchPlan(Operation *entry) {
  return entry ? entry->getAttrOfType<DispatchPlanAttr>(kDispatchPlanAttrName)
               : DispatchPlanAttr();
}

void mlir::linformer::setDispatchPlan(Operation *entry, DispatchPlanAttr plan) {
  entry->setAttr(kDispatchPlanAttrName, plan);
}

LogicalResult KernelShapeAttr::verify(
    function_ref<InFlightDiagnostic()> emitError, StringAttr key,
    StringAttr kind, DenseI64ArrayAttr loops, StringAttr iterators,
    DenseI32ArrayAttr outputDims, int64_t flops, StringAttr source,
    int64_t coreK, int64_t mLoop, int64_t nLoop, DenseI32ArrayAttr columnLoops,
    CPUScheduleAttr, KernelShapeAttr splitOf, CPUScheduleAttr splitSchedule,
    bool, StringAttr engine) {
  if (!key || key.getValue().empty())
    return emitError() << "a kernel shape needs its key";
  if (engine && !llvm::is_contained(
                    ArrayRef<StringRef>{"fma", "dot", "dot, emulated", "amx",
                                        "amx, emulated"},
                    engine.getValue()))
    return emitError() << "engine '" << engine.getValue()
                       << "' is none of fma, dot, amx (each may be "
                          "\", emulated\" but fma)";
  if (!llvm::is_contained(ArrayRef<StringRef>{"contraction", "attention_core",
                                              "other"},
                          kind.getValue()))
    return emitError() << "kernel kind '" << kind.getValue()
                       << "' is not contraction, attention_core or other";
  int64_t rank = loops.size();
  if (static_cast<int64_t>(iterators.size()) != rank ||
      iterators.getValue().find_first_not_of("pR") != StringRef::npos)
    return emitError() << "iterators '" << iterators.getValue()
                       << "' must be one p (parallel) or R (reduction) per "
                          "loop; there are "
                       << rank << " loops";
  auto inLoops = [&](int64_t d) { return d >= 0 && d < rank; };
  for (int32_t d : outputDims.asArrayRef())
    if (!inLoops(d))
      return emitError() << "output dim " << d << " is not one of the "
                         << rank << " loops";
  if (columnLoops)
    for (int32_t d : columnLoops.asArrayRef())
      if (!inLoops(d))
        return emitError() << "column loop " << d << " is not one of the "
                           << rank << " loops";
  if ((mLoop != -1 && !inLoops(mLoop)) || (nLoop != -1 && !inLoops(nLoop)))
    return emitError() << "m_loop and n_loop are loops (0 to " << rank - 1
                       << ") or -1";
  if (flops < 0 || coreK < 0)
    return emitError() << "flops and core_k must be >= 0";
  if (!source)
    return emitError() << "a kernel shape needs its source";
  if (static_cast<bool>(splitOf) != static_cast<bool>(splitSchedule))
    return emitError() << "split_of and split_schedule go together (the "
                          "kernel a part was split from, and its schedule)";
  return success();
}
