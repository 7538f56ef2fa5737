//===- HoistInKernels.cpp - LICM that stays inside kernels -----*- C++ -*-===//
//
// Upstream loop-invariant code motion and subset hoisting on scf.for loops
// only, never out of a workgroup loop (scf.forall); see
// LinformerHoistInKernelsPass in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/LoopInvariantCodeMotionUtils.h"

namespace mlir::linformer {
#define GEN_PASS_DEF_LINFORMERHOISTINKERNELSPASS
#include "compiler/Passes.h.inc"
} // namespace mlir::linformer

using namespace mlir;

namespace {
struct HoistInKernelsPass
    : mlir::linformer::impl::LinformerHoistInKernelsPassBase<
          HoistInKernelsPass> {
  void runOnOperation() override {
    // Innermost loops first (post-order), as upstream's passes do, so that
    // what leaves an inner loop can leave its parent too.
    getOperation()->walk([](scf::ForOp loop) { moveLoopInvariantCode(loop); });
    IRRewriter rewriter(&getContext());
    getOperation()->walk([&](scf::ForOp loop) {
      (void)hoistLoopInvariantSubsets(rewriter, loop);
    });
  }
};
} // namespace
