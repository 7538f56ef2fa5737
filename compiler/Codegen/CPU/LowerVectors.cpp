//===- LowerVectors.cpp - vector ops to CPU-friendly forms -----*- C++ -*-===//
//
// Lowers contractions to outer products (broadcast-FMA), multi-reductions
// to inner reductions, transposes/transfers/broadcasts to simple ops, and
// math.exp and math.erf to polynomials so that they vectorise (the
// softmax's exp(c (x - m)) as 2^t: SoftmaxExp2; erf as a rational function:
// ErfRational).
//
//===----------------------------------------------------------------------===//

#include "compiler/Codegen/CPU/Passes.h"
#include "compiler/Codegen/CPU/TileUtils.h"
#include "compiler/Schedule/ScheduleAttrs.h"
#include "compiler/Schedule/Target.h"

#include "mlir/Dialect/AMX/AMXDialect.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
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

#include <set>

namespace mlir::linformer {
#define GEN_PASS_DEF_LINFORMERCPULOWERVECTORSPASS
#include "compiler/Codegen/CPU/Passes.h.inc"
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
///
/// With `afn` (approximate functions: the core's lowering marks the
/// exponential whose probabilities it rounds to bf16 for `P V`), 2^f is a
/// degree-4 polynomial (relative error 2.7e-6) and t has no low part
/// (1.2e-6 at exp(-20), 7.6e-6 at the clamp): 6 multiplies and FMAs a
/// vector, with errors a hundred times below bf16's half ulp (2^-9).
///
/// With AVX-512 (`scalef`), 2^n comes from vscalefps (p 2^n in one
/// instruction, 16 lanes at a time) instead of an integer conversion, an
/// add, a shift and a product, and t needs no upper clamp (x <= m; above,
/// vscalefps overflows to inf as exp does): the lower clamp is at t = -160,
/// so that masked scores still give 0 (2^-160 is below the smallest
/// subnormal). 10 operations a vector with afn where there were 14.
struct SoftmaxExp2 : OpRewritePattern<math::ExpOp> {
  SoftmaxExp2(MLIRContext *ctx, bool scalef)
      : OpRewritePattern(ctx, /*benefit=*/2), scalef(scalef) {}
  bool scalef;

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
    // error an FMA would turn into NaN at d = -inf, a masked score); with
    // vscalefps in [-160, inf).
    int64_t lanes = type.getNumElements();
    bool useScalef = scalef && lanes % 16 == 0;
    Value d = m.clamp(diff, arith::CmpFPredicate::UGE,
                      (useScalef ? -160.0 : -127.0) / k);
    if (!useScalef)
      d = m.clamp(d, arith::CmpFPredicate::ULE, 127.0 / k);
    Value t = arith::MulFOp::create(rewriter, loc, d, m.f32(k));
    bool approximate = bitEnumContainsAll(op.getFastmath(),
                                          arith::FastMathFlags::afn);
    Value tLow;
    if (!approximate) {
      // tLow: d k - t exactly (an FMA), plus d kLow.
      tLow = math::FmaOp::create(rewriter, loc, d, m.f32(k),
                                 arith::NegFOp::create(rewriter, loc, t));
      tLow = math::FmaOp::create(rewriter, loc, d, m.f32(kLow), tLow);
    }
    Value n = math::RoundEvenOp::create(rewriter, loc, t);
    Value f = arith::SubFOp::create(rewriter, loc, t, n);
    if (tLow)
      f = arith::AddFOp::create(rewriter, loc, f, tLow);
    // 2^f, f in [-1/2, 1/2].
    static constexpr double kCoefficients[] = {1.0,
                                               0.6931471824645996,
                                               0.24022646248340607,
                                               0.05550328642129898,
                                               0.009618489071726799,
                                               0.0013399932067841291,
                                               0.00015345841529779136};
    // The same fit, degree 4.
    static constexpr double kApproximate[] = {
        0.9999992847442627, 0.6931218504905701, 0.240247443318367,
        0.05591781064867973, 0.009570068679749966};
    Value p = approximate ? m.horner(f, kApproximate)
                          : m.horner(f, kCoefficients);
    if (useScalef) {
      // p 2^n, 16 lanes at a time (the op takes vector<16xf32> only).
      auto flat = VectorType::get({lanes}, rewriter.getF32Type());
      auto v16 = VectorType::get({16}, rewriter.getF32Type());
      Value pFlat = vector::ShapeCastOp::create(rewriter, loc, flat, p);
      Value nFlat = vector::ShapeCastOp::create(rewriter, loc, flat, n);
      Value all = arith::ConstantOp::create(rewriter, loc,
                                            rewriter.getI16IntegerAttr(-1));
      // _MM_FROUND_CUR_DIRECTION: the product is exact but for underflow.
      Value rounding = arith::ConstantOp::create(rewriter, loc,
                                                 rewriter.getI32IntegerAttr(4));
      Value result = pFlat;
      for (int64_t i = 0; i < lanes; i += 16) {
        auto slice = [&](Value v) {
          return vector::ExtractStridedSliceOp::create(
              rewriter, loc, v, ArrayRef<int64_t>{i}, ArrayRef<int64_t>{16},
              ArrayRef<int64_t>{1});
        };
        // The op's operands go to llvm.x86.avx512.mask.scalef.ps.512 in
        // order, (a, b, passthru, mask, rounding): a 2^floor(b) is
        // (`src`, `a`), whatever the op's names say.
        Value pi = slice(pFlat);
        Value scaled = x86vector::MaskScaleFOp::create(
            rewriter, loc, v16, pi, slice(nFlat), pi, all, rounding);
        result = vector::InsertStridedSliceOp::create(
            rewriter, loc, scaled, result, ArrayRef<int64_t>{i},
            ArrayRef<int64_t>{1});
      }
      rewriter.replaceOpWithNewOp<vector::ShapeCastOp>(op, type, result);
      return success();
    }
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
///
/// With `afn` (linformer-cpu-tile-and-fuse marks the erf of a bf16
/// epilogue, whose result is rounded to bf16), P and Q have degree 3:
/// absolute error below 2.1e-5, a hundredth of bf16's half ulp at 1
/// (2^-9), in 9 multiplies and FMAs.
///
/// erf(c y) for a constant c in [1/4, 4] (GELU's erf(x / sqrt 2)) takes c into the
/// coefficients: c y P(c^2 y^2) / Q(c^2 y^2) = y P'(y^2) / Q'(y^2) with
/// P'_i = c^(2i+1) P_i and Q'_i = c^(2i) Q_i, y clamped to [-4/c, 4/c]: one
/// multiply a vector less, the same fit (the coefficients' f32 rounding
/// moves the error by less than 1e-7).
struct ErfRational : OpRewritePattern<math::ErfOp> {
  ErfRational(MLIRContext *ctx) : OpRewritePattern(ctx, /*benefit=*/2) {}

  LogicalResult matchAndRewrite(math::ErfOp op,
                                PatternRewriter &rewriter) const override {
    auto type = dyn_cast<VectorType>(op.getType());
    if (!type || !type.getElementType().isF32())
      return rewriter.notifyMatchFailure(op, "not a vector of f32");
    Location loc = op.getLoc();
    VectorMath m{rewriter, loc, type};
    // erf(c y): c folded into the coefficients (c = 1 otherwise).
    Value y = op.getOperand();
    double c = 1.0;
    if (auto mul = y.getDefiningOp<arith::MulFOp>()) {
      for (auto [v, s] : {std::pair(mul.getLhs(), mul.getRhs()),
                          std::pair(mul.getRhs(), mul.getLhs())}) {
        DenseElementsAttr a;
        if (!matchPattern(s, m_Constant(&a)) || !a.isSplat())
          continue;
        double value = a.getSplatValue<APFloat>().convertToDouble();
        // Within [1/4, 4], so that the scaled coefficients (up to c^11)
        // stay far from f32's range limits.
        if (value >= 0.25 && value <= 4.0) {
          y = v;
          c = value;
          break;
        }
      }
    }
    Value x = m.clamp(y, arith::CmpFPredicate::UGE, -4.0 / c);
    x = m.clamp(x, arith::CmpFPredicate::ULE, 4.0 / c);
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
    // The same fit, degree 3.
    static constexpr double kApproximateP[] = {
        1.1282497644424438, 0.17461194097995758, 0.041213881224393845,
        0.0006060652085579932};
    static constexpr double kApproximateQ[] = {
        1.0, 0.4873813986778259, 0.10014443099498749, 0.00815050583332777};
    bool approximate = bitEnumContainsAll(op.getFastmath(),
                                          arith::FastMathFlags::afn);
    auto scaled = [&](ArrayRef<double> coefficients, double first) {
      SmallVector<double, 6> out;
      double power = first, c2 = c * c;
      for (double k : coefficients) {
        out.push_back(k * power);
        power *= c2;
      }
      return out;
    };
    SmallVector<double, 6> pCoefficients =
        scaled(approximate ? ArrayRef<double>(kApproximateP) : kP, c);
    SmallVector<double, 6> qCoefficients =
        scaled(approximate ? ArrayRef<double>(kApproximateQ) : kQ, 1.0);
    Value p = arith::MulFOp::create(rewriter, loc, x,
                                    m.horner(z, pCoefficients));
    // Approximate: the division as a product by Q's reciprocal, which
    // LLVM's X86 backend makes an estimate refined by one Newton step
    // (vrcp14ps or vrcpps and three FMAs; relative error about 2^-23,
    // far below the fit's): the vdivps took half of the epilogue's time
    // on the Xeon. Q(z) >= 1 on the clamped x, so no infinities (ninf).
    arith::FastMathFlags flags =
        approximate ? arith::FastMathFlags::arcp | arith::FastMathFlags::ninf
                    : arith::FastMathFlags::none;
    rewriter.replaceOpWithNewOp<arith::DivFOp>(
        op, p, m.horner(z, qCoefficients), flags);
    return success();
  }
};

/// a (1 + erf(y)) as fma(a, erf(y), a): GELU's 0.5 x (1 + erf(x / sqrt 2))
/// in one operation a vector less, and one rounding less (1 + erf(y) near
/// 0 for y < -1 loses erf's low bits).
struct GeluFma : OpRewritePattern<arith::MulFOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(arith::MulFOp op,
                                PatternRewriter &rewriter) const override {
    if (!isa<VectorType>(op.getType()))
      return rewriter.notifyMatchFailure(op, "not a vector");
    for (auto [a, sum] : {std::pair(op.getLhs(), op.getRhs()),
                          std::pair(op.getRhs(), op.getLhs())}) {
      auto add = sum.getDefiningOp<arith::AddFOp>();
      if (!add || !add->hasOneUse())
        continue;
      for (auto [e, one] : {std::pair(add.getLhs(), add.getRhs()),
                            std::pair(add.getRhs(), add.getLhs())}) {
        if (!e.getDefiningOp<math::ErfOp>() ||
            !matchPattern(one, m_OneFloat()))
          continue;
        rewriter.replaceOpWithNewOp<math::FmaOp>(op, a, e, a);
        return success();
      }
    }
    return rewriter.notifyMatchFailure(op, "not a (1 + erf(y))");
  }
};

/// The 16-bit float type (bf16, or f16: linformer-bf16-products' f16
/// pairs) of the vector `v` (f32) is the extension of, through one shape
/// cast at most (DropContractUnitDims' of an extended operand); null when
/// it is none.
static Type extendedPairType(Value v) {
  if (auto cast = v.getDefiningOp<vector::ShapeCastOp>())
    v = cast.getSource();
  auto ext = v.getDefiningOp<arith::ExtFOp>();
  if (!ext)
    return {};
  Type t = getElementTypeOrSelf(ext.getIn().getType());
  return t.isBF16() || t.isF16() ? t : Type();
}

/// The 16-bit vector of `v`'s shape that `v` extends (extendedPairType).
static Value extendedBF16(PatternRewriter &rewriter, Value v) {
  auto cast = v.getDefiningOp<vector::ShapeCastOp>();
  Value source = (cast ? cast.getSource() : v)
                     .getDefiningOp<arith::ExtFOp>()
                     .getIn();
  if (!cast)
    return source;
  return vector::ShapeCastOp::create(
      rewriter, cast.getLoc(),
      cast.getResultVectorType().clone(getElementTypeOrSelf(source.getType())),
      source);
}

/// Whether `op` is a register tile's `acc[m, n] += lhs[m, k] rhs[k, n]`
/// (whatever the loops' order) summing in f32, both factors extended from
/// bf16 (with `f16`, both from f16: linformer-bf16-products' f16 pairs);
/// rhs may also be `[n, k]` (pairsInPlace).
static bool isBF16TileMatmul(vector::ContractionOp op, bool f16 = false) {
  if (op.getKind() != vector::CombiningKind::ADD)
    return false;
  auto accType = dyn_cast<VectorType>(op.getAccType());
  VectorType lhsType = op.getLhsType(), rhsType = op.getRhsType();
  if (!accType || accType.getRank() != 2 ||
      !accType.getElementType().isF32() || lhsType.getRank() != 2 ||
      rhsType.getRank() != 2 || accType.isScalable())
    return false;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  if (llvm::any_of(maps, [](AffineMap map) {
        return map.getNumResults() != 2 || map.getNumSymbols() != 0;
      }))
    return false;
  auto dimAt = [&](unsigned operand, unsigned pos) -> int64_t {
    auto d = dyn_cast<AffineDimExpr>(maps[operand].getResult(pos));
    return d ? int64_t(d.getPosition()) : -1;
  };
  int64_t m = dimAt(0, 0), k = dimAt(0, 1), n = dimAt(2, 1);
  SmallVector<vector::IteratorType> iters = op.getIteratorTypesArray();
  bool rhsKN = dimAt(1, 0) == k && dimAt(1, 1) == n;
  bool rhsNK = dimAt(1, 0) == n && dimAt(1, 1) == k;
  if (m < 0 || k < 0 || n < 0 || m == n || m == k || n == k ||
      !(rhsKN || rhsNK) || dimAt(2, 0) != m ||
      iters.size() != 3 || iters[k] != vector::IteratorType::reduction)
    return false;
  Type lhs = extendedPairType(op.getLhs());
  return lhs && (f16 ? lhs.isF16() : lhs.isBF16()) &&
         lhs == extendedPairType(op.getRhs());
}

/// Whether the rhs of `op` (isBF16TileMatmul) is `[n, 2]`, read `(n, k)`:
/// each column's pair of factors adjacent, as linformer-cpu-tile-for-vectors
/// reads a step of a weight's panels of bf16 pairs. Its elements in order
/// are then the pairs `vdpbf16ps` reads.
static bool pairsInPlace(vector::ContractionOp op) {
  auto d = dyn_cast<AffineDimExpr>(op.getIndexingMapsArray()[1].getResult(0));
  auto n = dyn_cast<AffineDimExpr>(op.getIndexingMapsArray()[2].getResult(1));
  return d && n && d.getPosition() == n.getPosition();
}

/// `acc + sum of a[2i] b[2i] + a[2i+1] b[2i+1]` per lane of `acc` (L x
/// f32), `a` and `b` 2L bf16 pairs: `vdpbf16ps` (x86vector.avx512.dot)
/// when `native`, else what it computes with f32 FMAs: the odd (high)
/// halves first, then the even ones, as the instruction orders them (each
/// product of two bf16 is exact in f32, so an FMA rounds as its add does).
/// The instruction also treats denormal inputs and results as zero, which
/// the emulation does not. f16 pairs (no instruction: AMX-FP16's tiles'
/// emulation) are emulated alike, each half extended from f16.
static Value bf16Dot(OpBuilder &rewriter, Location loc, Value acc,
                     Value a, Value b, bool native) {
  auto accType = cast<VectorType>(acc.getType());
  auto i32Type = accType.clone(rewriter.getI32Type());
  auto splat = [&](int64_t bits) -> Value {
    return arith::ConstantOp::create(
        rewriter, loc,
        DenseElementsAttr::get(
            i32Type, rewriter.getI32IntegerAttr(static_cast<int32_t>(bits))));
  };
  if (cast<VectorType>(a.getType()).getElementType().isF16()) {
    auto i16Type = accType.clone(rewriter.getI16Type());
    auto f16Type = accType.clone(rewriter.getF16Type());
    auto half = [&](Value pairs, bool odd) -> Value {
      Value words = vector::BitCastOp::create(rewriter, loc, i32Type, pairs);
      if (odd)
        words = arith::ShRUIOp::create(rewriter, loc, words, splat(16));
      Value bits = arith::TruncIOp::create(rewriter, loc, i16Type, words);
      Value halves = arith::BitcastOp::create(rewriter, loc, f16Type, bits);
      return arith::ExtFOp::create(rewriter, loc, accType, halves)
          .getResult();
    };
    acc = math::FmaOp::create(rewriter, loc, half(a, true), half(b, true),
                              acc);
    return math::FmaOp::create(rewriter, loc, half(a, false), half(b, false),
                               acc);
  }
  if (native)
    return x86vector::DotBF16Op::create(rewriter, loc, acc, a, b);
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

/// Whether `op` interleaves two rows of 16-bit elements into pairs,
/// `[1.., 2, N]` to `[1.., N, 2]` with N a multiple of 16 (linformer-cpu-
/// tile-for-vectors' pairedCopy of a streamed operand: the attention core's
/// values and keys on AMX tiles).
static bool interleavesPairRows(vector::TransposeOp op) {
  VectorType type = op.getSourceVectorType();
  ArrayRef<int64_t> shape = type.getShape();
  ArrayRef<int64_t> perm = op.getPermutation();
  int64_t rank = type.getRank();
  if (rank < 2 || type.isScalable() ||
      type.getElementType().getIntOrFloatBitWidth() != 16 ||
      shape[rank - 2] != 2 || shape[rank - 1] % 16 != 0 ||
      llvm::any_of(shape.drop_back(2), [](int64_t d) { return d != 1; }))
    return false;
  return swapsOnly(perm, rank - 2, rank - 1);
}

/// The pairs of an interleaving transpose (interleavesPairRows) as one
/// vector of 2 N elements: one shuffle of 16 + 16 elements (a `vpunpcklwd`
/// and `vpunpckhwd`, or one `vpermt2w`) per 16 columns of the two rows.
static Value interleavedPairRows(OpBuilder &b, Location loc,
                                 vector::TransposeOp op) {
  constexpr int64_t kChunk = 16;
  VectorType type = op.getSourceVectorType();
  int64_t n = type.getShape().back();
  Value flat = vector::ShapeCastOp::create(
      b, loc, VectorType::get({2 * n}, type.getElementType()),
      op.getVector());
  auto flatType = cast<VectorType>(flat.getType());
  Value result = ub::PoisonOp::create(b, loc, flatType);
  SmallVector<int64_t> mask;
  for (int64_t i = 0; i < kChunk; ++i)
    mask.append({i, kChunk + i});
  for (int64_t c = 0; c < n; c += kChunk) {
    auto row = [&](int64_t offset) {
      return vector::ExtractStridedSliceOp::create(
          b, loc, flat, ArrayRef<int64_t>{offset}, ArrayRef<int64_t>{kChunk},
          ArrayRef<int64_t>{1});
    };
    Value pairs =
        vector::ShuffleOp::create(b, loc, row(c), row(n + c), mask);
    result = vector::InsertStridedSliceOp::create(
        b, loc, pairs, result, ArrayRef<int64_t>{2 * c},
        ArrayRef<int64_t>{1});
  }
  return result;
}

/// A memref's dims with its last two, a row of pairs, as one.
static SmallVector<ReassociationIndices> pairRowGroups(int64_t rank) {
  SmallVector<ReassociationIndices> groups;
  for (int64_t d = 0; d + 2 < rank; ++d)
    groups.push_back({d});
  groups.push_back({rank - 2, rank - 1});
  return groups;
}

/// Whether a transfer through `base` at `indices` reads or writes rows of
/// pairs: the last two dims `[.., N, 2]` with strides `[2, 1]`, the pair
/// index 0, collapsible into rows of 2 N elements (pairRows).
static bool isPairRows(Value base, ValueRange indices) {
  auto type = dyn_cast<MemRefType>(base.getType());
  if (!type || type.getRank() < 2 || type.getShape().back() != 2 ||
      !isConstantIntValue(indices.back(), 0))
    return false;
  int64_t rank = type.getRank();
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)) ||
      strides[rank - 1] != 1 || strides[rank - 2] != 2)
    return false;
  return memref::CollapseShapeOp::isGuaranteedCollapsible(
      type, pairRowGroups(rank));
}

/// The rows of pairs of `base` (isPairRows) collapsed into rows of 2 N
/// elements, and the transfer's indices into them.
static std::pair<Value, SmallVector<Value>>
pairRows(RewriterBase &rewriter, Location loc, Value base,
         ValueRange indices) {
  Value rows = memref::CollapseShapeOp::create(
      rewriter, loc, base,
      pairRowGroups(cast<MemRefType>(base.getType()).getRank()));
  SmallVector<Value> at(indices.drop_back());
  at.back() = arith::MulIOp::create(
      rewriter, loc, at.back(),
      arith::ConstantIndexOp::create(rewriter, loc, 2));
  return {rows, at};
}

/// A write of interleaved pairs (interleavesPairRows) to rows of pairs
/// that are contiguous (`[.., N, 2]` with strides `[2, 1]`) as one write of
/// the 2 N elements into the two dims collapsed. The generic lowering made
/// one shuffle of all 2 N elements, which LLVM split into about a hundred
/// word shuffles, broadcasts and blends for N = 64, and the write N stores
/// of one pair each (vector transfers are lowered to their innermost dim):
/// the attention core's copy of its values into pairs took 8% of its time
/// on a Xeon with AMX.
struct WriteInterleavedPairRows : OpRewritePattern<vector::TransferWriteOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(vector::TransferWriteOp write,
                                PatternRewriter &rewriter) const override {
    auto transpose = write.getVector().getDefiningOp<vector::TransposeOp>();
    if (!transpose || !interleavesPairRows(transpose) || write.getMask() ||
        write.hasOutOfBoundsDim() ||
        !write.getPermutationMap().isMinorIdentity() ||
        !isPairRows(write.getBase(), write.getIndices()))
      return failure();
    Location loc = write.getLoc();
    auto [rows, indices] =
        pairRows(rewriter, loc, write.getBase(), write.getIndices());
    Value pairs = interleavedPairRows(rewriter, loc, transpose);
    SmallVector<int64_t> shape(write.getVectorType().getRank() - 2, 1);
    shape.push_back(cast<VectorType>(pairs.getType()).getNumElements());
    pairs = vector::ShapeCastOp::create(
        rewriter, loc,
        VectorType::get(shape, write.getVectorType().getElementType()),
        pairs);
    rewriter.replaceOpWithNewOp<vector::TransferWriteOp>(
        write, pairs, rows, indices,
        SmallVector<bool>(shape.size(), true));
    return success();
  }
};

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
                         bool nativeNarrow, bool f16)
      : OpRewritePattern(ctx, /*benefit=*/2), maxLanes(maxLanes),
        native(native), nativeNarrow(nativeNarrow), f16(f16) {}

  LogicalResult matchAndRewrite(vector::ContractionOp op,
                                PatternRewriter &rewriter) const override {
    if (!isBF16TileMatmul(op, f16) || op.getLhsType().getDimSize(1) != 2)
      return rewriter.notifyMatchFailure(op, "not an [m, 2] x [2, n] tile");
    auto accType = cast<VectorType>(op.getAccType());
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
    Value lhs = extendedBF16(rewriter, op.getLhs());
    Value rhs = extendedBF16(rewriter, op.getRhs());

    Location loc = op.getLoc();
    // bf16 pairs, or f16 ones (emulated: no instruction).
    Type pairType = getElementTypeOrSelf(lhs.getType()),
         i16 = rewriter.getI16Type(), i32 = rewriter.getI32Type();
    bool native = this->native && !f16;
    auto pairsType = VectorType::get({2 * lanes}, pairType);
    SmallVector<Value> streamed;
    if (pairsInPlace(op)) {
      // `[n, 2]`: L columns' pairs are 2L consecutive elements, as they
      // are (16-bit words: slices of bf16 vectors are not legal everywhere
      // in LLVM).
      // Flat first: the 1-D load's shape_cast then folds away, where a
      // bitcast of the 2-D shape would be unrolled row by row.
      Value words = vector::BitCastOp::create(
          rewriter, loc, VectorType::get({2 * columns}, i16),
          vector::ShapeCastOp::create(
              rewriter, loc, VectorType::get({2 * columns}, pairType), rhs));
      for (int64_t c = 0; c < columns; c += lanes)
        streamed.push_back(vector::BitCastOp::create(
            rewriter, loc, pairsType,
            vector::ExtractStridedSliceOp::create(rewriter, loc, words, 2 * c,
                                                  2 * lanes, 1)));
    }
    // Else the streamed rows k and k + 1, as 16-bit words (shuffles of
    // bf16 vectors are not legal everywhere in LLVM), interleaved L columns
    // at a time.
    if (streamed.empty()) {
      auto rowType = VectorType::get({columns}, i16);
      Value row0 = vector::BitCastOp::create(
          rewriter, loc, rowType,
          vector::ExtractOp::create(rewriter, loc, rhs, 0));
      Value row1 = vector::BitCastOp::create(
          rewriter, loc, rowType,
          vector::ExtractOp::create(rewriter, loc, rhs, 1));
      for (int64_t c = 0; c < columns; c += lanes) {
        SmallVector<int64_t> mask;
        for (int64_t l = 0; l < lanes; ++l) {
          mask.push_back(c + l);
          mask.push_back(columns + c + l);
        }
        Value words =
            vector::ShuffleOp::create(rewriter, loc, row0, row1, mask);
        streamed.push_back(
            vector::BitCastOp::create(rewriter, loc, pairsType, words));
      }
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
  /// The pairs are f16 (emulated: no instruction), not bf16.
  bool f16;
};


/// `acc + a b` for tiles of AMX's `tdpbf16ps` as vectors: `a` [m, 2p] bf16,
/// `b` [p, 2n] bf16 (row i holds the pairs of factors i of n columns,
/// interleaved), `acc` [m, n] f32: `acc[r][c] += a[r][2i+1] b[i][2c+1] +
/// a[r][2i] b[i][2c]` for each pair i in turn, as the instruction sums
/// (flushing no denormals): one dot product per row and pair, row r's pair
/// i broadcast against row i of `b`.
static Value emulatedTileMulF(OpBuilder &rewriter, Location loc, Value a,
                              Value b, Value acc, bool nativeDot,
                              bool nativeNarrowDot) {
  auto accType = cast<VectorType>(acc.getType());
  int64_t rows = accType.getDimSize(0), lanes = accType.getDimSize(1);
  int64_t pairs = cast<VectorType>(a.getType()).getDimSize(1) / 2;
  auto wordsType = VectorType::get({pairs}, rewriter.getI32Type());
  auto laneWords = VectorType::get({lanes}, rewriter.getI32Type());
  auto pairsType = VectorType::get(
      {2 * lanes}, cast<VectorType>(a.getType()).getElementType());
  bool native = lanes == 16 ? nativeDot
                            : nativeDot && nativeNarrowDot &&
                                  (lanes == 8 || lanes == 4);
  Value result = acc;
  for (int64_t r = 0; r < rows; ++r) {
    Value words = vector::BitCastOp::create(
        rewriter, loc, wordsType,
        vector::ExtractOp::create(rewriter, loc, a, r));
    Value row = vector::ExtractOp::create(rewriter, loc, result, r);
    for (int64_t p = 0; p < pairs; ++p) {
      Value word = vector::ExtractOp::create(rewriter, loc, words, p);
      Value broadcast = vector::BitCastOp::create(
          rewriter, loc, pairsType,
          vector::BroadcastOp::create(rewriter, loc, laneWords, word));
      Value streamed = vector::ExtractOp::create(rewriter, loc, b, p);
      row = bf16Dot(rewriter, loc, row, broadcast, streamed, native);
    }
    result = vector::InsertOp::create(rewriter, loc, row, result, r);
  }
  return result;
}

/// The tiles of an AMX register-tile loop: `amx.tile`s where the target
/// has AMX-BF16, else vectors of the tiles' shapes and the instructions'
/// arithmetic (emulatedTileMulF), so that the same loop, its addresses and
/// its order of sums, runs and is checked against the reference on any x86
/// CPU. A tile's rows are the buffer's second innermost dimension (an AMX
/// load's implicit stride; a vector transfer's minor identity).
struct AMXTiles {
  bool native, nativeDot, nativeNarrowDot;

  Value zero(OpBuilder &b, Location loc, ArrayRef<int64_t> shape) const {
    if (native)
      return amx::TileZeroOp::create(
          b, loc, amx::TileType::get(shape, b.getF32Type()));
    auto type = VectorType::get(shape, b.getF32Type());
    return arith::ConstantOp::create(b, loc, type, b.getZeroAttr(type));
  }
  Value load(OpBuilder &b, Location loc, ArrayRef<int64_t> shape, Value base,
             ValueRange indices) const {
    Type element = cast<MemRefType>(base.getType()).getElementType();
    if (native)
      return amx::TileLoadOp::create(b, loc, amx::TileType::get(shape, element),
                                     base, indices);
    SmallVector<bool> inBounds(2, true);
    return vector::TransferReadOp::create(
        b, loc, VectorType::get(shape, element), base, indices, std::nullopt,
        ArrayRef<bool>(inBounds));
  }
  /// A tile whose every row is the `shape[1]` elements at `indices` (an
  /// AMX load of stride 0).
  Value loadRow(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                Value base, ValueRange indices) const {
    Type element = cast<MemRefType>(base.getType()).getElementType();
    if (native)
      return amx::TileLoadOp::create(
          b, loc, amx::TileType::get(shape, element), base, indices,
          arith::ConstantIndexOp::create(b, loc, 0));
    SmallVector<bool> inBounds(1, true);
    Value row = vector::TransferReadOp::create(
        b, loc, VectorType::get({shape[1]}, element), base, indices,
        std::nullopt, ArrayRef<bool>(inBounds));
    return vector::BroadcastOp::create(b, loc, VectorType::get(shape, element),
                                       row);
  }
  void store(OpBuilder &b, Location loc, Value tile, Value base,
             ValueRange indices) const {
    if (native) {
      amx::TileStoreOp::create(b, loc, base, indices, tile);
      return;
    }
    SmallVector<bool> inBounds(2, true);
    vector::TransferWriteOp::create(b, loc, tile, base, indices,
                                    ArrayRef<bool>(inBounds));
  }
  Value mul(OpBuilder &b, Location loc, Value lhs, Value rhs, Value acc) const {
    if (native)
      return amx::TileMulFOp::create(b, loc, acc.getType(), lhs, rhs, acc);
    return emulatedTileMulF(b, loc, lhs, rhs, acc, nativeDot, nativeNarrowDot);
  }
};

/// How much `v`, an index of a read in `loop`'s body, grows when the loop's
/// induction variable grows by `step`: 0 for a value defined outside the
/// loop, `step` for the variable itself, the constant difference for an
/// affine.apply of it and loop-invariant values; nullopt otherwise.
static std::optional<int64_t> growthPerStep(scf::ForOp loop, Value v,
                                            int64_t step) {
  Value iv = loop.getInductionVar();
  if (v == iv)
    return step;
  if (loop.isDefinedOutsideOfLoop(v))
    return 0;
  auto apply = v.getDefiningOp<affine::AffineApplyOp>();
  if (!apply || apply->getBlock() != loop.getBody())
    return std::nullopt;
  AffineMap map = apply.getAffineMap();
  MLIRContext *ctx = loop.getContext();
  SmallVector<AffineExpr> dims, symbols;
  for (auto [i, operand] : llvm::enumerate(apply.getMapOperands())) {
    bool isDim = i < map.getNumDims();
    AffineExpr x = isDim ? getAffineDimExpr(i, ctx)
                         : getAffineSymbolExpr(i - map.getNumDims(), ctx);
    if (operand == iv)
      x = x + step;
    else if (!loop.isDefinedOutsideOfLoop(operand))
      return std::nullopt;
    (isDim ? dims : symbols).push_back(x);
  }
  AffineExpr e = map.getResult(0);
  AffineExpr delta =
      simplifyAffineExpr(e.replaceDimsAndSymbols(dims, symbols) - e,
                         map.getNumDims(), map.getNumSymbols());
  if (auto c = dyn_cast<AffineConstantExpr>(delta))
    return c.getValue();
  return std::nullopt;
}

/// Whether `xfer` reads or writes `element`s of a memref along its
/// innermost dims, contiguous in the innermost one, in bounds and unmasked,
/// as a vector that is `trailing` after unit dims: what an AMX tile load or
/// store (or its emulation) can take in its place.
static bool accessesRows(VectorTransferOpInterface xfer, Type element,
                         ArrayRef<int64_t> trailing) {
  auto type = dyn_cast<MemRefType>(xfer.getBase().getType());
  if (!type || xfer.getVectorType().getElementType() != element ||
      !xfer.getPermutationMap().isMinorIdentity() ||
      xfer.hasOutOfBoundsDim() || xfer.getMask())
    return false;
  ArrayRef<int64_t> shape = xfer.getVectorType().getShape();
  if (shape.size() < trailing.size() ||
      shape.take_back(trailing.size()) != trailing ||
      llvm::any_of(shape.drop_back(trailing.size()),
                   [](int64_t d) { return d != 1; }))
    return false;
  SmallVector<int64_t> strides;
  int64_t offset;
  return succeeded(type.getStridesAndOffset(strides, offset)) &&
         strides.back() == 1;
}

/// The read of one row of `columns` f32 (a bias) that `init`, a register
/// tile's initial accumulators, broadcasts to every row, through shape
/// casts of unit dims; null for any other init.
static vector::TransferReadOp broadcastRow(Value init, int64_t columns) {
  if (auto cast = init.getDefiningOp<vector::ShapeCastOp>())
    init = cast.getSource();
  auto broadcast = init.getDefiningOp<vector::BroadcastOp>();
  if (!broadcast)
    return nullptr;
  Value source = broadcast.getSource();
  if (auto cast = source.getDefiningOp<vector::ShapeCastOp>())
    source = cast.getSource();
  auto read = source.getDefiningOp<vector::TransferReadOp>();
  if (!read ||
      !accessesRows(read, Float32Type::get(init.getContext()), {columns}) ||
      broadcast.getResultVectorType().getShape().back() != columns)
    return nullptr;
  return read;
}

/// The bf16 (or f16) transfer_read that `v` (an operand of a contraction)
/// extends, through shape casts, if it reads rows a tile can
/// (accessesRows).
static vector::TransferReadOp extendedRead(Value v,
                                           ArrayRef<int64_t> trailing) {
  while (true) {
    if (auto cast = v.getDefiningOp<vector::ShapeCastOp>())
      v = cast.getSource();
    else if (auto ext = v.getDefiningOp<arith::ExtFOp>())
      v = ext.getIn();
    else
      break;
  }
  auto read = v.getDefiningOp<vector::TransferReadOp>();
  Type element = getElementTypeOrSelf(v.getType());
  if (!read || !(element.isBF16() || element.isF16()) ||
      !accessesRows(read, element, trailing))
    return {};
  return read;
}

/// Whether `base` is a view of a kernel argument that holds packed
/// sequences: linformer-packed-sequences finds each load's row through the
/// lengths, which a tile of 16 rows, one load, cannot do (its rows could
/// run past a sequence's last real token into the next, or past the
/// buffer).
static bool viewsPackedSequence(Value base) {
  auto arg = dyn_cast<BlockArgument>(
      memref::skipViewLikeOps(cast<MemrefValue>(base)));
  auto fn = arg ? dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp())
                : func::FuncOp();
  return fn && fn.getArgAttr(arg.getArgNumber(), kPackedSequenceArgAttrName);
}

namespace {
/// A register tile's loop of bf16 pairs that AMX tiles can take
/// (matchAMXLoop): its contraction and reads, and the tiles it takes.
struct AMXLoop {
  static constexpr int64_t kPairs = 16, kRows = 16, kColumns = 16,
                           kTileRegisters = 8;
  scf::ForOp loop;
  vector::ContractionOp contract;
  vector::TransferReadOp lhsRead, rhsRead;
  /// The register tile, and its tiles: 16-row tiles (one of fewer rows
  /// for fewer than 16) by 16 columns.
  int64_t rows, columns, rowTiles, tileRows, columnTiles;
  /// The panel `[.., pairs, columns, 2]` as `[.., pairs, 2 columns]`.
  SmallVector<ReassociationIndices> collapse;

  /// Accumulator t's indices in a buffer that holds the register tile at
  /// `tile` (its innermost two dims the tile's rows and columns).
  SmallVector<Value> originAt(OpBuilder &b, Location loc, ValueRange tile,
                              int64_t t) const {
    SmallVector<Value> indices(tile.begin(), tile.end());
    int64_t offsets[] = {kRows * (t / columnTiles),
                         kColumns * (t % columnTiles)};
    for (int i : {0, 1}) {
      Value &index = indices[indices.size() - 2 + i];
      index = arith::AddIOp::create(
          b, loc, index, arith::ConstantIndexOp::create(b, loc, offsets[i]));
    }
    return indices;
  }
};
} // namespace

/// `loop` as an AMXLoop (see rewriteAMXLoop), or failure.
static FailureOr<AMXLoop> matchAMXLoop(scf::ForOp loop, bool f16) {
  using L = AMXLoop;
  std::optional<int64_t> lb = getConstantIntValue(loop.getLowerBound());
  std::optional<int64_t> ub = getConstantIntValue(loop.getUpperBound());
  std::optional<int64_t> step = getConstantIntValue(loop.getStep());
  if (loop.getNumRegionIterArgs() != 1 || !lb || *lb != 0 || !step ||
      *step != 2 || (ub && *ub < 2 * L::kPairs))
    return failure();
  AMXLoop m;
  m.loop = loop;
  for (Operation &op : loop.getBody()->without_terminator()) {
    if (auto c = dyn_cast<vector::ContractionOp>(op)) {
      if (m.contract)
        return failure();
      m.contract = c;
    } else if (!isMemoryEffectFree(&op) && !isa<vector::TransferReadOp>(op)) {
      return failure();
    }
  }
  vector::ContractionOp contract = m.contract;
  if (!contract || !isBF16TileMatmul(contract, f16) ||
      !pairsInPlace(contract) ||
      contract.getLhsType().getDimSize(1) != 2)
    return failure();
  // The accumulator: the loop's, through shape casts of unit dims.
  auto through = [](Value v) -> Value {
    if (auto cast = v.getDefiningOp<vector::ShapeCastOp>())
      return cast.getSource();
    return v;
  };
  Value yielded = loop.getBody()->getTerminator()->getOperand(0);
  if (through(contract.getAcc()) != loop.getRegionIterArgs()[0] ||
      through(yielded) != contract.getResult() ||
      !contract.getResult().hasOneUse() ||
      (yielded != contract.getResult() && !yielded.hasOneUse()))
    return failure();
  auto accType = cast<VectorType>(contract.getAccType());
  m.rows = accType.getDimSize(0);
  m.columns = accType.getDimSize(1);
  // The accumulators, a tile of A per 16 rows and the B tile in turn must
  // fit the 8 tile registers.
  m.rowTiles = m.rows <= L::kRows ? 1 : m.rows / L::kRows;
  m.tileRows = std::min(m.rows, L::kRows);
  m.columnTiles = m.columns / L::kColumns;
  if ((m.rows > L::kRows && m.rows % L::kRows != 0) ||
      m.columns % L::kColumns != 0 ||
      m.rowTiles * m.columnTiles + m.rowTiles + 1 > L::kTileRegisters)
    return failure();
  m.lhsRead = extendedRead(contract.getLhs(), {m.rows, 2});
  m.rhsRead = extendedRead(contract.getRhs(), {m.columns, 2});
  if (!m.lhsRead || !m.rhsRead ||
      !loop.isDefinedOutsideOfLoop(m.lhsRead.getBase()) ||
      !loop.isDefinedOutsideOfLoop(m.rhsRead.getBase()) ||
      viewsPackedSequence(m.rhsRead.getBase()))
    return failure();
  // A: rows of contiguous pairs, stepped along its innermost dim.
  auto lhsType = cast<MemRefType>(m.lhsRead.getBase().getType());
  auto rhsType = cast<MemRefType>(m.rhsRead.getBase().getType());
  if (lhsType.getRank() < 2 || rhsType.getRank() < 3 ||
      rhsType.getShape().back() != 2)
    return failure();
  ValueRange lhsIndices = m.lhsRead.getIndices();
  for (auto [i, index] : llvm::enumerate(lhsIndices))
    if (growthPerStep(loop, index, 2) !=
        (i + 1 == lhsIndices.size() ? 2 : 0))
      return failure();
  // B: a panel `[.., pairs, columns, 2]`, one pair a step, its columns and
  // pair slot fixed (the slot 0).
  ValueRange rhsIndices = m.rhsRead.getIndices();
  size_t pairDim = rhsIndices.size() - 3;
  for (auto [i, index] : llvm::enumerate(rhsIndices))
    if (growthPerStep(loop, index, 2) != (i == pairDim ? 1 : 0))
      return failure();
  if (!isConstantIntValue(rhsIndices.back(), 0))
    return failure();
  for (int64_t d = 0; d + 2 < rhsType.getRank(); ++d)
    m.collapse.push_back({d});
  m.collapse.push_back({rhsType.getRank() - 2, rhsType.getRank() - 1});
  if (!memref::CollapseShapeOp::isGuaranteedCollapsible(rhsType, m.collapse))
    return failure();
  return m;
}

/// The read of the whole initial tile `init` (through a shape cast of
/// unit dims) from f32 rows a tile load can take in its place, where
/// nothing between it and `loop` writes memory (a reduction block's
/// partial sums, read back for the next block); else null.
static vector::TransferReadOp wholeTileRead(Value init, scf::ForOp loop,
                                            int64_t rows, int64_t columns) {
  if (auto cast = init.getDefiningOp<vector::ShapeCastOp>())
    init = cast.getSource();
  auto read = init.getDefiningOp<vector::TransferReadOp>();
  if (!read || read->getBlock() != loop->getBlock() ||
      !accessesRows(read, Float32Type::get(init.getContext()),
                    {rows, columns}) ||
      viewsPackedSequence(read.getBase()))
    return {};
  for (Operation *op = read->getNextNode(); op != loop.getOperation();
       op = op->getNextNode())
    if (!isMemoryEffectFree(op) &&
        !isa<vector::TransferReadOp, memref::AllocaOp>(op))
      return {};
  return read;
}

/// The accumulators' tiles before the loop of tiles: zero, a bias row
/// loaded with stride 0 (one row broadcast to every row), the initial tile
/// loaded from where it was read (wholeTileRead), or else the initial
/// tile, written once to `scratch` and loaded from it.
static SmallVector<Value> initialAccumulators(RewriterBase &rewriter,
                                              Location loc, AMXLoop &m,
                                              const AMXTiles &tiles,
                                              Value scratch, scf::ForOp at) {
  Value init = at.getInitArgs()[0];
  SmallVector<int64_t> shape = {m.tileRows, AMXLoop::kColumns};
  bool zero = matchPattern(init, m_AnyZeroFloat()) ||
              matchPattern(init, m_Zero());
  vector::TransferReadOp row = zero ? nullptr : broadcastRow(init, m.columns);
  // Where a tile in memory holds the initial accumulators: where it was
  // read, else the scratch tile, written once.
  Value base;
  SmallVector<Value> origin;
  if (!zero && !row) {
    if (vector::TransferReadOp whole =
            wholeTileRead(init, at, m.rows, m.columns)) {
      base = whole.getBase();
      origin = whole.getIndices();
    } else {
      Value zeroIndex = arith::ConstantIndexOp::create(rewriter, loc, 0);
      auto type = VectorType::get({m.rows, m.columns}, rewriter.getF32Type());
      Value flat = vector::ShapeCastOp::create(rewriter, loc, type, init);
      SmallVector<bool> inBounds(2, true);
      base = scratch;
      origin = {zeroIndex, zeroIndex};
      vector::TransferWriteOp::create(rewriter, loc, flat, scratch, origin,
                                      ArrayRef<bool>(inBounds));
    }
  }
  SmallVector<Value> accumulators;
  for (int64_t t = 0; t < m.rowTiles * m.columnTiles; ++t) {
    if (zero) {
      accumulators.push_back(tiles.zero(rewriter, loc, shape));
    } else if (row) {
      // Every accumulator of a column tile loads that row's 16 columns
      // into each of its rows.
      SmallVector<Value> indices(row.getIndices());
      indices.back() = arith::AddIOp::create(
          rewriter, loc, indices.back(),
          arith::ConstantIndexOp::create(
              rewriter, loc, AMXLoop::kColumns * (t % m.columnTiles)));
      accumulators.push_back(
          tiles.loadRow(rewriter, loc, shape, row.getBase(), indices));
    } else {
      accumulators.push_back(tiles.load(rewriter, loc, shape, base,
                                        m.originAt(rewriter, loc, origin, t)));
    }
  }
  return accumulators;
}

/// One step of the loop of tiles at `iv` (16 pairs from there): the tiles
/// of A (through `staging` for rows of packed sequences), then each tile
/// of B with its products; the accumulators after the step.
static SmallVector<Value> stepTiles(OpBuilder &b, Location loc,
                                    AMXLoop &m, const AMXTiles &tiles,
                                    Value iv, ValueRange accs, Value panel,
                                    Value staging) {
  using L = AMXLoop;
  // A read's index at `iv`: the loop's index computation, cloned.
  IRMapping map;
  map.map(m.loop.getInductionVar(), iv);
  auto at = [&](Value index) -> Value {
    if (m.loop.isDefinedOutsideOfLoop(index))
      return index;
    if (Value mapped = map.lookupOrNull(index))
      return mapped;
    return b.clone(*index.getDefiningOp(), map)->getResult(0);
  };
  auto constant = [&](int64_t c) -> Value {
    return arith::ConstantIndexOp::create(b, loc, c);
  };
  SmallVector<Value> aIndices = llvm::map_to_vector(
      m.lhsRead.getIndices(), [&](Value v) { return at(v); });
  Value aBase = m.lhsRead.getBase();
  if (staging) {
    // Rows of packed sequences: each row's 32 factors on its own (a load
    // linformer-packed-sequences finds through the lengths) into the
    // staging tile, which the tile loads read.
    Value rowIndex = aIndices[aIndices.size() - 2];
    SmallVector<bool> inBounds(1, true);
    auto rowType = VectorType::get(
        {2 * L::kPairs}, cast<MemRefType>(aBase.getType()).getElementType());
    Value padding = ub::PoisonOp::create(b, loc, rowType.getElementType());
    for (int64_t i = 0; i < m.rows; ++i) {
      SmallVector<Value> indices = aIndices;
      indices[indices.size() - 2] =
          arith::AddIOp::create(b, loc, rowIndex, constant(i));
      Value row = vector::TransferReadOp::create(
          b, loc, rowType, aBase, indices, padding, ArrayRef<bool>(inBounds));
      vector::TransferWriteOp::create(b, loc, row, staging,
                                      ValueRange{constant(i), constant(0)},
                                      ArrayRef<bool>(inBounds));
    }
    aBase = staging;
    aIndices = {constant(0), constant(0)};
  }
  SmallVector<Value> aTiles;
  Value firstRow = aIndices[aIndices.size() - 2];
  for (int64_t i = 0; i < m.rowTiles; ++i) {
    SmallVector<Value> indices = aIndices;
    if (i > 0)
      indices[indices.size() - 2] =
          arith::AddIOp::create(b, loc, firstRow, constant(L::kRows * i));
    aTiles.push_back(
        tiles.load(b, loc, {m.tileRows, 2 * L::kPairs}, aBase, indices));
  }
  ValueRange rhsIndices = m.rhsRead.getIndices();
  SmallVector<Value> bIndices;
  for (size_t d = 0; d + 2 < rhsIndices.size(); ++d)
    bIndices.push_back(at(rhsIndices[d]));
  // The panel's columns, flattened with their pairs: 2 c.
  Value first = arith::MulIOp::create(
      b, loc, at(rhsIndices[rhsIndices.size() - 2]), constant(2));
  // Each tile of B in turn, shared by every row tile's product (two rows
  // of tiles: 4 independent accumulators hide the instruction's latency,
  // and each tile loaded feeds two products).
  SmallVector<Value> results(accs.begin(), accs.end());
  for (int64_t j = 0; j < m.columnTiles; ++j) {
    SmallVector<Value> indices = bIndices;
    indices.push_back(
        arith::AddIOp::create(b, loc, first, constant(2 * L::kColumns * j)));
    Value bTile =
        tiles.load(b, loc, {L::kPairs, 2 * L::kColumns}, panel, indices);
    for (int64_t i = 0; i < m.rowTiles; ++i) {
      int64_t t = i * m.columnTiles + j;
      results[t] = tiles.mul(b, loc, aTiles[i], bTile, results[t]);
    }
  }
  return results;
}

/// The write that `result` (the register tile `m` covers) goes to
/// and nothing else reads, where the accumulator tiles can be stored there
/// straight: a whole tile (no mask, in bounds, the memref's innermost
/// dimensions the tile's, leading unit dimensions) into f32 rows of unit
/// stride, not of packed sequences (their rows are found one at a time);
/// else null.
static vector::TransferWriteOp soleTileWrite(Value result,
                                             const AMXLoop &m) {
  if (!result.hasOneUse())
    return {};
  auto write = dyn_cast<vector::TransferWriteOp>(*result.getUsers().begin());
  if (!write || write.getValueToStore() != result ||
      !accessesRows(write, Float32Type::get(result.getContext()),
                    {m.rows, m.columns}) ||
      viewsPackedSequence(write.getBase()))
    return {};
  return write;
}

/// The loops around `loop`, innermost first, that do nothing but carry its
/// accumulators: each one's only iter_arg is the next inner loop's init and
/// its yield that loop's result (the output projection's loop over heads
/// around its register tile's loop of channel pairs: one reduction over
/// heads x channels).
static SmallVector<scf::ForOp> carryingLoops(scf::ForOp loop) {
  SmallVector<scf::ForOp> outers;
  scf::ForOp inner = loop;
  while (auto outer = dyn_cast<scf::ForOp>(inner->getParentOp())) {
    if (outer.getNumRegionIterArgs() != 1 ||
        inner.getInitArgs()[0] != outer.getRegionIterArg(0) ||
        !outer.getRegionIterArg(0).hasOneUse() ||
        !inner.getResult(0).hasOneUse() ||
        outer.getBody()->getTerminator()->getOperand(0) != inner.getResult(0))
      break;
    if (llvm::any_of(outer.getBody()->without_terminator(), [&](Operation &op) {
          return &op != inner.getOperation() && !isMemoryEffectFree(&op);
        }))
      break;
    outers.push_back(outer);
    inner = outer;
  }
  return outers;
}

/// `outers` (carryingLoops, innermost first) each also carrying the
/// accumulator tiles, from `accumulators`; the new loops, innermost first.
/// Each yields its new iter_args until the caller yields the tiles.
static SmallVector<scf::ForOp> carryTiles(RewriterBase &rewriter,
                                          ArrayRef<scf::ForOp> outers,
                                          ValueRange accumulators) {
  SmallVector<scf::ForOp> carried;
  ValueRange accs = accumulators;
  for (scf::ForOp outer : llvm::reverse(outers)) {
    rewriter.setInsertionPoint(outer);
    FailureOr<LoopLikeOpInterface> grown =
        cast<LoopLikeOpInterface>(outer.getOperation())
            .replaceWithAdditionalYields(
                rewriter, accs, /*replaceInitOperandUsesInLoop=*/false,
                [](OpBuilder &, Location, ArrayRef<BlockArgument> args) {
                  return SmallVector<Value>(args.begin(), args.end());
                });
    auto loop = cast<scf::ForOp>(grown->getOperation());
    carried.insert(carried.begin(), loop);
    accs = loop.getRegionIterArgs().take_back(accumulators.size());
  }
  return carried;
}

/// A register tile's loop of bf16 pairs (linformer-cpu-tile-for-vectors'
/// pair steps where the engine is AMX) as a loop of AMX tiles, 16 pairs a
/// step:
///
///   scf.for %k = 0 to K step 2 iter_args(%acc)
///     %a = read A[.., r, %k]    : [m, 2]  (m rows' pairs, in place)
///     %b = read B[.., %k/2, c, 0] : [n, 2] (a panel of pairs)
///     %acc' = contract(ext %a, ext %b, %acc)
///
/// becomes one accumulator tile (16 x 16 f32; fewer rows for m < 16) per 16
/// rows and 16 columns, carried by the loop (from zero, or loaded once from
/// the initial tile), and per step one tile of A per 16 rows (16 x 32 bf16,
/// its rows the buffer's rows), then per 16 columns one tile of B (16 pairs
/// x 16 columns, straight from the pair-interleaved panel, the layout
/// `tdpbf16ps` reads) and its `tdpbf16ps` with each tile of A; after the
/// loop the tiles are stored, once, to the f32 tile the rest of the kernel
/// reads, which the loop of pairs takes on from the last whole 32 steps
/// where K (E X's real tokens, say) is no multiple of 32. Loops around it
/// that only carry its accumulators (carryingLoops) carry the tiles
/// instead, so that they are loaded and stored once for the whole
/// reduction. The accumulators, the tiles of A and one of B must fit the 8
/// tile registers (32 x 32: 4 + 2 + 1). A's rows in an argument of packed
/// sequences are copied a row at a time (each found through the lengths by
/// linformer-packed-sequences, clamped past them) into a staging tile each
/// step. Anything else stays with the dot products.
static void rewriteAMXLoop(RewriterBase &rewriter, AMXLoop &m,
                           const AMXTiles &tiles) {
  scf::ForOp loop = m.loop;
  Location loc = loop.getLoc();
  // Whole tiles of 16 pairs; the pairs after the last (a bound that is no
  // multiple of 32: E X's real tokens in a block) stay the loop of pairs,
  // from there.
  std::optional<int64_t> ub = getConstantIntValue(loop.getUpperBound());
  bool remainder = !ub || *ub % (2 * AMXLoop::kPairs) != 0;
  SmallVector<scf::ForOp> outers;
  if (!remainder)
    outers = carryingLoops(loop);
  scf::ForOp outermost = outers.empty() ? loop : outers.back();
  rewriter.setInsertionPoint(outermost);
  Type f32 = rewriter.getF32Type();
  Value scratch = memref::AllocaOp::create(
      rewriter, loc, MemRefType::get({m.rows, m.columns}, f32), ValueRange{},
      rewriter.getI64IntegerAttr(64));
  SmallVector<Value> accumulators =
      initialAccumulators(rewriter, loc, m, tiles, scratch, outermost);
  SmallVector<scf::ForOp> carried = carryTiles(rewriter, outers, accumulators);
  ValueRange accs = accumulators;
  if (!carried.empty())
    accs = carried.front().getRegionIterArgs().take_back(accumulators.size());
  rewriter.setInsertionPoint(loop);
  Value panel = memref::CollapseShapeOp::create(
      rewriter, loc, m.rhsRead.getBase(), m.collapse);
  // A's rows of packed sequences go through a tile of their own each step.
  Value staging;
  if (viewsPackedSequence(m.lhsRead.getBase()))
    staging = memref::AllocaOp::create(
        rewriter, loc,
        MemRefType::get({m.rows, 2 * AMXLoop::kPairs},
                        cast<MemRefType>(m.lhsRead.getBase().getType())
                            .getElementType()),
        ValueRange{}, rewriter.getI64IntegerAttr(64));
  Value newStep =
      arith::ConstantIndexOp::create(rewriter, loc, 2 * AMXLoop::kPairs);
  Value tilesEnd = loop.getUpperBound();
  if (remainder)
    tilesEnd = arith::SubIOp::create(
        rewriter, loc, tilesEnd,
        arith::RemUIOp::create(rewriter, loc, tilesEnd, newStep));
  auto newLoop = scf::ForOp::create(
      rewriter, loc, loop.getLowerBound(), tilesEnd, newStep, accs,
      [&](OpBuilder &b, Location bodyLoc, Value iv, ValueRange stepAccs) {
        scf::YieldOp::create(b, bodyLoc,
                             stepTiles(b, bodyLoc, m, tiles, iv, stepAccs,
                                       panel, staging));
      });
  // The tiles out of the carrying loops, innermost first; the loop of pairs
  // goes (the vector each carrying loop carried now passes through it,
  // unused, for canonicalization to drop).
  ValueRange finalTiles = newLoop.getResults();
  Value result = loop.getResult(0);
  Operation *last = newLoop;
  for (scf::ForOp c : carried) {
    auto yield = cast<scf::YieldOp>(c.getBody()->getTerminator());
    unsigned first = yield.getNumOperands() - finalTiles.size();
    rewriter.modifyOpInPlace(yield, [&] {
      for (auto [i, tile] : llvm::enumerate(finalTiles))
        yield->setOperand(first + i, tile);
    });
    finalTiles = c.getResults().take_back(finalTiles.size());
    result = c.getResult(0);
    last = c;
  }
  if (!carried.empty()) {
    rewriter.replaceAllUsesWith(loop.getResult(0),
                                carried.front().getRegionIterArg(0));
    rewriter.eraseOp(loop);
  }
  // Whole tiles whose one reader stores them: stored there (the f32 tile
  // of a workgroup's results, say), not through the scratch tile and
  // vectors copied out of it. On a Xeon with AMX that copy cost a 32 x 32
  // register tile of K = 512 (the FFN up-projection's) 15% of its time.
  vector::TransferWriteOp write =
      remainder ? nullptr : soleTileWrite(result, m);
  Value zeroIndex;
  if (write) {
    rewriter.setInsertionPoint(write);
  } else {
    rewriter.setInsertionPointAfter(last);
    zeroIndex = arith::ConstantIndexOp::create(rewriter, loc, 0);
  }
  Value base = write ? write.getBase() : scratch;
  SmallVector<Value> origin =
      write ? SmallVector<Value>(write.getIndices())
            : SmallVector<Value>{zeroIndex, zeroIndex};
  for (auto [t, tile] : llvm::enumerate(finalTiles))
    tiles.store(rewriter, loc, tile, base,
                m.originAt(rewriter, loc, origin, int64_t(t)));
  if (write) {
    rewriter.eraseOp(write);
    if (carried.empty())
      rewriter.eraseOp(loop);
    return;
  }
  SmallVector<bool> inBounds(2, true);
  Value read = vector::TransferReadOp::create(
      rewriter, loc, VectorType::get({m.rows, m.columns}, f32), scratch,
      origin, std::nullopt, ArrayRef<bool>(inBounds));
  read = vector::ShapeCastOp::create(
      rewriter, loc, cast<VectorType>(result.getType()), read);
  if (!carried.empty()) {
    rewriter.replaceAllUsesWith(result, read);
    return;
  }
  if (!remainder) {
    rewriter.replaceOp(loop, read);
    return;
  }
  rewriter.modifyOpInPlace(loop, [&] {
    loop.getLowerBoundMutable().assign(tilesEnd);
    loop.getInitArgsMutable()[0].assign(read);
  });
}

struct LowerVectorsPass
    : mlir::linformer::impl::LinformerCPULowerVectorsPassBase<LowerVectorsPass> {
  using Base::Base;
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    // Contractions first: they produce the broadcasts and transposes that
    // the second set lowers. Pairs of bf16 factors first of all, while
    // their extensions are still there to be seen through.
    // The module's CPU target (the host's without one), read once.
    ::linformer::schedule::CPUTarget target = cpuTargetOf(getOperation());
    FailureOr<BF16EngineChoice> engine =
        bf16EngineFor(getOperation(), "bf16-dot", bf16Dot, target, f16);
    if (failed(engine))
      return signalPassFailure();
    // (No CPU has a dot product of f16 pairs that sums in f32.)
    bool nativeDot =
        !f16 && ::linformer::schedule::matrixEngines(target).avx512BF16;
    bool nativeNarrowDot =
        ::linformer::schedule::hasFeature(target, "avx512vl");
    if (engine->engine == BF16Engine::AMX) {
      // Register tiles' loops of pairs as loops of AMX tiles (emulated
      // where the target lacks AMX); what is not one (a width no tile
      // divides, a tile the 8 registers cannot hold, the pairs after a
      // bound's last multiple of 32) stays with the dot products below.
      // Before the pairs' reads are flattened: the tiles read the panels.
      AMXTiles tiles{engine->native, nativeDot, nativeNarrowDot};
      // The loops of pairs first: a rewrite replaces the loops that carry
      // one's accumulators (carryingLoops), which no other one is.
      SmallVector<AMXLoop> loops;
      std::set<int64_t> shapes;
      getOperation().walk([&](scf::ForOp loop) {
        if (FailureOr<AMXLoop> m = matchAMXLoop(loop, f16); succeeded(m)) {
          loops.push_back(*m);
          shapes.insert(m->tileRows);
        }
      });
      // One tile shape a kernel: LLVM configures each tile register's
      // shape once for the function (ldtilecfg), so tiles of fewer rows
      // beside 16-row ones (a workgroup's last 6 rows after 32) need
      // registers of their own, and with the 16-row tiles' 7 its register
      // allocation ran out ("ran out of registers": a d_model-32 model of
      // 76 tokens, random-model soak seed 20261300 case 59). Where shapes
      // mix, the tiles of fewer rows stay with the dot products.
      if (shapes.size() > 1)
        llvm::erase_if(loops, [](const AMXLoop &m) {
          return m.tileRows < AMXLoop::kRows;
        });
      IRRewriter rewriter(ctx);
      for (AMXLoop &m : loops)
        rewriteAMXLoop(rewriter, m, tiles);
    }
    {
      // A step's pairs read in place (`[n, 2]`, contiguous in the panels):
      // one 1-D load of them, which the dot products slice, instead of n
      // loads of two elements.
      SmallVector<Operation *> pairReads;
      getOperation().walk([&](vector::ContractionOp op) {
        if (!isBF16TileMatmul(op, f16) || !pairsInPlace(op))
          return;
        Value rhs = op.getRhs();
        if (auto cast = rhs.getDefiningOp<vector::ShapeCastOp>())
          rhs = cast.getSource();
        if (auto read = rhs.getDefiningOp<arith::ExtFOp>()
                            .getIn()
                            .getDefiningOp<vector::TransferReadOp>())
          pairReads.push_back(read);
      });
      RewritePatternSet patterns(ctx);
      vector::populateFlattenVectorTransferPatterns(patterns);
      // These reads only: left to spread (the driver's default, AnyOp), the
      // flattening reached other transfers, a register tile's store of
      // whole rows among them, one vector over several tokens, which a
      // packed sequence cannot guard row by row.
      GreedyRewriteConfig config;
      config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
      if (!pairReads.empty() &&
          failed(applyOpPatternsGreedily(pairReads, std::move(patterns),
                                         config)))
        return signalPassFailure();
    }
    {
      RewritePatternSet patterns(ctx);
      patterns.add<ContractBF16PairsToDot>(
          ctx, std::max<int64_t>(4, target.lanes()), nativeDot,
          nativeNarrowDot, f16);
      if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
        return signalPassFailure();
    }
    {
      RewritePatternSet patterns(ctx);
      vector::populateVectorContractLoweringPatterns(
          patterns, vector::VectorContractLowering::OuterProduct);
      vector::populateVectorTransferPermutationMapLoweringPatterns(patterns);
      // Transfers of pairs whose permutations the patterns above make
      // into transposes (the core's values and keys on AMX tiles).
      patterns.add<WriteInterleavedPairRows>(ctx, /*benefit=*/2);
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
      patterns.add<GeluFma>(ctx);
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
      // Q^T 8% of its time. With 512-bit vectors a 16 x 16 block in 64
      // (upstream's unpacks and 128-bit lane shuffles), others as 1-D
      // shuffles still.
      if (target.vectorBits >= 256)
        x86vector::avx2::populateSpecializedTransposeLoweringPatterns(
            patterns,
            x86vector::avx2::LoweringOptions().setTransposeOptions(
                x86vector::avx2::TransposeLoweringOptions().lower8x8xf32()));
      vector::populateVectorTransposeLoweringPatterns(
          patterns, target.vectorBits >= 512
                        ? vector::VectorTransposeLowering::Shuffle16x16
                        : vector::VectorTransposeLowering::Shuffle1D);
      vector::populateVectorBroadcastLoweringPatterns(patterns);
      vector::populateVectorShapeCastLoweringPatterns(patterns);
      vector::populateVectorTransferLoweringPatterns(patterns,
                                                     /*maxTransferRank=*/1);
      vector::populateVectorMaskOpLoweringPatterns(patterns);
      // AVX-512F: the target's features say, or a preset's ISA (no
      // features: linformer-opt's isa=avx512).
      bool avx512 =
          ::linformer::schedule::hasFeature(target, "avx512f") ||
          (target.features.empty() && target.isa == "avx512");
      patterns.add<SoftmaxExp2>(ctx, /*scalef=*/avx512);
      patterns.add<ErfRational>(ctx);
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
    // A vector's maximum or minimum likewise ignores the sign of zero (a
    // row's maximum of the attention core's scores on AMX tiles, whose
    // rows are its slots: without nsz LLVM tested each vector's signs and
    // blended, 15% of the core).
    getOperation().walk([](vector::ReductionOp op) {
      if (!isa<FloatType>(op.getSourceVectorType().getElementType()))
        return;
      arith::FastMathFlags add;
      switch (op.getKind()) {
      case vector::CombiningKind::ADD:
      case vector::CombiningKind::MUL:
        add = arith::FastMathFlags::reassoc;
        break;
      case vector::CombiningKind::MAXIMUMF:
      case vector::CombiningKind::MINIMUMF:
        add = arith::FastMathFlags::nsz;
        break;
      default:
        return;
      }
      op.setFastmathAttr(arith::FastMathFlagsAttr::get(
          op.getContext(), op.getFastmath() | add));
    });
  }
};
} // namespace
