//===- FuseElementwise.cpp - elementwise producers into consumers -*- C++ -*-===//
//
// The CUDA pipeline makes one kernel of every linalg op (see Passes.td), so
// each elementwise op that stays separate writes a whole tensor to device
// memory and the next kernel reads it back. This fuses elementwise
// producers into their consumers with upstream's elementwise fusion
// patterns, except into contractions: those stay plain multiply-adds, which
// the tensor-core path (linformer-cuda-tensor-core-contractions) matches,
// nor into the attention core's carrier (FuseAttentionCore.cpp).
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::linformer {
#define GEN_PASS_DEF_LINFORMERCUDAFUSEELEMENTWISEPASS
#include "compiler/Passes.h.inc"
} // namespace mlir::linformer

using namespace mlir;

namespace {

struct CUDAFuseElementwisePass
    : mlir::linformer::impl::LinformerCUDAFuseElementwisePassBase<
          CUDAFuseElementwisePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    linalg::populateElementwiseOpsFusionPatterns(
        patterns, [](OpOperand *fused) {
          auto consumer = dyn_cast<linalg::LinalgOp>(fused->getOwner());
          // Nor into the fused attention core's carrier, whose operands
          // are the core's q, keys, values and mask, as they are.
          return consumer && !linalg::isaContractionOpInterface(consumer) &&
                 !consumer->hasAttr("linformer.fused_core");
        });
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
