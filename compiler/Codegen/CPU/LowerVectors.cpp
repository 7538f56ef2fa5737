//===- LowerVectors.cpp - vector ops to CPU-friendly forms -----*- C++ -*-===//
//
// Lowers contractions to outer products (broadcast-FMA), multi-reductions
// to inner reductions, transposes/transfers/broadcasts to simple ops, and
// math.exp and math.erf to polynomials so that they vectorise (the
// softmax's exp(c (x - m)) as 2^t: SoftmaxExp2; erf as a rational function:
// ErfRational).
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"
#include "compiler/Schedule/ScheduleAttrs.h"
#include "compiler/Schedule/Target.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/Dialect/X86Vector/Transforms.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"
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

/// The f32 vector arithmetic of the approximations below: splat constants
/// of `type`, and a clamp that keeps NaN (an unordered compare and a
/// select, which x86 lowers to one max or min).
struct VectorMath {
  PatternRewriter &rewriter;
  Location loc;
  VectorType type;

  Value f32(double v) const {
    return arith::ConstantOp::create(
        rewriter, loc,
        DenseElementsAttr::get(type, rewriter.getF32FloatAttr(float(v))));
  }
  Value clamp(Value v, arith::CmpFPredicate keep, double bound) const {
    Value b = f32(bound);
    return arith::SelectOp::create(
        rewriter, loc, arith::CmpFOp::create(rewriter, loc, keep, v, b), v, b);
  }
  /// c[0] + x (c[1] + x (c[2] + ...)), one FMA a coefficient after the last.
  Value horner(Value x, ArrayRef<double> c) const {
    Value v = f32(c.back());
    for (int i = int(c.size()) - 2; i >= 0; --i)
      v = math::FmaOp::create(rewriter, loc, x, v, f32(c[i]));
    return v;
  }
};

/// The softmax's exponential, exp(c (x - m)) with c > 0 a constant (the
/// attention core's lowering scales inside the exponential; x <= m there),
/// as FlashAttention computes it: 2^t with t = (x - m) c log2(e), the scale
/// and log2(e) in one constant, 2^t = 2^n 2^f for n = round(t) and f = t -
/// n in [-1/2, 1/2], 2^f by a degree-6 polynomial (relative error below
/// 8e-8 in f32 arithmetic, a reweighted least-squares fit), 2^n from
/// exponent bits. t is carried as t + tLow (the product's rounding error
/// by an FMA, and the constant's low part): rounded to f32 alone it would
/// cost a relative error of |t| 6e-8 in 2^t (3.7e-6 at exp(-80)); with it
/// the error is 8.3e-8 over c (x - m) in [-80, 0], upstream's 8.0e-8
/// (linformer-cpu-lower-vectors-accuracy.mlir). 10 multiplies and FMAs a vector
/// against upstream's 13 with the scale (its Cody-Waite range reduction). x - m
/// is clamped so that t lies in [-127, 127]: n = -127 makes 2^n zero (flushed,
/// as upstream), so masked scores (-inf) give 0; NaN stays NaN (the
/// clamps' unordered compares keep it).
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
    double cValue =
        c.isSplat() ? c.getSplatValue<APFloat>().convertToDouble() : 0.0;
    if (!(cValue > 0) || !diff.getDefiningOp<arith::SubFOp>())
      return rewriter.notifyMatchFailure(op, "not exp(c (x - m)), c > 0");
    // c log2(e) as an f32 pair k + kLow, so that t = d k + d kLow keeps
    // what rounding d k loses.
    double scaleLog2e = cValue * 1.4426950408889634;
    double k = float(scaleLog2e), kLow = float(scaleLog2e - k);

    Location loc = op.getLoc();
    auto i32Type = VectorType::get(type.getShape(), rewriter.getI32Type());
    VectorMath m{rewriter, loc, type};
    auto i32 = [&](int32_t v) -> Value {
      return arith::ConstantOp::create(
          rewriter, loc,
          DenseElementsAttr::get(i32Type, rewriter.getI32IntegerAttr(v)));
    };
    // d clamped so that t lies in [-127, 127] (before the product, whose
    // error an FMA would turn into NaN at d = -inf, a masked score).
    Value d = m.clamp(diff, arith::CmpFPredicate::UGE, -127.0 / k);
    d = m.clamp(d, arith::CmpFPredicate::ULE, 127.0 / k);
    Value t = arith::MulFOp::create(rewriter, loc, d, m.f32(k));
    // tLow: d k - t exactly (an FMA), plus d kLow.
    Value tLow = math::FmaOp::create(rewriter, loc, d, m.f32(k),
                                     arith::NegFOp::create(rewriter, loc, t));
    tLow = math::FmaOp::create(rewriter, loc, d, m.f32(kLow), tLow);
    Value n = math::RoundEvenOp::create(rewriter, loc, t);
    Value f = arith::AddFOp::create(
        rewriter, loc, arith::SubFOp::create(rewriter, loc, t, n), tLow);
    // 2^f, f in [-1/2, 1/2].
    static constexpr double kCoefficients[] = {1.0,
                                               0.6931471824645996,
                                               0.24022646248340607,
                                               0.05550328642129898,
                                               0.009618489071726799,
                                               0.0013399932067841291,
                                               0.00015345841529779136};
    Value p = m.horner(f, kCoefficients);
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

/// erf (GELU's) as x P(x^2) / Q(x^2) on x clamped to [-4, 4] (erf is 1
/// in f32 beyond), P and Q of degree 5 from a reweighted least-squares fit
/// of erf(x) / x on [0, 4]: absolute error below 3.2e-7 in f32 arithmetic
/// (relative 3.4e-7 for |x| > 1e-3), in 13 multiplies and FMAs and one
/// division a vector. Upstream's approximation picks one of three
/// coefficient sets per lane (a blend for each coefficient: 18 blends a
/// vector on AVX2, its FFN's second GEMM spending about a tenth of its time
/// in the GELU it absorbs). NaN stays NaN (unordered compares keep it);
/// +-inf give +-1.
struct ErfRational : OpRewritePattern<math::ErfOp> {
  ErfRational(MLIRContext *ctx) : OpRewritePattern(ctx, /*benefit=*/2) {}

  LogicalResult matchAndRewrite(math::ErfOp op,
                                PatternRewriter &rewriter) const override {
    auto type = dyn_cast<VectorType>(op.getType());
    if (!type || !type.getElementType().isF32())
      return rewriter.notifyMatchFailure(op, "not a vector of f32");
    Location loc = op.getLoc();
    VectorMath m{rewriter, loc, type};
    Value x = m.clamp(op.getOperand(), arith::CmpFPredicate::UGE, -4.0);
    x = m.clamp(x, arith::CmpFPredicate::ULE, 4.0);
    Value z = arith::MulFOp::create(rewriter, loc, x, x);
    static constexpr double kP[] = {
        1.1283789769141468,   0.19623785642676145,    0.053465922644482536,
        0.004003142902708489, 0.00028802558450441787, 1.9748576191580547e-06};
    static constexpr double kQ[] = {1.0,
                                    0.507242435726397,
                                    0.11647174972267596,
                                    0.015443422991595386,
                                    0.0012162292471218942,
                                    3.748031631471693e-05};
    Value p = arith::MulFOp::create(rewriter, loc, x, m.horner(z, kP));
    rewriter.replaceOpWithNewOp<arith::DivFOp>(op, p, m.horner(z, kQ));
    return success();
  }
};

/// Whether `v` (f32) is the extension of a bf16 vector, through one shape
/// cast at most (DropContractUnitDims' of an extended operand).
static bool isExtendedBF16(Value v) {
  if (auto cast = v.getDefiningOp<vector::ShapeCastOp>())
    v = cast.getSource();
  auto ext = v.getDefiningOp<arith::ExtFOp>();
  return ext && getElementTypeOrSelf(ext.getIn().getType()).isBF16();
}

/// The bf16 vector of `v`'s shape that `v` extends (isExtendedBF16).
static Value extendedBF16(PatternRewriter &rewriter, Value v) {
  auto cast = v.getDefiningOp<vector::ShapeCastOp>();
  Value source = (cast ? cast.getSource() : v)
                     .getDefiningOp<arith::ExtFOp>()
                     .getIn();
  if (!cast)
    return source;
  return vector::ShapeCastOp::create(
      rewriter, cast.getLoc(),
      cast.getResultVectorType().clone(rewriter.getBF16Type()), source);
}

/// `acc + sum of a[2i] b[2i] + a[2i+1] b[2i+1]` per lane of `acc` (L x
/// f32), `a` and `b` 2L bf16 pairs: `vdpbf16ps` (x86vector.avx512.dot)
/// when `native`, else what it computes with f32 FMAs: the odd (high)
/// halves first, then the even ones, as the instruction orders them (each
/// product of two bf16 is exact in f32, so an FMA rounds as its add does).
/// The instruction also treats denormal inputs and results as zero, which
/// the emulation does not.
static Value bf16Dot(PatternRewriter &rewriter, Location loc, Value acc,
                     Value a, Value b, bool native) {
  if (native)
    return x86vector::DotBF16Op::create(rewriter, loc, acc, a, b);
  auto accType = cast<VectorType>(acc.getType());
  auto i32Type = accType.clone(rewriter.getI32Type());
  auto splat = [&](int64_t bits) -> Value {
    return arith::ConstantOp::create(
        rewriter, loc,
        DenseElementsAttr::get(
            i32Type, rewriter.getI32IntegerAttr(static_cast<int32_t>(bits))));
  };
  auto halves = [&](Value pairs) -> std::pair<Value, Value> {
    Value words = vector::BitCastOp::create(rewriter, loc, i32Type, pairs);
    Value even = arith::ShLIOp::create(rewriter, loc, words, splat(16));
    Value odd = arith::AndIOp::create(rewriter, loc, words, splat(0xFFFF0000));
    return {vector::BitCastOp::create(rewriter, loc, accType, even),
            vector::BitCastOp::create(rewriter, loc, accType, odd)};
  };
  auto [aEven, aOdd] = halves(a);
  auto [bEven, bOdd] = halves(b);
  acc = math::FmaOp::create(rewriter, loc, aOdd, bOdd, acc);
  return math::FmaOp::create(rewriter, loc, aEven, bEven, acc);
}

/// A register tile's contraction of bf16 pairs, `acc[m, n] += lhs[m, k]
/// rhs[k, n]` with k = 2 and both factors extended from bf16 (what
/// linformer-bf16-products' pairs and linformer-cpu-tile-for-vectors' pair
/// steps make), as dot products: each row's pair of factors is one 32-bit
/// element broadcast to every lane (a `vpbroadcastd` from memory), the two
/// rows of the streamed operand are interleaved into pairs (one shuffle per
/// L columns, shared by every row), and each L columns of a row take one
/// `vdpbf16ps`, twice the products of an FMA. L is 16 (8, 4 with
/// AVX512VL) lanes of f32, at most the target's vector; a width no L
/// divides is left to the outer products. Where the target has no
/// AVX512_BF16 the instruction is emulated (`bf16Dot`), so the path runs
/// and is checked on any CPU.
struct ContractBF16PairsToDot : OpRewritePattern<vector::ContractionOp> {
  ContractBF16PairsToDot(MLIRContext *ctx, int64_t maxLanes, bool native,
                         bool nativeNarrow)
      : OpRewritePattern(ctx, /*benefit=*/2), maxLanes(maxLanes),
        native(native), nativeNarrow(nativeNarrow) {}

  LogicalResult matchAndRewrite(vector::ContractionOp op,
                                PatternRewriter &rewriter) const override {
    if (op.getKind() != vector::CombiningKind::ADD)
      return rewriter.notifyMatchFailure(op, "not a sum of products");
    auto accType = dyn_cast<VectorType>(op.getAccType());
    VectorType lhsType = op.getLhsType(), rhsType = op.getRhsType();
    if (!accType || accType.getRank() != 2 || !accType.getElementType().isF32() ||
        lhsType.getRank() != 2 || rhsType.getRank() != 2 ||
        lhsType.getDimSize(1) != 2 || accType.isScalable())
      return rewriter.notifyMatchFailure(op, "not an [m, 2] x [2, n] tile");
    // (m, k) x (k, n) -> (m, n), whatever the loops' order.
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    auto dimAt = [&](unsigned operand, unsigned pos) -> int64_t {
      auto d = dyn_cast<AffineDimExpr>(maps[operand].getResult(pos));
      return d ? int64_t(d.getPosition()) : -1;
    };
    if (llvm::any_of(maps, [](AffineMap map) {
          return map.getNumResults() != 2 || map.getNumSymbols() != 0;
        }))
      return rewriter.notifyMatchFailure(op, "not (m, k) x (k, n)");
    int64_t m = dimAt(0, 0), k = dimAt(0, 1), n = dimAt(1, 1);
    SmallVector<vector::IteratorType> iters = op.getIteratorTypesArray();
    if (m < 0 || k < 0 || n < 0 || m == n || m == k || n == k ||
        dimAt(1, 0) != k || dimAt(2, 0) != m || dimAt(2, 1) != n ||
        iters.size() != 3 || iters[k] != vector::IteratorType::reduction)
      return rewriter.notifyMatchFailure(op, "not (m, k) x (k, n)");
    int64_t rows = accType.getDimSize(0), columns = accType.getDimSize(1);
    int64_t lanes = 0;
    for (int64_t l : {16, 8, 4})
      if (l <= maxLanes && columns % l == 0 &&
          (!native || l == 16 || nativeNarrow)) {
        lanes = l;
        break;
      }
    if (lanes == 0)
      return rewriter.notifyMatchFailure(op, "no dot width divides the tile");
    if (!isExtendedBF16(op.getLhs()) || !isExtendedBF16(op.getRhs()))
      return rewriter.notifyMatchFailure(op, "factors not extended from bf16");
    Value lhs = extendedBF16(rewriter, op.getLhs());
    Value rhs = extendedBF16(rewriter, op.getRhs());

    Location loc = op.getLoc();
    Type bf16 = rewriter.getBF16Type(), i16 = rewriter.getI16Type(),
         i32 = rewriter.getI32Type();
    auto pairsType = VectorType::get({2 * lanes}, bf16);
    // The streamed rows k and k + 1, as 16-bit words (shuffles of bf16
    // vectors are not legal everywhere in LLVM), interleaved L columns at a
    // time.
    auto rowType = VectorType::get({columns}, i16);
    Value row0 = vector::BitCastOp::create(
        rewriter, loc, rowType, vector::ExtractOp::create(rewriter, loc, rhs, 0));
    Value row1 = vector::BitCastOp::create(
        rewriter, loc, rowType, vector::ExtractOp::create(rewriter, loc, rhs, 1));
    SmallVector<Value> streamed;
    for (int64_t c = 0; c < columns; c += lanes) {
      SmallVector<int64_t> mask;
      for (int64_t l = 0; l < lanes; ++l) {
        mask.push_back(c + l);
        mask.push_back(columns + c + l);
      }
      Value words = vector::ShuffleOp::create(rewriter, loc, row0, row1, mask);
      streamed.push_back(
          vector::BitCastOp::create(rewriter, loc, pairsType, words));
    }
    Value result = op.getAcc();
    auto wordType = VectorType::get({1}, i32);
    auto wordsType = VectorType::get({lanes}, i32);
    for (int64_t r = 0; r < rows; ++r) {
      Value pair = vector::ExtractOp::create(rewriter, loc, lhs, r);
      Value word = vector::ExtractOp::create(
          rewriter, loc,
          vector::BitCastOp::create(rewriter, loc, wordType, pair), 0);
      Value broadcast = vector::BitCastOp::create(
          rewriter, loc, pairsType,
          vector::BroadcastOp::create(rewriter, loc, wordsType, word));
      Value row = vector::ExtractOp::create(rewriter, loc, result, r);
      for (auto [j, b] : llvm::enumerate(streamed)) {
        int64_t c = int64_t(j) * lanes;
        Value acc = vector::ExtractStridedSliceOp::create(rewriter, loc, row,
                                                          c, lanes, 1);
        Value dot = bf16Dot(rewriter, loc, acc, broadcast, b, native);
        row = vector::InsertStridedSliceOp::create(rewriter, loc, dot, row, c,
                                                   1);
      }
      result = vector::InsertOp::create(rewriter, loc, row, result, r);
    }
    rewriter.replaceOp(op, result);
    return success();
  }

  int64_t maxLanes;
  bool native, nativeNarrow;
};

struct LowerVectorsPass
    : mlir::linformer::impl::LinformerCPULowerVectorsPassBase<LowerVectorsPass> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    // Contractions first: they produce the broadcasts and transposes that
    // the second set lowers. Pairs of bf16 factors first of all, while
    // their extensions are still there to be seen through.
    // The module's CPU target (the host's without one), read once.
    ::linformer::schedule::CPUTarget target = cpuTargetOf(getOperation());
    {
      bool native = ::linformer::schedule::matrixEngines(target).avx512BF16;
      RewritePatternSet patterns(ctx);
      patterns.add<ContractBF16PairsToDot>(
          ctx, std::max<int64_t>(4, target.lanes()), native,
          ::linformer::schedule::hasFeature(target, "avx512vl"));
      if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
        return signalPassFailure();
    }
    {
      RewritePatternSet patterns(ctx);
      vector::populateVectorContractLoweringPatterns(
          patterns, vector::VectorContractLowering::OuterProduct);
      vector::populateVectorTransferPermutationMapLoweringPatterns(patterns);
      vector::populateCastAwayVectorLeadingOneDimPatterns(patterns);
      if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
        return signalPassFailure();
    }
    // An outer product broadcasts each element of its lhs; where that lhs
    // is read contiguously (a transposed operand: the attention core's
    // probabilities, `[keys, queries]`), each element is read on its own.
    // x86 then broadcasts straight from memory (vbroadcastss m32, a load);
    // from one vector<6xf32> load LLVM extracts the elements past the
    // first four with shuffles, which compete with the FMAs for the vector
    // ports.
    {
      RewritePatternSet patterns(ctx);
      vector::populateVectorOuterProductLoweringPatterns(patterns);
      vector::populateScalarVectorTransferLoweringPatterns(
          patterns, /*benefit=*/1, /*allowMultipleUses=*/true);
      if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
        return signalPassFailure();
    }
    {
      RewritePatternSet patterns(ctx);
      vector::populateVectorMultiReductionLoweringPatterns(
          patterns, vector::VectorMultiReductionLowering::InnerReduction);
      // An 8 x 8 block (TileForVectors' tiles of a transpose) in 24
      // shuffles and blends; as 1-D shuffles of 64 elements it took 194
      // instructions a 16 x 6 tile on AVX2, spilling, the attention core's
      // Q^T 8% of its time.
      if (target.vectorBits >= 256)
        x86vector::avx2::populateSpecializedTransposeLoweringPatterns(
            patterns,
            x86vector::avx2::LoweringOptions().setTransposeOptions(
                x86vector::avx2::TransposeLoweringOptions().lower8x8xf32()));
      vector::populateVectorTransposeLoweringPatterns(
          patterns, vector::VectorTransposeLowering::Shuffle1D);
      vector::populateVectorBroadcastLoweringPatterns(patterns);
      vector::populateVectorShapeCastLoweringPatterns(patterns);
      vector::populateVectorTransferLoweringPatterns(patterns,
                                                     /*maxTransferRank=*/1);
      vector::populateVectorMaskOpLoweringPatterns(patterns);
      patterns.add<SoftmaxExp2, ErfRational>(ctx);
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
