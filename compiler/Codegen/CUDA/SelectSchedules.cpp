//===- SelectSchedules.cpp - CUDA contractions and cores -*- C++ -*-===//
//
// The CUDA pipeline's schedule selection (see Passes.td), the step before
// linformer-cuda-tensor-core-contractions, as IREE's lowering-config
// selection precedes its LLVMGPU pipeline: each contraction the warp tiles
// map gets a `#linformer.cuda_schedule` (warp tiles, split-K, the staged
// block's warps, chunk and buffers, cp.async, ldmatrix, wgmma) chosen from
// the options the pipeline derives from the CUDA target (Contractions.h,
// selectPlan), and a token contraction the split-K of shorter runs
// (`linformer.cuda_length_splits`, lengthSplits). A contraction left
// without one stays on the plain path. Each attention core on tensor cores
// gets a `#linformer.cuda_core_schedule` (CoreSchedule.h), which
// linformer-cuda-expand-attention-core applies.
// A schedule file (`schedule-file`, as --print-schedule writes it) replaces
// the choice for contractions and cores of the same key, length splits
// included; the function records every contraction's key, schedule, source
// and length splits, then every core's, for --print-schedule.
//
//===----------------------------------------------------------------------===//

#include "compiler/Codegen/CUDA/Contractions.h"
#include "compiler/Codegen/CUDA/CoreSchedule.h"
#include "compiler/Codegen/CUDA/MmaUtils.h"
#include "compiler/Codegen/CUDA/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::linformer {
#define GEN_PASS_DEF_LINFORMERCUDASELECTSCHEDULESPASS
#include "compiler/Codegen/CUDA/Passes.h.inc"
} // namespace mlir::linformer

using namespace mlir;
using namespace mlir::linformer;
namespace cuda = mlir::linformer::cuda;

namespace {

struct CUDASelectSchedulesPass
    : mlir::linformer::impl::LinformerCUDASelectSchedulesPassBase<
          CUDASelectSchedulesPass> {
  using Base::Base;

  void runOnOperation() override {
    if (failed(cuda::checkPrecision(getOperation(), precision)))
      return signalPassFailure();
    if (!llvm::is_contained({1, 2, 4, 8}, int64_t(warpTilesM)) ||
        !llvm::is_contained({1, 2, 4, 8}, int64_t(warpTilesN))) {
      getOperation().emitError()
          << "warp-tiles-m and warp-tiles-n must be 1, 2, 4 or 8 (mma tiles "
             "a warp computes along m and n), not "
          << int64_t(warpTilesM) << " and " << int64_t(warpTilesN);
      return signalPassFailure();
    }
    if (!llvm::is_contained({16, 32, 64}, int64_t(chunkK))) {
      getOperation().emitError()
          << "chunk-k must be 16, 32 or 64 (k values a staged block copies "
             "at a time), not "
          << int64_t(chunkK);
      return signalPassFailure();
    }
    if (asyncStages < 2 || asyncStages > 8) {
      getOperation().emitError()
          << "async-stages must be 2 to 8 (shared buffers of a staged "
             "contraction copied with cp.async), not "
          << int64_t(asyncStages);
      return signalPassFailure();
    }
    if (!llvm::is_contained({16, 32, 64}, int64_t(coreSlots))) {
      getOperation().emitError()
          << "core-slots " << int64_t(coreSlots)
          << " is not a step the tensor-core core takes (16, 32 or 64)";
      return signalPassFailure();
    }
    if (coreTiles != 1 && coreTiles != 2) {
      getOperation().emitError()
          << "core-tiles must be 1 or 2 (query tiles a warp), not "
          << int64_t(coreTiles);
      return signalPassFailure();
    }
    if (coreWarps < 1 || coreWarps > 32 || coreGroups < 1) {
      getOperation().emitError()
          << "core-warps must be 1 to 32 and core-groups at least 1, not "
          << int64_t(coreWarps) << " and " << int64_t(coreGroups);
      return signalPassFailure();
    }
    cuda::SelectionOptions o;
    o.precision = precision;
    o.exact = exact;
    o.warpTilesM = warpTilesM;
    o.warpTilesN = warpTilesN;
    o.splitKWarps = splitKWarps;
    o.sharedBytes = sharedBytes;
    o.blockWarps = blockWarps;
    o.chunkK = chunkK;
    o.prefetch = prefetch;
    o.ldmatrix = ldmatrix;
    o.ldmatrixTrans = ldmatrixTrans;
    o.asyncCopy = asyncCopy;
    o.asyncStages = asyncStages;
    o.wgmma = wgmma;
    o.pairStores = pairStores;
    if (!CUDAScheduleAttr::isInFlight(wgmmaInFlight)) {
      getOperation().emitError()
          << "wgmma-in-flight must be 0 or 1 (batches of warpgroup MMAs "
             "left running past a chunk), not "
          << int64_t(wgmmaInFlight);
      return signalPassFailure();
    }
    o.wgmmaInFlight = wgmmaInFlight;
    if (!CUDAScheduleAttr::isSwizzle(wgmmaSwizzle)) {
      getOperation().emitError()
          << "wgmma-swizzle must be 0, 32, 64 or 128 (bytes), not "
          << int64_t(wgmmaSwizzle);
      return signalPassFailure();
    }
    o.wgmmaSwizzle = wgmmaSwizzle;
    if (!CUDAScheduleAttr::isWgmmaTileN(wgmmaTileN)) {
      getOperation().emitError()
          << "wgmma-tile-n must be 64, 128 or 256, not " << int64_t(wgmmaTileN);
      return signalPassFailure();
    }
    o.wgmmaTileN = wgmmaTileN;
    std::map<std::string, cuda::ScheduleFileRecord> overrides;
    Location loc = getOperation().getLoc();
    if (!scheduleFile.empty() &&
        failed(cuda::readCUDAScheduleFile(loc, scheduleFile, overrides)))
      return signalPassFailure();
    MLIRContext *ctx = &getContext();
    getOperation()->removeAttr(mlir::linformer::kCUDASchedulesAttrName);
    SmallVector<Attribute> records;
    WalkResult walk = getOperation().walk([&](linalg::GenericOp op) {
      std::string key = cuda::contractionKey(op);
      mlir::linformer::CUDAScheduleAttr schedule;
      StringRef source = "selected";
      SmallVector<int64_t> splits;
      if (auto it = overrides.find(key); it != overrides.end()) {
        schedule = cast<mlir::linformer::CUDAScheduleAttr>(it->second.schedule);
        std::string why;
        FailureOr<cuda::Plan> p =
            cuda::planOf(op, schedule, precision, exact, why);
        if (succeeded(p))
          why = withinOptions(*p, o);
        if (succeeded(p) && why.empty() && !it->second.lengthSplits.empty()) {
          why = cuda::checkLengthSplits(op, *p, it->second.lengthSplits,
                                        o.tileK());
          splits = it->second.lengthSplits;
        }
        if (!why.empty()) {
          op.emitOpError() << "cannot take the schedule of " << scheduleFile
                           << ", kernels[" << it->second.index
                           << "]: " << why;
          return WalkResult::interrupt();
        }
        it->second.used = true;
        source = "file";
      } else {
        FailureOr<cuda::Plan> p = cuda::selectPlan(op, o);
        if (failed(p))
          return WalkResult::advance();
        schedule = cuda::scheduleOf(ctx, *p);
        // Shorter runs leave a token contraction's length rule fewer
        // blocks: their own split-K, chosen the same way.
        splits = cuda::lengthSplits(op, *p, o.tileK(), o.splitKWarps);
      }
      if (!splits.empty())
        op->setAttr(mlir::linformer::kCUDALengthSplitsAttrName,
                    DenseI64ArrayAttr::get(ctx, splits));
      op->setAttr(mlir::linformer::kCUDAScheduleAttrName, schedule);
      records.push_back(
          cuda::scheduleRecord(ctx, key, schedule, source, splits));
      return WalkResult::advance();
    });
    if (walk.wasInterrupted() || failed(selectCores(overrides, records)))
      return signalPassFailure();
    cuda::appendScheduleRecords(getOperation(), records);
    for (StringRef prefix : {"contraction/", "attention_core/"})
      cuda::warnUnusedRecords(loc, scheduleFile, getOperation().getSymName(),
                              prefix, overrides);
  }

  /// Each attention core on tensor cores gets its
  /// `#linformer.cuda_core_schedule`, each f32 one its
  /// `#linformer.cuda_f32_core_schedule`: the file's record of its key,
  /// checked, or the one chosen from the core-* options; each is appended
  /// to `records` (after the contractions').
  LogicalResult
  selectCores(std::map<std::string, cuda::ScheduleFileRecord> &overrides,
              SmallVectorImpl<Attribute> &records) {
    cuda::CoreSelectionOptions o;
    o.sharedBytes = coreSharedBytes;
    o.warps = coreWarps;
    o.slots = coreSlots;
    o.groups = coreGroups;
    o.tiles = coreTiles;
    o.minBlocks = coreMinBlocks;
    o.ldmatrix = coreLdmatrix;
    o.wgmma = wgmma;
    o.lanes = coreLanes;
    o.rows = coreRows;
    if (o.lanes != 0 && o.lanes != 1 && o.lanes != 4 && o.lanes != 8 &&
        o.lanes != 16)
      return getOperation().emitError()
             << "core-lanes " << o.lanes
             << " is not a count of lanes a query row the f32 core takes (0: "
                "chosen, 1, 4, 8 or 16)";
    if (o.rows != 1 && o.rows != 2 && o.rows != 4)
      return getOperation().emitError()
             << "core-rows " << o.rows
             << " is not a count of query rows a thread the f32 core takes "
                "(1, 2 or 4)";
    MLIRContext *ctx = &getContext();
    WalkResult walk = getOperation().walk([&](AttentionCoreOp op) {
      // On buffers and head-wide (linformer-cuda-expand-attention-core
      // says why otherwise).
      if (!op.hasPureBufferSemantics() || !op.hasHeadWideValues())
        return WalkResult::advance();
      cuda::CoreShape core = cuda::CoreShape::of(op);
      std::string key = core.key();
      // Without tensor cores: f32 data only (linformer-cuda-expand-
      // attention-core refuses 16-bit ones there).
      if (!cuda::coreOnTensorCores(op, precision)) {
        if (llvm::any_of(cuda::coreData(op), [](Value v) {
              return !cast<MemRefType>(v.getType()).getElementType().isF32();
            }))
          return WalkResult::advance();
        // With mma=tf32 a file may put it on TF32 tensor cores instead
        // (the f32 core stays the choice until a GPU has timed the two).
        return attachCoreSchedule(
            op, key,
            [&](Attribute a) -> std::string {
              if (auto s = dyn_cast<CUDAF32CoreScheduleAttr>(a))
                return core.fitsF32(s);
              if (auto s = dyn_cast<CUDACoreScheduleAttr>(a);
                  s && cuda::isTF32(precision))
                return core.fitsTF32(s);
              return "it runs with f32 products (no tensor cores here; "
                     "TF32 ones need --cuda-mma=tf32 or tf32x3), which a "
                     "#linformer.cuda_f32_core_schedule describes";
            },
            [&] { return core.chooseF32(ctx, o); }, overrides, records);
      }
      return attachCoreSchedule(
          op, key,
          [&](Attribute a) -> std::string {
            if (auto s = dyn_cast<CUDACoreScheduleAttr>(a))
              return core.fits(s, o);
            std::string text;
            llvm::raw_string_ostream os(text);
            os << "it runs on tensor cores, which a "
                  "#linformer.cuda_core_schedule describes, not "
               << a;
            return text;
          },
          [&] { return core.choose(ctx, o); }, overrides, records);
    });
    return failure(walk.wasInterrupted());
  }

  /// Core `op`'s schedule under `key`: the file's record of it where there
  /// is one (refused where `fit` says what in it does not fit), else
  /// `chosen()`; attached under its kind's name (linformer.cuda_core_schedule
  /// or linformer.cuda_f32_core_schedule) and appended to `records`.
  WalkResult
  attachCoreSchedule(AttentionCoreOp op, StringRef key,
                     function_ref<std::string(Attribute)> fit,
                     function_ref<Attribute()> chosen,
                     std::map<std::string, cuda::ScheduleFileRecord> &overrides,
                     SmallVectorImpl<Attribute> &records) {
    Attribute schedule;
    StringRef source = "selected";
    if (auto it = overrides.find(key.str()); it != overrides.end()) {
      if (std::string why = fit(it->second.schedule); !why.empty()) {
        op.emitOpError() << "cannot take the schedule of " << scheduleFile
                         << ", kernels[" << it->second.index << "]: " << why;
        return WalkResult::interrupt();
      }
      schedule = it->second.schedule;
      it->second.used = true;
      source = "file";
    } else {
      schedule = chosen();
    }
    op->setAttr(isa<CUDACoreScheduleAttr>(schedule)
                    ? kCUDACoreScheduleAttrName
                    : kCUDAF32CoreScheduleAttrName,
                schedule);
    records.push_back(
        cuda::scheduleRecord(&getContext(), key, schedule, source));
    return WalkResult::advance();
  }

  /// What in plan `p` (a schedule file's) this pipeline's options do not
  /// allow, or "": the instructions the target and the knobs enable, the
  /// shared memory and the block's warps they grant.
  static std::string withinOptions(const cuda::Plan &p,
                                   const cuda::SelectionOptions &o) {
    const cuda::Staging &s = p.staging;
    if (!s.warpsM)
      return "";
    if (o.sharedBytes <= 0)
      return "it stages the operands in shared memory, which is off here";
    if (s.wgmma && !o.wgmma)
      return "wgmma needs --cuda-wgmma (sm_90a)";
    if ((s.a.async || s.b.async) && !o.asyncCopy)
      return "cp.async is off here (sm_80+, --cuda-async-copy-contractions)";
    if (s.ldmatrixA && !o.ldmatrix)
      return "ldmatrix is off here (--cuda-ldmatrix-contractions)";
    if (s.b.natural && !s.wgmma && !o.ldmatrixTrans)
      return "natural_b (ldmatrix.trans) is off here "
             "(--cuda-ldmatrix-trans-contractions)";
    if (s.prefetch && !s.wgmma && !o.prefetch)
      return "prefetching (buffers > 1) is off here "
             "(--cuda-prefetch-contractions)";
    if (s.warpsM * s.warpsN > o.blockWarps)
      return "its " + std::to_string(s.warpsM * s.warpsN) +
             " warps a block exceed the " + std::to_string(o.blockWarps) +
             " a block has here";
    int64_t bytes =
        (s.a.words + s.b.words) * (o.f32Words() ? 8 : 4) * s.buffers();
    if (bytes > o.sharedBytes)
      return "its buffers take " + std::to_string(bytes) +
             " bytes of shared memory, more than the " +
             std::to_string(o.sharedBytes) + " a block has here";
    return "";
  }
};

} // namespace
