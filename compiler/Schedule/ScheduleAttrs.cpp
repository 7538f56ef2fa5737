//===- ScheduleAttrs.cpp - schedules and targets in the IR ------*- C++ -*-===//
//
// See ScheduleAttrs.h.
//
//===----------------------------------------------------------------------===//

#include "compiler/Schedule/ScheduleAttrs.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/TargetParser/Host.h"

#include "compiler/Analysis/Contractions.h"
#include "compiler/Target/CPU/CPUTarget.h"

#include "dialect/IR/LinformerOps.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/BuiltinTypes.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <iterator>

using namespace mlir;
using namespace mlir::linformer;
namespace sched = ::linformer::schedule;

sched::CPUTarget mlir::linformer::hostCPUTarget(StringRef cpu,
                                                StringRef features) {
  sched::CPUTarget t;
  CPUTargetOptions requested;
  requested.cpu = cpu.str();
  requested.features = features.str();
  CPUTargetOptions resolved = resolveCPUTarget(requested);
  t.cpu = resolved.cpu;
  t.features = resolved.features;
  sched::deriveISA(t);
  sched::deriveMicroarchitecture(t);
  // The host's caches, unless a CPU other than the host's is named and the
  // table knows it: an artifact cross-compiled for znver3 then gets Zen 3's
  // 512 KiB L2 whatever machine compiles it. The core count stays the
  // host's (the threads the runtime is likely to get).
  sched::readHostCaches(t);
  if (t.cpu != llvm::sys::getHostCPUName())
    sched::knownCPUCaches(t.cpu, t);
  return t;
}

CPUTargetAttr mlir::linformer::toAttr(MLIRContext *ctx,
                                      const sched::CPUTarget &t) {
  return CPUTargetAttr::get(ctx, t.cpu, t.features, t.isa, t.vectorBits,
                            t.vectorRegisters, t.fmaUnits, t.fmaLatency,
                            t.l1Bytes, t.l2Bytes, t.l3Bytes, t.cores, t.fmaBits,
                            t.l2BytesPerCycle);
}

sched::CPUTarget mlir::linformer::fromAttr(CPUTargetAttr a) {
  sched::CPUTarget t;
  t.cpu = a.getCpu().str();
  t.features = a.getFeatures().str();
  t.isa = a.getIsa().str();
  t.vectorBits = a.getVectorBits();
  t.vectorRegisters = a.getVectorRegisters();
  t.fmaUnits = a.getFmaUnits();
  t.fmaLatency = a.getFmaLatency();
  t.l1Bytes = a.getL1Bytes();
  t.l2Bytes = a.getL2Bytes();
  t.l3Bytes = a.getL3Bytes();
  t.cores = a.getCores();
  t.fmaBits = a.getFmaBits();
  t.l2BytesPerCycle = a.getL2BytesPerCycle();
  return t;
}

sched::CPUTarget mlir::linformer::cpuTargetOf(Operation *op) {
  auto module = isa<ModuleOp>(op) ? cast<ModuleOp>(op)
                                  : op->getParentOfType<ModuleOp>();
  if (module)
    if (auto attr = module->getAttrOfType<CPUTargetAttr>(kTargetAttrName))
      return fromAttr(attr);
  return hostCPUTarget();
}

BF16EngineChoice mlir::linformer::bf16EngineFor(BF16Dot dot,
                                               const sched::CPUTarget &target,
                                               bool f16) {
  sched::MatrixEngines engines = sched::matrixEngines(target);
  if (f16) {
    switch (dot) {
    case BF16Dot::Auto:
      return engines.amxFP16 ? BF16EngineChoice{BF16Engine::AMX, true}
                             : BF16EngineChoice{};
    case BF16Dot::Emulate:
    case BF16Dot::AMX:
      return BF16EngineChoice{BF16Engine::AMX, engines.amxFP16};
    case BF16Dot::Off:
      return BF16EngineChoice{};
    }
  }
  switch (dot) {
  case BF16Dot::Auto:
    // AMX where the CPU has it: on a Xeon with AMX (2026-12-05) the bf16
    // encoder took 141 ms on AMX tiles, 527 ms with vdpbf16ps (which runs
    // at half the f32 FMA rate there).
    if (engines.amxBF16)
      return BF16EngineChoice{BF16Engine::AMX, true};
    return engines.avx512BF16 ? BF16EngineChoice{BF16Engine::Dot, true}
                              : BF16EngineChoice{};
  case BF16Dot::Emulate:
    return BF16EngineChoice{BF16Engine::Dot, engines.avx512BF16};
  case BF16Dot::AMX:
    return BF16EngineChoice{BF16Engine::AMX, engines.amxBF16};
  case BF16Dot::Off:
    return BF16EngineChoice{};
  }
  llvm_unreachable("a bf16-dot value without an engine");
}

FailureOr<BF16EngineChoice>
mlir::linformer::bf16EngineFor(Operation *op, StringRef option, StringRef dot,
                               const sched::CPUTarget &target, bool f16) {
  std::string list;
  const auto &values = sched::kBF16DotSpellings;
  for (size_t i = 0; i < std::size(values); ++i) {
    if (dot == values[i].second)
      return bf16EngineFor(values[i].first, target, f16);
    list += i == 0 ? "" : i + 1 == std::size(values) ? " or " : ", ";
    list += values[i].second;
  }
  return op->emitError() << "unknown " << option << " '" << dot
                         << "': expected " << list;
}

std::string mlir::linformer::bf16EngineName(BF16EngineChoice choice) {
  switch (choice.engine) {
  case BF16Engine::FMA:
    return "fma";
  case BF16Engine::Dot:
    return choice.native ? "dot" : "dot, emulated";
  case BF16Engine::AMX:
    return choice.native ? "amx" : "amx, emulated";
  }
  return "fma";
}

CPUScheduleAttr mlir::linformer::toAttr(MLIRContext *ctx,
                                        const sched::CPUKernelSchedule &s) {
  return CPUScheduleAttr::get(ctx, s.workgroup, s.rows, s.columns, s.reduction,
                              s.pack, s.split);
}

sched::CPUKernelSchedule mlir::linformer::fromAttr(CPUScheduleAttr a) {
  sched::CPUKernelSchedule s;
  s.workgroup.assign(a.getWorkgroup().begin(), a.getWorkgroup().end());
  s.rows = a.getRows();
  s.columns = a.getColumns();
  s.reduction = a.getReduction();
  s.pack = a.getPack();
  s.split = a.getSplit();
  return s;
}

/// True if the generic's body multiplies (a contraction, possibly masked or
/// with a selected operand), as opposed to a pure sum or max.
static bool bodyMultiplies(linalg::LinalgOp op) {
  bool mul = false;
  op.getBlock()->walk([&](Operation *inner) {
    if (inner->getName().getStringRef() == "arith.mulf")
      mul = true;
  });
  return mul;
}

FailureOr<sched::KernelShape> mlir::linformer::analyzeRoot(Operation *root) {
  sched::KernelShape shape;
  if (auto engine = root->getAttrOfType<StringAttr>(kBF16EngineAttrName))
    shape.engine = engine.str();
  if (auto core = dyn_cast<AttentionCoreOp>(root)) {
    auto result = cast<RankedTensorType>(core.getResult().getType());
    auto key = cast<RankedTensorType>(core.getKey().getType());
    if (!result.hasStaticShape() || !key.hasStaticShape())
      return root->emitOpError(
          "needs static shapes to be scheduled (got a dynamic dimension)");
    shape.kind = sched::KernelKind::AttentionCore;
    shape.ranges.assign(result.getShape().begin(), result.getShape().end());
    shape.reduction.assign(shape.ranges.size(), false);
    for (unsigned i = 0; i < shape.ranges.size(); ++i)
      shape.outputDims.push_back(i);
    shape.coreK = key.getDimSize(2);
    shape.elementBytes = (result.getElementTypeBitWidth() + 7) / 8;
    auto q = cast<RankedTensorType>(core.getQ().getType());
    double b = result.getDimSize(0), h = result.getDimSize(1),
           n = result.getDimSize(2), dv = result.getDimSize(3),
           d = q.getDimSize(3), k = shape.coreK;
    shape.flops = 2 * b * h * n * k * d + 2 * b * h * n * k * dv;
    return shape;
  }
  auto linalgOp = dyn_cast<linalg::LinalgOp>(root);
  if (!linalgOp)
    return root->emitOpError("is not a kernel root this compiler can "
                             "schedule (expected a linalg op or "
                             "linformer.attention_core)");
  SmallVector<int64_t> ranges = linalgOp.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic))
    return root->emitOpError(
        "needs static shapes to be scheduled (got a dynamic dimension)");
  shape.ranges.assign(ranges.begin(), ranges.end());
  bool anyReduction = false;
  for (utils::IteratorType it : linalgOp.getIteratorTypesArray()) {
    shape.reduction.push_back(it == utils::IteratorType::reduction);
    anyReduction |= shape.reduction.back();
  }
  if (root->getNumResults() > 0) {
    AffineMap outMap =
        linalgOp.getIndexingMapMatchingResult(root->getResult(0));
    for (AffineExpr e : outMap.getResults())
      if (auto dim = dyn_cast<AffineDimExpr>(e))
        shape.outputDims.push_back(dim.getPosition());
  }
  // A result whose padding no one reads (E'; decomposition marks it only
  // where the lengths are an argument): its token loop.
  if (auto unread =
          root->getAttrOfType<DenseI64ArrayAttr>(kUnreadPaddingAttrName);
      unread && unread.size() == 2) {
    int64_t dim = unread[1];
    if (dim >= 0 && dim < static_cast<int64_t>(shape.outputDims.size()))
      shape.tokenLoop = shape.outputDims[dim];
  }
  if (!linalgOp->getOperands().empty())
    shape.elementBytes =
        (getElementTypeOrSelf(linalgOp->getOperand(0).getType())
             .getIntOrFloatBitWidth() +
         7) /
        8;
  int n = shape.nDim();
  bool innerParallel = n >= 0 && !shape.reduction[n];
  if (anyReduction && innerParallel && linalgOp.getNumDpsInputs() >= 1)
    shape.kind = sched::KernelKind::Contraction;
  if (std::optional<RegisterTileDims> dims = registerTileDims(linalgOp)) {
    shape.kind = sched::KernelKind::Contraction;
    shape.mLoop = dims->rows;
    shape.nLoop = dims->columns;
    shape.columnLoops.assign(dims->columnSide.begin(), dims->columnSide.end());
  }
  if (anyReduction && bodyMultiplies(linalgOp)) {
    double product = 1;
    for (int64_t r : ranges)
      product *= static_cast<double>(r);
    shape.flops = 2 * product;
  }
  return shape;
}

std::string mlir::linformer::shapeKey(Operation *root,
                                      const sched::KernelShape &shape) {
  std::string iterators = sched::iteratorString(shape);
  std::string ranges;
  for (size_t i = 0; i < shape.ranges.size(); ++i)
    ranges += (i ? "x" : "") + std::to_string(shape.ranges[i]);
  // What distinguishes roots of equal loops: the operand maps and the body
  // (a projection and a pooling can share loops), the attention core's k,
  // mask and value width.
  std::string text;
  llvm::raw_string_ostream os(text);
  os << root->getName() << ";";
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(root)) {
    for (AffineMap m : linalgOp.getIndexingMapsArray())
      os << m << ";";
    linalgOp.getBlock()->walk(
        [&](Operation *inner) { os << inner->getName() << ","; });
  } else if (auto core = dyn_cast<AttentionCoreOp>(root)) {
    os << core.getKey().getType() << core.getValue().getType()
       << (core.getKeyMask() ? "masked" : "");
  }
  // A weight packed once per session is a different kernel to schedule;
  // so are bf16 products on another engine.
  if (shape.streamedWeight)
    os << "streamed-weight;";
  if (!shape.engine.empty())
    os << "engine " << shape.engine << ";";
  // The core's destination is left out: the ranges and q's type fix it.
  auto core = dyn_cast<AttentionCoreOp>(root);
  for (OpOperand &operand : root->getOpOperands())
    if (!core || &operand != &core.getInitMutable())
      os << getElementTypeOrSelf(operand.get().getType()) << ",";
  uint64_t hash = 14695981039346656037ull;
  for (unsigned char c : text)
    hash = (hash ^ c) * 1099511628211ull;
  std::string key = std::string(kernelKindName(shape.kind)) + "/" + iterators +
                    "/" + ranges + "/" + llvm::utohexstr(hash & 0xffffff, true);
  if (shape.kind == sched::KernelKind::AttentionCore)
    key = std::string(kernelKindName(shape.kind)) + "/k" +
          std::to_string(shape.coreK) + "/" + ranges + "/" +
          llvm::utohexstr(hash & 0xffffff, true);
  return key;
}

bool mlir::linformer::kernelRecord(KernelShapeAttr info,
                                   CPUScheduleAttr schedule,
                                   const sched::CPUTarget &target,
                                   sched::ScheduleRecord &out) {
  if (!info || !schedule)
    return false;
  out.key = info.getKey().str();
  sched::KernelShape &shape = out.shape;
  shape.kind = sched::KernelKind::Other;
  sched::parseKernelKind(info.getKind().getValue(), shape.kind);
  shape.ranges.assign(info.getLoops().asArrayRef().begin(),
                      info.getLoops().asArrayRef().end());
  for (char c : info.getIterators().getValue())
    shape.reduction.push_back(c == 'R');
  shape.reduction.resize(shape.ranges.size(), false);
  shape.flops = static_cast<double>(info.getFlops());
  out.schedule = fromAttr(schedule);
  out.source = info.getSource().str();
  if (CPUScheduleAttr model = info.getModelSchedule()) {
    out.hasModelSchedule = true;
    out.modelSchedule = fromAttr(model);
  }
  shape.outputDims.assign(info.getOutputDims().asArrayRef().begin(),
                          info.getOutputDims().asArrayRef().end());
  if (info.getCoreK() > 0)
    shape.coreK = info.getCoreK();
  if (info.getMLoop() >= 0)
    shape.mLoop = info.getMLoop();
  if (info.getNLoop() >= 0)
    shape.nLoop = info.getNLoop();
  if (DenseI32ArrayAttr c = info.getColumnLoops())
    shape.columnLoops.assign(c.asArrayRef().begin(), c.asArrayRef().end());
  shape.streamedWeight = info.getStreamedWeight();
  if (StringAttr engine = info.getEngine())
    shape.engine = engine.str();
  out.estimate = sched::estimate(target, shape, out.schedule);
  out.workgroups = out.estimate.workgroups;
  return true;
}

void mlir::linformer::attachSchedule(Operation *root,
                                     const sched::KernelShape &shape,
                                     StringRef key,
                                     const sched::CPUKernelSchedule &chosen,
                                     const sched::CPUKernelSchedule &model,
                                     StringRef source,
                                     KernelShapeAttr splitOf,
                                     CPUScheduleAttr splitSchedule) {
  MLIRContext *ctx = root->getContext();
  std::string iterators = sched::iteratorString(shape);
  Builder b(ctx);
  auto info = KernelShapeAttr::get(
      ctx, b.getStringAttr(key),
      b.getStringAttr(sched::kernelKindName(shape.kind)),
      b.getDenseI64ArrayAttr(shape.ranges), b.getStringAttr(iterators),
      b.getDenseI32ArrayAttr(shape.outputDims),
      static_cast<int64_t>(shape.flops), b.getStringAttr(source),
      std::max<int64_t>(shape.coreK, 0), shape.mLoop < 0 ? -1 : shape.mLoop,
      shape.nLoop < 0 ? -1 : shape.nLoop,
      shape.columnLoops.empty() ? DenseI32ArrayAttr()
                                : b.getDenseI32ArrayAttr(shape.columnLoops),
      chosen != model ? toAttr(ctx, model) : CPUScheduleAttr(), splitOf,
      splitSchedule, shape.streamedWeight,
      shape.engine.empty() ? StringAttr() : b.getStringAttr(shape.engine));
  root->setAttr(kKernelInfoAttrName, info);
  root->setAttr(kScheduleAttrName, toAttr(ctx, chosen));
}

LogicalResult mlir::linformer::readScheduleFile(
    ModuleOp module, StringRef path,
    std::map<std::string, sched::ScheduleRecord> &out) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer)
    return emitError(module.getLoc())
           << "cannot read the schedule file '" << path
           << "': " << buffer.getError().message();
  sched::ScheduleFile file;
  if (std::string err =
          sched::parseScheduleFile((*buffer)->getBuffer().str(), file);
      !err.empty())
    return emitError(module.getLoc()) << path << ": " << err;
  for (sched::ScheduleRecord &r : file.kernels)
    out[r.key] = r;
  return success();
}

StringRef mlir::linformer::sourceOfRecord(const sched::ScheduleRecord &r) {
  return StringRef(r.source).starts_with("tuned") ? "tuned" : "file";
}

bool mlir::linformer::isPanelsRecord(const sched::ScheduleRecord &r) {
  return StringRef(r.source).ends_with(", panels");
}

bool mlir::linformer::isSplitPartRecord(const sched::ScheduleRecord &r) {
  return StringRef(r.source).contains(", split ");
}

sched::CPUKernelSchedule
mlir::linformer::scheduleOfRecord(const sched::ScheduleRecord &record,
                                  const sched::CPUKernelSchedule &model) {
  sched::CPUKernelSchedule s = record.schedule;
  if (s.workgroup.empty())
    s.workgroup = model.workgroup;
  return s;
}

LogicalResult mlir::linformer::checkScheduleFits(
    Operation *root, const sched::KernelShape &shape,
    const sched::CPUKernelSchedule &schedule, StringRef key,
    StringRef source) {
  if (std::string err = sched::validate(shape, schedule); !err.empty())
    return root->emitOpError() << "schedule (" << source << ") for kernel '"
                               << key << "' does not fit: " << err;
  return success();
}
