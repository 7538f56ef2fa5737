//===- Vectorize.cpp - linalg to vector ops --------------------*- C++ -*-===//
//
// Vectorizes every register-sized linalg op with upstream linalg::vectorize,
// asking for vector.contract on contractions, then cleans up transfers.
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::linformer {
#define GEN_PASS_DEF_LINFORMERCPUVECTORIZEPASS
#include "compiler/Passes.h.inc"
} // namespace mlir::linformer

using namespace mlir;
using namespace mlir::linformer;

namespace {
struct VectorizePass
    : linformer::impl::LinformerCPUVectorizePassBase<VectorizePass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    SmallVector<linalg::LinalgOp> ops;
    getOperation().walk([&](linalg::LinalgOp op) { ops.push_back(op); });
    for (linalg::LinalgOp op : ops) {
      // i1 buffers stay scalar: a vector<Nxi1> is stored bit-packed while a
      // scalar i1 takes a byte, so vector and scalar accesses would
      // disagree. Only a user's i1 mask reaches memory as i1, and it is
      // converted to bytes once, by a scalar loop.
      if (llvm::any_of(op->getOperandTypes(), [](Type t) {
            return getElementTypeOrSelf(t).isInteger(1);
          }))
        continue;
      if (failed(linalg::vectorizeOpPrecondition(op)))
        continue; // stays scalar; lowered to loops later
      rewriter.setInsertionPoint(op);
      FailureOr<linalg::VectorizationResult> result = linalg::vectorize(
          rewriter, op, /*inputVectorSizes=*/{}, /*inputScalableVecDims=*/{},
          /*vectorizeNDExtract=*/false, /*flatten1DDepthwiseConv=*/false,
          /*assumeDynamicDimsMatchVecSizes=*/false,
          /*createNamedContraction=*/true);
      if (failed(result))
        continue;
      if (result->replacements.empty())
        rewriter.eraseOp(op);
      else
        rewriter.replaceOp(op, result->replacements);
    }

    RewritePatternSet patterns(&getContext());
    vector::populateVectorTransferPermutationMapLoweringPatterns(patterns);
    vector::populateVectorReductionToContractPatterns(patterns);
    vector::populateSinkVectorOpsPatterns(patterns);
    vector::TransferReadOp::getCanonicalizationPatterns(patterns,
                                                        &getContext());
    vector::TransferWriteOp::getCanonicalizationPatterns(patterns,
                                                         &getContext());
    tensor::populateFoldTensorSubsetIntoVectorTransferPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};
} // namespace
