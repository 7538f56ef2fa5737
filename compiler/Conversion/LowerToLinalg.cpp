//===- LowerToLinalg.cpp - Linformer parts to linalg on tensors -*- C++ -*-===//
//
// Lowers linformer.project (every kind, with padding) and
// linformer.attention_core to linalg ops on tensors. The padding semantics
// are those of docs/Spec.md: padded tokens contribute nothing, and a window
// without a real token projects to 0.
//
//===----------------------------------------------------------------------===//

#include "compiler/Analysis/Contractions.h"
#include "compiler/Conversion/LinalgBuilders.h"
#include "compiler/Passes.h"
#include "dialect/IR/LinformerOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <limits>

namespace mlir::linformer {
#define GEN_PASS_DEF_LINFORMERLOWERTOLINALGPASS
#include "compiler/Passes.h.inc"
} // namespace mlir::linformer

using namespace mlir;
using namespace mlir::linformer;

namespace {

Value negInfinity(OpBuilder &b, Location loc, Type et) {
  auto ft = cast<FloatType>(et);
  return arith::ConstantOp::create(
      b, loc, b.getFloatAttr(ft, -std::numeric_limits<double>::infinity()));
}

/// One linformer.project's lowering: its shapes, the zero-filled output,
/// the valid-token flags when padded, and one step a projection kind.
struct ProjectLowering {
  PatternRewriter &rewriter;
  ProjectOp op;
  Location loc;
  RankedTensorType inType, outType;
  Type et;
  int64_t batch, h, n, d, k;
  bool padded;
  Value zeros, validTokens;
  /// Windowed kinds: the input as [b, h, k, w, d], the token flags as
  /// [b, k, w] and the real tokens a window (see `windowed`).
  int64_t w = 0;
  Value windows, validWindows, counts;

  ProjectLowering(PatternRewriter &rewriter, ProjectOp op)
      : rewriter(rewriter), op(op), loc(op.getLoc()),
        inType(op.getInput().getType()), outType(op.getResult().getType()),
        et(inType.getElementType()), batch(inType.getDimSize(0)),
        h(inType.getDimSize(1)), n(inType.getDimSize(2)),
        d(inType.getDimSize(3)), k(outType.getDimSize(2)),
        padded(op.getLengths() || op.getMask()) {
    zeros = filledTensor(rewriter, loc, outType.getShape(), et,
                         rewriter.getZeroAttr(et));
    // validTokens is its own (tiny) kernel: its consumers see it through a
    // reshape, which fusion cannot cross.
    if (padded)
      validTokens = markRoot(buildValidTokens(rewriter, loc, op.getLengths(),
                                              op.getMask(), batch, n));
  }

  /// A padded token replaced by the reduction's neutral element.
  Value maskToken(OpBuilder &b, Location l, Value x, Value flag,
                  bool isMax) const {
    Value neutral =
        isMax ? negInfinity(b, l, et)
              : arith::ConstantOp::create(b, l, b.getZeroAttr(et)).getResult();
    return arith::SelectOp::create(b, l, maskBit(b, l, flag), x, neutral);
  }

  /// out[b, h, j, c] = sum_t E[(h,) j, t] * in[b, h, t, c], padded tokens
  /// zeroed first; loops (b, h, j, t, c).
  Value learned() {
    Value input = op.getInput();
    if (padded)
      input = buildGeneric(
          rewriter, loc, 4, {input, validTokens},
          {DimList{0, 1, 2, 3}, DimList{0, 2}},
          emptyTensor(rewriter, loc, inType.getShape(), et),
          DimList{0, 1, 2, 3}, {},
          [&](OpBuilder &b, Location l, ValueRange args) {
            return maskToken(b, l, args[0], args[1], /*isMax=*/false);
          });
    DimList eDims =
        op.isSharedAcrossHeads() ? DimList{2, 3} : DimList{1, 2, 3};
    return markRoot(buildContraction(rewriter, loc, 5, input,
                                     DimList{0, 1, 3, 4}, op.getWeight(),
                                     eDims, zeros, DimList{0, 1, 2, 4}, {3}));
  }

  /// Windowed kinds see the input as [b, h, k, w, d] and the token flags
  /// as [b, k, w]; loops (b, h, j, r, c), reduction over r. Masking
  /// happens inside the reduction, so nothing between the reshape and the
  /// reduction needs fusing.
  void windowed() {
    w = n / k;
    windows = tensor::ExpandShapeOp::create(
        rewriter, loc, RankedTensorType::get({batch, h, k, w, d}, et),
        op.getInput(),
        SmallVector<ReassociationIndices>{{0}, {1}, {2, 3}, {4}});
    if (!padded)
      return;
    validWindows = tensor::ExpandShapeOp::create(
        rewriter, loc,
        RankedTensorType::get({batch, k, w}, rewriter.getI8Type()),
        validTokens, SmallVector<ReassociationIndices>{{0}, {1, 2}});
    counts = buildWindowCounts(rewriter, loc, validTokens, k,
                               rewriter.getF32Type());
  }

  /// A reduction over each window: combine(acc, x) with x the (masked)
  /// token, times the kernel tap for conv.
  Value windowReduce(Value init, Value weight, const DimList &wDims,
                     bool isMax,
                     function_ref<Value(OpBuilder &, Location, Value, Value)>
                         combine) {
    SmallVector<Value> inputs = {windows};
    SmallVector<DimList> dims = {DimList{0, 1, 2, 3, 4}};
    if (weight) {
      inputs.push_back(weight);
      dims.push_back(wDims);
    }
    if (padded) {
      inputs.push_back(validWindows);
      dims.push_back(DimList{0, 2, 3});
    }
    Value reduced = buildGeneric(
        rewriter, loc, 5, inputs, dims, init, DimList{0, 1, 2, 4}, {3},
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value x = args[0];
          if (weight)
            x = arith::MulFOp::create(b, l, x, args[1]);
          if (padded)
            x = maskToken(b, l, x, args[args.size() - 2], isMax);
          return combine(b, l, args.back(), x);
        });
    // With the lengths an entry argument, the windows' tokens (token =
    // window * w + r) stop at the length: the parts are the windows, and
    // the body masks padded tokens itself, so a tile of several windows
    // may stop at its first window's real tokens. Windows past the
    // length then cost their stores, not n / k steps.
    if (auto arg = dyn_cast_or_null<BlockArgument>(op.getLengths());
        arg && arg == markedLengthsArgument(op))
      reduced.getDefiningOp()->setAttr(
          kTokenBoundAttrName,
          TokenBoundAttr::get(rewriter.getContext(), /*token=*/3,
                              /*batch=*/0, /*part=*/2, /*perPart=*/w,
                              /*masked=*/true));
    return reduced;
  }

  static Value add(OpBuilder &b, Location l, Value acc, Value x) {
    return arith::AddFOp::create(b, l, acc, x);
  }

  /// A strided depthwise convolution: each window's taps times its tokens.
  Value conv() {
    DimList wDims =
        op.isSharedAcrossHeads() ? DimList{4, 3} : DimList{1, 4, 3};
    return windowReduce(zeros, op.getWeight(), wDims, false, add);
  }

  /// Each window's sum over its real tokens, divided by their count
  /// (sum / max(count, 1): an empty window's sum is 0, and stays 0).
  Value meanPool() {
    DimList out4 = {0, 1, 2, 3};
    Value sums = windowReduce(zeros, {}, {}, false, add);
    if (!padded)
      return buildGeneric(
          rewriter, loc, 4, sums, {out4},
          emptyTensor(rewriter, loc, outType.getShape(), et), out4, {},
          [&](OpBuilder &b, Location l, ValueRange args) {
            Value inv = arith::ConstantOp::create(
                b, l, b.getFloatAttr(et, 1.0 / static_cast<double>(w)));
            return arith::MulFOp::create(b, l, args[0], inv).getResult();
          });
    return buildGeneric(
        rewriter, loc, 4, {sums, counts}, {out4, DimList{0, 2}},
        emptyTensor(rewriter, loc, outType.getShape(), et), out4, {},
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value one = arith::ConstantOp::create(b, l, b.getF32FloatAttr(1));
          Value count = arith::MaximumFOp::create(b, l, args[1], one);
          return arith::DivFOp::create(b, l, args[0],
                                       castFloat(b, l, count, et))
              .getResult();
        });
  }

  /// Each window's maximum over its real tokens; a window without one is
  /// -inf there, and projects to 0.
  Value maxPool() {
    DimList out4 = {0, 1, 2, 3};
    Value init = filledTensor(
        rewriter, loc, outType.getShape(), et,
        rewriter.getFloatAttr(et, -std::numeric_limits<double>::infinity()));
    Value maxima = windowReduce(
        init, {}, {}, true, [](OpBuilder &b, Location l, Value acc, Value x) {
          return arith::MaximumFOp::create(b, l, acc, x).getResult();
        });
    if (!padded)
      return maxima;
    return buildGeneric(
        rewriter, loc, 4, {maxima, counts}, {out4, DimList{0, 2}},
        emptyTensor(rewriter, loc, outType.getShape(), et), out4, {},
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value zeroF32 = arith::ConstantOp::create(b, l, b.getF32FloatAttr(0));
          Value any = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGT,
                                            args[1], zeroF32);
          Value zero = arith::ConstantOp::create(b, l, b.getZeroAttr(et));
          return arith::SelectOp::create(b, l, any, args[0], zero).getResult();
        });
  }
};

struct LowerProject : OpRewritePattern<ProjectOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ProjectOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.getInput().getType().hasStaticShape() ||
        !op.getResult().getType().hasStaticShape())
      return rewriter.notifyMatchFailure(op, "needs static shapes");
    ProjectLowering lowering(rewriter, op);
    ProjectionKind kind = op.getKind();
    if (kind == ProjectionKind::learned) {
      rewriter.replaceOp(op, lowering.learned());
      return success();
    }
    lowering.windowed();
    Value out;
    switch (kind) {
    case ProjectionKind::conv:
      out = lowering.conv();
      break;
    case ProjectionKind::mean_pool:
      out = lowering.meanPool();
      break;
    case ProjectionKind::max_pool:
      out = lowering.maxPool();
      break;
    case ProjectionKind::learned:
      llvm_unreachable("handled above");
    }
    rewriter.replaceOp(op, markRoot(out));
    return success();
  }
};

/// One attention core's lowering (see LowerAttentionCore): its shapes, its
/// pooled slots' bound, and a step each for the scores, the softmax and
/// the weighted sum.
struct CoreLowering {
  PatternRewriter &rewriter;
  AttentionCoreOp op;
  Location loc;
  Type et;
  int64_t batch, h, n, d, k;
  SmallVector<int64_t> scoreShape, rowShape;
  DimList all4 = {0, 1, 2, 3};
  /// bf16 pairs (linformer-bf16-products marked the core): both
  /// contractions' factors rounded to bf16 once (per workgroup, after
  /// tiling), the products exact in f32, the sums f32.
  bool pairs;
  /// The pairs' type: bf16, or f16 where the core is also marked
  /// linformer.f16_pairs (AMX-FP16 tiles).
  Type pairType;
  /// Pooled slots past a sequence's length (the core's
  /// linformer.token_bound, per_step the window): the scores' rows, the
  /// softmax over them and the weighted sum's steps stop at
  /// ceil(length / window); the rows left are masked (-inf) below whatever
  /// they hold. Null otherwise.
  TokenBoundAttr slotBound;
  /// On AMX tiles (bf16 pairs, no slot bound, k % 16 == 0, n % 8 == 0):
  /// the scores as S = Q K^T (`[rows, k]`) rather than S^T. Q is then the
  /// tile products' rows as they lie (pairs along the channels), K^T their
  /// streamed operand (copied into pairs per block, as Q^T was), the
  /// softmax reduces along the rows of S, and the exponential writes P in
  /// the pairs' type for `P V`: no transpose of Q, none of P.
  bool untransposed = false;

  CoreLowering(PatternRewriter &rewriter, AttentionCoreOp op)
      : rewriter(rewriter), op(op), loc(op.getLoc()),
        et(getElementTypeOrSelf(op.getQ().getType())) {
    auto qType = cast<RankedTensorType>(op.getQ().getType());
    batch = qType.getDimSize(0);
    h = qType.getDimSize(1);
    n = qType.getDimSize(2);
    d = qType.getDimSize(3);
    k = cast<RankedTensorType>(op.getKey().getType()).getDimSize(2);
    scoreShape = {batch, h, k, n};
    rowShape = {batch, h, n};
    pairs = op->hasAttr(kBF16ScoresAttrName) && et.isF32();
    pairType = op->hasAttr(kF16PairsAttrName)
                   ? Type(rewriter.getF16Type())
                   : Type(rewriter.getBF16Type());
    slotBound = op->getAttrOfType<TokenBoundAttr>(kTokenBoundAttrName);
    if (slotBound && (slotBound.getToken() != 2 || slotBound.getBatch() != 0 ||
                      slotBound.getPerStep() < 2 || !op.getKeyMask()))
      slotBound = {};
    auto engine = op->getAttrOfType<StringAttr>(kBF16EngineAttrName);
    untransposed = pairs && !slotBound && engine &&
                   engine.getValue().starts_with("amx") &&
                   isUntransposedAMXCoreShape(k, n);
    if (untransposed)
      scoreShape = {batch, h, n, k};
  }

  /// The loops of the scores and probabilities (b, h, and the slots' and
  /// the queries' in their order).
  unsigned slotLoop() const { return untransposed ? 3 : 2; }
  DimList rowDims() const {
    return untransposed ? DimList{0, 1, 2} : DimList{0, 1, 3};
  }

  /// The values of the pairs' type `v` extends, if it is such an
  /// extension (a factor linformer-bf16-products had its producing kernel
  /// round).
  static Value bf16Source(Value v, Type pairType) {
    Value source = convertedFrom(v);
    return source && getElementTypeOrSelf(source.getType()) == pairType &&
                   getElementTypeOrSelf(v.getType()).isF32()
               ? source
               : Value();
  }

  /// `v` rounded to the pairs' type (bf16, or f16): the values of that
  /// type it extends, if it does.
  Value round(Value v) {
    if (Value source = bf16Source(v, pairType))
      return source;
    auto shape = cast<RankedTensorType>(v.getType()).getShape();
    return buildGeneric(rewriter, loc, 4, v, {all4},
                        emptyTensor(rewriter, loc, shape, pairType), all4, {},
                        [&](OpBuilder &b, Location l, ValueRange args) {
                          return arith::TruncFOp::create(b, l, pairType,
                                                         args[0])
                              .getResult();
                        });
  }

  /// lhs * rhs + acc on bf16 factors, extended; loops (b, h, row, r, col).
  Value pairedContraction(Value lhs, DimList lhsDims, Value rhs,
                          DimList rhsDims, Value init) {
    return buildGeneric(
        rewriter, loc, 5, {lhs, rhs}, {lhsDims, rhsDims}, init,
        DimList{0, 1, 2, 4}, {3},
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value x = arith::ExtFOp::create(b, l, et, args[0]);
          Value y = arith::ExtFOp::create(b, l, et, args[1]);
          Value product = arith::MulFOp::create(b, l, x, y);
          return arith::AddFOp::create(b, l, args[2], product).getResult();
        });
  }

  /// `v`'s loop `slotLoop` stops at the pooled slots' bound, if any.
  void boundSlots(Value v, int64_t slotLoop, bool masked = false) {
    if (slotBound)
      v.getDefiningOp()->setAttr(
          kTokenBoundAttrName,
          TokenBoundAttr::get(rewriter.getContext(), slotLoop, /*batch=*/0,
                              /*part=*/-1, /*perPart=*/0, masked,
                              slotBound.getPerStep()));
  }

  /// S^T: loops (b, h, j, c, i), reduction c; queries innermost; -inf at
  /// masked slots.
  Value scores() {
    if (untransposed)
      return untransposedScores();
    Value qT = linalg::TransposeOp::create(
                   rewriter, loc, op.getQ(),
                   emptyTensor(rewriter, loc, {batch, h, d, n}, et),
                   ArrayRef<int64_t>{0, 1, 3, 2})
                   .getResult()[0];
    Value zeros = filledTensor(rewriter, loc, scoreShape, et,
                               rewriter.getZeroAttr(et));
    Value scores;
    if (pairs) {
      Value keys = round(op.getKey()), queries = round(qT);
      scores = pairedContraction(keys, DimList{0, 1, 2, 3}, queries,
                                 DimList{0, 1, 3, 4}, zeros);
    } else {
      scores = buildContraction(rewriter, loc, 5, op.getKey(),
                                DimList{0, 1, 2, 3}, qT, DimList{0, 1, 3, 4},
                                zeros, DimList{0, 1, 2, 4}, {3});
    }
    boundSlots(scores, /*slotLoop=*/2);
    if (!op.getKeyMask())
      return scores;
    scores = masked(scores, /*slotLoop=*/2);
    // The select writes every slot it runs over (masked ones -inf):
    // masked, it may run over all of them where its slots are too few to
    // cut (TileForVectors).
    boundSlots(scores, /*slotLoop=*/2, /*masked=*/true);
    return scores;
  }

  /// S: loops (b, h, i, c, j), reduction c; slots innermost; -inf at
  /// masked slots.
  Value untransposedScores() {
    Value zeros = filledTensor(rewriter, loc, scoreShape, et,
                               rewriter.getZeroAttr(et));
    // K^T: where the core reads K as a transpose of K^T (linformer-bf16-
    // products' transposeKeysOnce: a kernel of its own made it), K^T
    // itself; else K transposed here, per query tile.
    Value keysT;
    if (auto t = op.getKey().getDefiningOp<linalg::TransposeOp>();
        t && t.getPermutation() == ArrayRef<int64_t>{0, 1, 3, 2})
      keysT = round(t.getInput());
    else
      keysT = linalg::TransposeOp::create(
                  rewriter, loc, round(op.getKey()),
                  emptyTensor(rewriter, loc, {batch, h, d, k}, pairType),
                  ArrayRef<int64_t>{0, 1, 3, 2})
                  .getResult()[0];
    Value scores = pairedContraction(round(op.getQ()), DimList{0, 1, 2, 3},
                                     keysT, DimList{0, 1, 3, 4}, zeros);
    return op.getKeyMask() ? masked(scores, /*slotLoop=*/3) : scores;
  }

  /// `scores` with -inf at the masked slots (loop `slotLoop`).
  Value masked(Value scores, unsigned slotLoop) {
    return buildGeneric(
        rewriter, loc, 4, {scores, op.getKeyMask()},
        {all4, DimList{0, slotLoop}},
        emptyTensor(rewriter, loc, scoreShape, et), all4, {},
        [&](OpBuilder &b, Location l, ValueRange args) {
          return arith::SelectOp::create(b, l, maskBit(b, l, args[1]), args[0],
                                         negInfinity(b, l, et))
              .getResult();
        });
  }

  /// The row statistics over j (loops (b, h, j, i), reduction j; (b, h,
  /// i, j) untransposed): P^T = exp(scale (S^T - max)) (P) and its row
  /// sums l.
  struct Softmax {
    Value probs, rowSum;
  };
  Softmax softmax(Value scores) {
    DimList rowDims = this->rowDims();
    unsigned slots = slotLoop();
    Value maxInit = filledTensor(
        rewriter, loc, rowShape, et,
        rewriter.getFloatAttr(et, -std::numeric_limits<double>::infinity()));
    Value rowMax = buildGeneric(
        rewriter, loc, 4, scores, {all4}, maxInit, rowDims, {slots},
        [](OpBuilder &b, Location l, ValueRange args) {
          return arith::MaximumFOp::create(b, l, args[1], args[0]).getResult();
        });
    boundSlots(rowMax, slots);
    double scale = op.getScale().convertToDouble();
    // Probabilities that P V rounds to bf16 need no more than an
    // approximate exponential (linformer-cpu-lower-vectors' SoftmaxExp2):
    // its error stays a hundred times below their rounding's.
    arith::FastMathFlags expFlags = pairs && !slotBound
                                        ? arith::FastMathFlags::afn
                                        : arith::FastMathFlags::none;
    Softmax s;
    // Untransposed (AMX tiles), P is written in the pairs' type as it is
    // computed, and l sums those rounded values: one pass over P less
    // (rounding it apart took a tenth of the core), and P V's weights,
    // divided by l, then sum to one as they are.
    Type probType = untransposed ? pairType : et;
    s.probs = buildGeneric(
        rewriter, loc, 4, {scores, rowMax}, {all4, rowDims},
        emptyTensor(rewriter, loc, scoreShape, probType), all4, {},
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value c = arith::ConstantOp::create(b, l, b.getFloatAttr(et, scale));
          Value diff = arith::SubFOp::create(b, l, args[0], args[1]);
          Value scaled = arith::MulFOp::create(b, l, diff, c);
          Value p = math::ExpOp::create(b, l, scaled, expFlags);
          return probType == et
                     ? p
                     : arith::TruncFOp::create(b, l, probType, p).getResult();
        });
    boundSlots(s.probs, slots);
    Value sumInit =
        filledTensor(rewriter, loc, rowShape, et, rewriter.getZeroAttr(et));
    s.rowSum = buildGeneric(
        rewriter, loc, 4, s.probs, {all4}, sumInit, rowDims, {slots},
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value p = args[0];
          if (p.getType() != et)
            p = arith::ExtFOp::create(b, l, et, p);
          return arith::AddFOp::create(b, l, args[1], p).getResult();
        });
    boundSlots(s.rowSum, slots);
    return s;
  }

  /// O: loops (b, h, i, j, c), reduction j; then O / l.
  Value weightedSum(const Softmax &s) {
    auto resultType = cast<RankedTensorType>(op.getResult().getType());
    Value outZeros = filledTensor(rewriter, loc, resultType.getShape(), et,
                                  rewriter.getZeroAttr(et));
    Value weighted;
    if (pairs && !slotBound) {
      // P V on bf16 pairs along the slots: P (not P^T) rounded, so that a
      // row's two probabilities of a pair are one 32-bit element to
      // broadcast; the values rounded once. Not where the slots stop at a
      // length (a pair would straddle it).
      Value probsBF16;
      if (untransposed) {
        // P as it is (written in the pairs' type): a row's pairs along the
        // slots are adjacent.
        probsBF16 = s.probs;
      } else {
        Value p = linalg::TransposeOp::create(
                      rewriter, loc, s.probs,
                      emptyTensor(rewriter, loc, {batch, h, n, k}, et),
                      ArrayRef<int64_t>{0, 1, 3, 2})
                      .getResult()[0];
        probsBF16 = round(p);
      }
      Value values = round(op.getValue());
      weighted = pairedContraction(probsBF16, DimList{0, 1, 2, 3}, values,
                                   DimList{0, 1, 3, 4}, outZeros);
    } else {
      weighted = buildContraction(rewriter, loc, 5, s.probs,
                                  DimList{0, 1, 3, 2}, op.getValue(),
                                  DimList{0, 1, 3, 4}, outZeros,
                                  DimList{0, 1, 2, 4}, {3});
    }
    boundSlots(weighted, /*slotLoop=*/3);
    if (pairs) {
      // A result rounded to bf16 (its reader's products): each row's
      // reciprocal once, then a product per element, not a division per
      // element (a division a vector took 4% of the core on a Xeon with
      // AMX); within an f32 ulp of the quotient.
      Value inverse = buildGeneric(
          rewriter, loc, 3, s.rowSum, {DimList{0, 1, 2}},
          emptyTensor(rewriter, loc, rowShape, et), DimList{0, 1, 2}, {},
          [&](OpBuilder &b, Location l, ValueRange args) {
            Value one =
                arith::ConstantOp::create(b, l, b.getFloatAttr(et, 1.0));
            return arith::DivFOp::create(b, l, one, args[0]).getResult();
          });
      return buildGeneric(
          rewriter, loc, 4, {weighted, inverse}, {all4, DimList{0, 1, 2}},
          emptyTensor(rewriter, loc, resultType.getShape(), et), all4, {},
          [](OpBuilder &b, Location l, ValueRange args) {
            return arith::MulFOp::create(b, l, args[0], args[1]).getResult();
          });
    }
    return buildGeneric(
        rewriter, loc, 4, {weighted, s.rowSum}, {all4, DimList{0, 1, 2}},
        emptyTensor(rewriter, loc, resultType.getShape(), et), all4, {},
        [](OpBuilder &b, Location l, ValueRange args) {
          return arith::DivFOp::create(b, l, args[0], args[1]).getResult();
        });
  }
};

/// The attention core in the transposed form a CPU wants: scores are
/// computed as S^T = K Q^T ([k, rows]), so that
/// - the operand streamed by the score contraction is Q^T (one transpose of
///   the query tile) instead of K^T (a transpose of all k keys per tile);
/// - the softmax reductions run over the rows of S^T: elementwise max/add
///   of vectors of queries, no horizontal reductions;
/// - the scale is applied inside the exponential, exp(scale (s - max)),
///   which equals the softmax of scale * s for scale > 0 (the verifier's
///   rule), and the division by the row sum is deferred to the [rows, dv]
///   output (flash-attention's normalisation), a quarter of the work when
///   k = 4 dv.
///
///   Q^T[b,h,c,i]  = Q[b,h,i,c]
///   S^T[b,h,j,i]  = sum_c K[b,h,j,c] Q^T[b,h,c,i]        (-inf where masked)
///   m[b,h,i]      = max_j S^T[b,h,j,i]
///   P^T[b,h,j,i]  = exp(scale (S^T[b,h,j,i] - m[b,h,i]))
///   l[b,h,i]      = sum_j P^T[b,h,j,i]
///   O[b,h,i,c]    = (sum_j P^T[b,h,j,i] V[b,h,j,c]) / l[b,h,i]
///
/// With bf16 pairs (linformer.bf16_scores) K and Q^T, and for the weighted
/// sum P = (P^T)^T and V, are rounded to bf16 first: each contraction's
/// broadcast operand then has its pairs along the reduction adjacent.
///
/// On AMX tiles (CoreLowering::untransposed) the tile is S = Q K^T instead,
/// the statistics over the innermost slots, P rounded as it lies: the tile
/// products read Q and P in place, and K^T is the streamed operand (made
/// once per layer where linformer-bf16-products transposed K').
struct LowerAttentionCore : OpRewritePattern<AttentionCoreOp> {
  LowerAttentionCore(MLIRContext *context, bool keepFusable)
      : OpRewritePattern(context), keepFusable(keepFusable) {}

  LogicalResult matchAndRewrite(AttentionCoreOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics())
      return rewriter.notifyMatchFailure(op, "lowers on tensors");
    if (keepFusable && isFusable(op))
      return rewriter.notifyMatchFailure(op, "kept for the fused kernel");
    auto qType = cast<RankedTensorType>(op.getQ().getType());
    auto kType = cast<RankedTensorType>(op.getKey().getType());
    auto resultType = cast<RankedTensorType>(op.getResult().getType());
    if (!qType.hasStaticShape() || !kType.hasStaticShape() ||
        !resultType.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "needs static shapes");
    CoreLowering lowering(rewriter, op);
    Value scores = lowering.scores();
    CoreLowering::Softmax softmax = lowering.softmax(scores);
    rewriter.replaceOp(op, lowering.weightedSum(softmax));
    return success();
  }

  /// Whether the CUDA pipeline runs `op` as one kernel: static shapes and
  /// values as wide as the heads.
  static bool isFusable(AttentionCoreOp op) {
    return cast<ShapedType>(op.getQ().getType()).hasStaticShape() &&
           cast<ShapedType>(op.getValue().getType()).hasStaticShape() &&
           op.hasHeadWideValues();
  }

  bool keepFusable;
};

struct LowerToLinalgPass
    : mlir::linformer::impl::LinformerLowerToLinalgPassBase<LowerToLinalgPass> {
  using Base::Base;
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<LowerProject>(&getContext());
    if (lowerCore)
      patterns.add<LowerAttentionCore>(&getContext(), keepFusableCore);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    // What is left that this pass was to lower: a projection, or a core it
    // lowers (not one kept for the fused kernel).
    auto unlowered = [&](Operation *op) {
      if (isa<ProjectOp>(op))
        return true;
      auto core = dyn_cast<AttentionCoreOp>(op);
      return core && lowerCore &&
             !(keepFusableCore && LowerAttentionCore::isFusable(core));
    };
    WalkResult result = getOperation().walk([&](Operation *op) {
      if (!unlowered(op))
        return WalkResult::advance();
      op->emitOpError("cannot be lowered to linalg: code generation needs "
                      "static shapes");
      return WalkResult::interrupt();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
