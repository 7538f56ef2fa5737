//===- LowerVectors.cpp - vector ops to CPU-friendly forms -----*- C++ -*-===//
//
// Lowers contractions to outer products (broadcast-FMA), multi-reductions
// to inner reductions, transposes/transfers/broadcasts to simple ops, and
// math.exp to a polynomial so that it vectorises.
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::linformer {
#define GEN_PASS_DEF_LINFORMERCPULOWERVECTORSPASS
#include "compiler/Passes.h.inc"
} // namespace mlir::linformer

using namespace mlir;
using namespace mlir::linformer;

namespace {
struct LowerVectorsPass
    : mlir::linformer::impl::LinformerCPULowerVectorsPassBase<LowerVectorsPass> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    // Contractions first: they produce the broadcasts and transposes that
    // the second set lowers.
    {
      RewritePatternSet patterns(ctx);
      vector::populateVectorContractLoweringPatterns(
          patterns, vector::VectorContractLowering::OuterProduct);
      vector::populateVectorTransferPermutationMapLoweringPatterns(patterns);
      vector::populateCastAwayVectorLeadingOneDimPatterns(patterns);
      if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
        return signalPassFailure();
    }
    {
      RewritePatternSet patterns(ctx);
      vector::populateVectorOuterProductLoweringPatterns(patterns);
      vector::populateVectorMultiReductionLoweringPatterns(
          patterns, vector::VectorMultiReductionLowering::InnerReduction);
      vector::populateVectorTransposeLoweringPatterns(
          patterns, vector::VectorTransposeLowering::Shuffle1D);
      vector::populateVectorBroadcastLoweringPatterns(patterns);
      vector::populateVectorShapeCastLoweringPatterns(patterns);
      vector::populateVectorTransferLoweringPatterns(patterns,
                                                     /*maxTransferRank=*/1);
      vector::populateVectorMaskOpLoweringPatterns(patterns);
      populateMathPolynomialApproximationPatterns(
          patterns, [](StringRef name) {
            return name == math::ExpOp::getOperationName() ||
                   name == math::ErfOp::getOperationName();
          });
      if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
        return signalPassFailure();
    }
    // Float sums and products of a whole vector may be reassociated: an
    // in-order vector.reduction becomes a chain of scalar adds in LLVM
    // (LayerNorm's row sums over 512 channels took 3 ms per kernel on the
    // default encoder); a tree of vector adds computes the same sum within
    // rounding, which the reference check's tolerance covers.
    // Signed zeros: a max or min of vectors returns +0 or -0 where both
    // are zero. No kernel tells them apart (the softmax subtracts its max,
    // pooling and ReLU feed sums), and on x86 without the rule each
    // maximumf is a max, a NaN check and three blends (the softmax's row
    // max over k keys on AVX2); NaN propagation is kept.
    getOperation().walk([](Operation *op) {
      if (!isa<arith::MaximumFOp, arith::MinimumFOp>(op) ||
          !isa<VectorType>(op->getResult(0).getType()))
        return;
      auto fm = cast<arith::ArithFastMathInterface>(op);
      op->setAttr(fm.getFastMathAttrName(),
                  arith::FastMathFlagsAttr::get(
                      op->getContext(), fm.getFastMathFlagsAttr().getValue() |
                                            arith::FastMathFlags::nsz));
    });
    getOperation().walk([](vector::ReductionOp op) {
      if (!isa<FloatType>(op.getSourceVectorType().getElementType()))
        return;
      if (op.getKind() != vector::CombiningKind::ADD &&
          op.getKind() != vector::CombiningKind::MUL)
        return;
      op.setFastmathAttr(arith::FastMathFlagsAttr::get(
          op.getContext(),
          op.getFastmath() | arith::FastMathFlags::reassoc));
    });
  }
};
} // namespace
