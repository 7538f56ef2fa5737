//===- LowerVectors.cpp - vector ops to CPU-friendly forms -----*- C++ -*-===//
//
// Lowers contractions to outer products (broadcast-FMA), multi-reductions
// to inner reductions, transposes/transfers/broadcasts to simple ops, and
// math.exp to a polynomial so that it vectorises (the softmax's, exp(c (x -
// m)), as 2^t: SoftmaxExp2).
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::linformer {
#define GEN_PASS_DEF_LINFORMERCPULOWERVECTORSPASS
#include "compiler/Passes.h.inc"
} // namespace mlir::linformer

using namespace mlir;
using namespace mlir::linformer;

namespace {

/// The softmax's exponential, exp(c (x - m)) with c > 0 a constant (the
/// attention core's lowering scales inside the exponential; x <= m there),
/// as FlashAttention computes it: 2^t with t = (x - m) (c log2 e), 2^t =
/// 2^n 2^f for n = round(t) and f = t - n in [-1/2, 1/2], 2^f by a
/// degree-6 polynomial (relative error below 8e-8 in f32 arithmetic, a
/// reweighted least-squares fit; upstream's: 2^-22.5), 2^n from exponent
/// bits. Upstream's approximation of any exp reduces the range from its
/// operand by Cody-Waite, at 12 multiplies and FMAs a vector (with the
/// scale's) against 8 here; the rounding of t costs a relative error of
/// |t| 6e-8 in 2^t, as the rounding of c (x - m) costs upstream's. t is
/// clamped to [-127, 127]: n = -127 makes 2^n zero (flushed, as upstream),
/// so masked scores (-inf) give 0; NaN stays NaN (the clamps' unordered
/// compares keep it).
struct SoftmaxExp2 : OpRewritePattern<math::ExpOp> {
  SoftmaxExp2(MLIRContext *ctx) : OpRewritePattern(ctx, /*benefit=*/2) {}

  LogicalResult matchAndRewrite(math::ExpOp op,
                                PatternRewriter &rewriter) const override {
    auto type = dyn_cast<VectorType>(op.getType());
    if (!type || !type.getElementType().isF32())
      return rewriter.notifyMatchFailure(op, "not a vector of f32");
    auto mul = op.getOperand().getDefiningOp<arith::MulFOp>();
    if (!mul)
      return rewriter.notifyMatchFailure(op, "not exp(c (x - m))");
    Value diff = mul.getLhs(), scale = mul.getRhs();
    DenseElementsAttr c;
    if (!matchPattern(scale, m_Constant(&c))) {
      std::swap(diff, scale);
      if (!matchPattern(scale, m_Constant(&c)))
        return rewriter.notifyMatchFailure(op, "no constant scale");
    }
    if (!c.isSplat() || !(c.getSplatValue<APFloat>().convertToDouble() > 0) ||
        !diff.getDefiningOp<arith::SubFOp>())
      return rewriter.notifyMatchFailure(op, "not exp(c (x - m)), c > 0");
    double log2e = 1.4426950408889634;
    double scaleLog2e = c.getSplatValue<APFloat>().convertToDouble() * log2e;

    Location loc = op.getLoc();
    auto i32Type = VectorType::get(type.getShape(), rewriter.getI32Type());
    auto f32 = [&](double v) -> Value {
      return arith::ConstantOp::create(
          rewriter, loc,
          DenseElementsAttr::get(type, rewriter.getF32FloatAttr(float(v))));
    };
    auto i32 = [&](int32_t v) -> Value {
      return arith::ConstantOp::create(
          rewriter, loc,
          DenseElementsAttr::get(i32Type, rewriter.getI32IntegerAttr(v)));
    };
    auto clamp = [&](Value v, arith::CmpFPredicate keep, double bound) {
      Value b = f32(bound);
      return arith::SelectOp::create(
          rewriter, loc, arith::CmpFOp::create(rewriter, loc, keep, v, b), v,
          b);
    };
    Value t = arith::MulFOp::create(rewriter, loc, diff, f32(scaleLog2e));
    t = clamp(t, arith::CmpFPredicate::UGE, -127.0);
    t = clamp(t, arith::CmpFPredicate::ULE, 127.0);
    Value n = math::RoundEvenOp::create(rewriter, loc, t);
    Value f = arith::SubFOp::create(rewriter, loc, t, n);
    // 2^f, f in [-1/2, 1/2]: c0 + f (c1 + f (c2 + ...)).
    static constexpr double kCoefficients[] = {1.0,
                                               0.6931471824645996,
                                               0.24022646248340607,
                                               0.05550328642129898,
                                               0.009618489071726799,
                                               0.0013399932067841291,
                                               0.00015345841529779136};
    Value p = f32(kCoefficients[6]);
    for (int k = 5; k >= 0; --k)
      p = math::FmaOp::create(rewriter, loc, f, p, f32(kCoefficients[k]));
    // 2^n: n + 127 in the exponent bits (0 for n = -127: zero).
    Value bits = arith::ShLIOp::create(
        rewriter, loc,
        arith::AddIOp::create(
            rewriter, loc, arith::FPToSIOp::create(rewriter, loc, i32Type, n),
            i32(127)),
        i32(23));
    Value pow2 = arith::BitcastOp::create(rewriter, loc, type, bits);
    rewriter.replaceOpWithNewOp<arith::MulFOp>(op, p, pow2);
    return success();
  }
};

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
      patterns.add<SoftmaxExp2>(ctx);
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
