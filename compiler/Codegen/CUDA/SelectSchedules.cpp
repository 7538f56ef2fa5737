//===- SelectSchedules.cpp - a schedule for every CUDA contraction -*- C++ -*-===//
//
// The CUDA pipeline's schedule selection (see Passes.td), the step before
// linformer-cuda-tensor-core-contractions, as IREE's lowering-config
// selection precedes its LLVMGPU pipeline: each contraction the warp tiles
// map gets a `#linformer.cuda_schedule` (warp tiles, split-K, the staged
// block's warps, chunk and buffers, cp.async, ldmatrix, wgmma) chosen from
// the options the pipeline derives from the CUDA target (Contractions.h,
// selectPlan). A contraction left without one stays on the plain path.
//
//===----------------------------------------------------------------------===//

#include "compiler/Codegen/CUDA/Contractions.h"
#include "compiler/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace mlir::linformer {
#define GEN_PASS_DEF_LINFORMERCUDASELECTSCHEDULESPASS
#include "compiler/Passes.h.inc"
} // namespace mlir::linformer

using namespace mlir;
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
    getOperation().walk([&](linalg::GenericOp op) {
      if (op->hasAttr(mlir::linformer::kFusedCoreAttrName))
        return;
      FailureOr<cuda::Plan> p = cuda::selectPlan(op, o);
      if (succeeded(p))
        op->setAttr(mlir::linformer::kCUDAScheduleAttrName,
                    cuda::scheduleOf(&getContext(), *p));
    });
  }
};

} // namespace
