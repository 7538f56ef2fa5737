//===- DecomposeAttention.cpp - split the attention layer -------*- C++ -*-===//
//
// Rewrites linformer.attention into Q/K/V input projections, sequence
// projections, the attention core and the output projection. The input
// projections are contractions that write [b, h, n, d] directly (W viewed as
// [d_model, h, d]), so splitting heads costs no transpose.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/LinalgBuilders.h"
#include "compiler/Passes.h"
#include "dialect/IR/LinformerOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>

namespace mlir::linformer {
#define GEN_PASS_DEF_LINFORMERDECOMPOSEATTENTIONPASS
#include "compiler/Passes.h.inc"
} // namespace mlir::linformer

using namespace mlir;
using namespace mlir::linformer;

namespace {

/// A [b, d0, d1, ...] tensor initialised with a broadcast bias (viewed with
/// `biasShape`, indexed by the loops `biasDims` of `outDims`) or zeros.
Value biasInit(OpBuilder &b, Location loc, Value bias,
               ArrayRef<int64_t> biasShape, const DimList &biasDims,
               ArrayRef<int64_t> outShape, Type elementType) {
  if (!bias)
    return filledTensor(b, loc, outShape, elementType,
                        b.getZeroAttr(elementType));
  Value view = bias;
  if (biasShape.size() != 1) {
    SmallVector<ReassociationIndices> reassociation = {{}};
    for (unsigned i = 0; i < biasShape.size(); ++i)
      reassociation[0].push_back(i);
    view = tensor::ExpandShapeOp::create(
        b, loc, RankedTensorType::get(biasShape, elementType), bias,
        reassociation);
  }
  DimList outDims;
  for (unsigned i = 0; i < outShape.size(); ++i)
    outDims.push_back(i);
  return buildGeneric(b, loc, outShape.size(), view, {biasDims},
                      emptyTensor(b, loc, outShape, elementType), outDims, {},
                      [](OpBuilder &, Location, ValueRange args) {
                        return args[0];
                      });
}

/// The entry's argument that `op` takes its lengths from, when it takes
/// them straight from one (the runtime fills it per run).
BlockArgument lengthsArgument(AttentionOp op) {
  auto arg = dyn_cast_or_null<BlockArgument>(op.getLengths());
  if (!arg || !isa<func::FuncOp>(arg.getOwner()->getParentOp()))
    return {};
  return arg;
}

/// Whether a sequence-parallel layer's windows (pooling, convolution) are
/// split at rank boundaries: each rank projects its own windows to its k /
/// P slots, which an all-gather assembles.
bool gathersSlots(AttentionOp op) {
  return op.getSequenceParallel() &&
         op.getProjection() != ProjectionKind::learned;
}

/// The slots this rank's projection computes: k, or its k / P share.
int64_t rankSlots(AttentionOp op) {
  return gathersSlots(op) ? op.getK() / *op.getSequenceParallel() : op.getK();
}

/// Every rank's `share` of slots along `axis`, in rank order
/// (`linformer.all_gather`): the k slots of a split layer's windows.
Value gatherOverRanks(OpBuilder &b, AttentionOp op, Value share,
                      int64_t axis) {
  auto type = cast<RankedTensorType>(share.getType());
  SmallVector<int64_t> shape(type.getShape());
  shape[axis] *= *op.getSequenceParallel();
  Value init = emptyTensor(b, op.getLoc(), shape, type.getElementType());
  return AllGatherOp::create(b, op.getLoc(), init.getType(), share, init,
                             op.getSequenceParallelAttr(),
                             b.getI64IntegerAttr(axis))
      .getResult();
}

/// The sequence projection applied to X itself, the first half of
/// (E X) W: [b, (h,) k, d_model]. `learned`: sum over real tokens of
/// E[(h,) j, t] X[b, t, :]; `mean_pool`: the mean of the real tokens of each
/// window. Also returns, in `biasScale`, what multiplies the bias in
/// (E X) W + (E 1) b: the sum of E over real tokens ([b, (h,) k]), or for
/// pooling whether the window has a real token ([b, k]); null when the bias
/// applies unscaled.
struct ProjectedInput {
  Value value;
  Value biasScale;
  bool perHead = false;
};

/// E with the columns of padded tokens zeroed, once: E'[b, (h,) j, t] =
/// valid[b, t] ? E[(h,) j, t] : 0 (loops (b, [h,] j, t)), a kernel of its
/// own, so that E X stays a pure multiply-add: a select per step costs as
/// much as the FMA, and E' fused into the workgroups made each build a
/// 512 KiB tile on the heap (E X 9 -> 13 ms on the encoder).
Value zeroPaddedColumns(OpBuilder &b, AttentionOp op, Value e, Value valid,
                        bool perHead) {
  Location loc = op.getLoc();
  Type et = op.getInput().getType().getElementType();
  unsigned o = perHead ? 1 : 0;
  DimList eIn = perHead ? DimList{1, 2, 3} : DimList{1, 2};
  int64_t batch = op.getBatch(), n = op.getSeqLen();
  int64_t h = op.getHeads(), k = op.getK();
  SmallVector<int64_t> eShape = {batch};
  if (perHead)
    eShape.push_back(h);
  eShape.append({k, n});
  DimList eOut = perHead ? DimList{0, 1, 2, 3} : DimList{0, 1, 2};
  Value eOperand = markRoot(buildGeneric(
      b, loc, 3 + o, {e, valid}, {eIn, DimList{0, 2 + o}},
      emptyTensor(b, loc, eShape, et), eOut, {},
      [&](OpBuilder &nb, Location l, ValueRange args) {
        Value zero = arith::ConstantOp::create(nb, l, nb.getZeroAttr(et));
        return arith::SelectOp::create(nb, l, maskBit(nb, l, args[1]),
                                       args[0], zero)
            .getResult();
      }));
  // Its readers stop at the lengths: E X exactly, E's row sums (with
  // biases) at whole steps that mask the tokens past them. Its columns
  // past them are never used, so the CPU need not write them.
  if (lengthsArgument(op))
    eOperand.getDefiningOp()->setAttr(
        kUnreadPaddingAttrName,
        b.getDenseI64ArrayAttr({0, static_cast<int64_t>(2 + o)}));
  return eOperand;
}

/// A sum's step: the accumulator (the last of `args`) plus the term
/// `args[0]`, or with `masked` plus it where `args[1]` flags a valid token
/// and 0 elsewhere.
Value addMaskedTerm(OpBuilder &nb, Location l, ValueRange args, Type et,
                    bool masked) {
  Value v = args[0];
  if (masked) {
    Value zero = arith::ConstantOp::create(nb, l, nb.getZeroAttr(et));
    v = arith::SelectOp::create(nb, l, maskBit(nb, l, args[1]), v, zero);
  }
  return arith::AddFOp::create(nb, l, args.back(), v).getResult();
}

/// (E 1)[b, (h,) j] = sum over real t of E[(h,) j, t], what multiplies
/// the bias in (E X) W + (E 1) b: a kernel of its own (fused into the K/V
/// projections, every workgroup of theirs would sum all n columns again:
/// measured 9 ms per projection on the default encoder). Over E' when
/// padded (its padded columns are 0 where written). With the lengths an
/// argument the sums stop there: their register tiles are vectors along
/// the tokens, so a step may cover tokens past a length, in columns of E'
/// that no one wrote; the body selects them away (a `masked` bound), with
/// the valid tokens as a second input. (That input has the batch loop E'
/// has too, so the op is no contraction to the register tiling; over E
/// itself it would be, and ran 6x slower.) `shape` and `outDims` are E X's.
Value rowSums(OpBuilder &b, AttentionOp op, Value eOperand,
              const DimList &eOperandDims, Value valid, bool perHead,
              ArrayRef<int64_t> shape, const DimList &outDims) {
  Location loc = op.getLoc();
  Type et = op.getInput().getType().getElementType();
  unsigned o = perHead ? 1 : 0;
  SmallVector<int64_t> sumShape(shape.begin(), shape.end() - 1);
  DimList sumOut(outDims.begin(), outDims.end() - 1);
  Value sumZeros = filledTensor(b, loc, sumShape, et, b.getZeroAttr(et));
  bool bounded = valid && lengthsArgument(op);
  SmallVector<Value> sumInputs = {eOperand};
  SmallVector<DimList> sumDims = {eOperandDims};
  if (bounded) {
    sumInputs.push_back(valid);
    sumDims.push_back(DimList{0, 2 + o});
  }
  Value sums = markRoot(buildGeneric(
      b, loc, 3 + o, sumInputs, sumDims, sumZeros, sumOut, {2 + o},
      [&](OpBuilder &nb, Location l, ValueRange args) {
        return addMaskedTerm(nb, l, args, et, bounded);
      }));
  if (bounded)
    sums.getDefiningOp()->setAttr(
        kTokenBoundAttrName,
        TokenBoundAttr::get(b.getContext(), /*token=*/2 + o, /*batch=*/0,
                            /*part=*/-1, /*perPart=*/0, /*masked=*/true));
  return sums;
}

/// `learned`: E X, loops (b, [h,] j, t, m): EX[b, (h,) j, m] += E[(h,) j,
/// t] X[b, t, m], over E' (zeroPaddedColumns) when padded (`valid` the
/// valid-token flags, else null), and with a bias E's row sums.
ProjectedInput projectLearned(OpBuilder &b, AttentionOp op, Value e,
                              Value valid) {
  Location loc = op.getLoc();
  Type et = op.getInput().getType().getElementType();
  int64_t batch = op.getBatch(), dm = op.getModelDim();
  ProjectedInput result;
  bool perHead = cast<RankedTensorType>(e.getType()).getRank() == 3;
  result.perHead = perHead;
  unsigned o = perHead ? 1 : 0; // offset of j, t, m
  unsigned numLoops = 4 + o;
  DimList eDims = perHead ? DimList{1, 2, 3} : DimList{1, 2};
  DimList xDims = {0, 2 + o, 3 + o};
  DimList outDims = perHead ? DimList{0, 1, 2, 4} : DimList{0, 1, 3};
  int64_t h = op.getHeads(), k = op.getK();
  SmallVector<int64_t> shape = {batch};
  if (perHead)
    shape.push_back(h);
  shape.append({k, dm});
  Value eOperand = e;
  DimList eOperandDims = eDims;
  if (valid) {
    eOperand = zeroPaddedColumns(b, op, e, valid, perHead);
    eOperandDims = perHead ? DimList{0, 1, 2, 3} : DimList{0, 1, 2};
  }
  Value zeros = filledTensor(b, loc, shape, et, b.getZeroAttr(et));
  result.value = markRoot(buildContraction(b, loc, numLoops, eOperand,
                                           eOperandDims, op.getInput(), xDims,
                                           zeros, outDims, {2 + o}));
  // E' is zero past each sequence's length, so the tokens there add
  // nothing: with the lengths an argument of the entry, the register
  // tiling stops the token loop at the length (padded rows of X, which
  // the runtime does not compute, are never read).
  if (lengthsArgument(op))
    result.value.getDefiningOp()->setAttr(
        kTokenBoundAttrName,
        TokenBoundAttr::get(b.getContext(), /*token=*/2 + o, /*batch=*/0));
  if (op.getBq())
    result.biasScale = rowSums(b, op, eOperand, eOperandDims, valid, perHead,
                               shape, outDims);
  return result;
}

/// `mean_pool`: the mean of the real tokens of each window; windows [b, k,
/// w, dm], loops (b, j, r, m), reduction r. With a bias and padding, the
/// bias scale says whether a window has a real token.
ProjectedInput projectMeanPool(OpBuilder &b, AttentionOp op, Value valid) {
  Location loc = op.getLoc();
  Type et = op.getInput().getType().getElementType();
  int64_t batch = op.getBatch(), n = op.getSeqLen(), dm = op.getModelDim();
  int64_t k = rankSlots(op);
  bool padded = valid != nullptr;
  ProjectedInput result;
  int64_t w = n / k;
  Value windows = tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get({batch, k, w, dm}, et), op.getInput(),
      SmallVector<ReassociationIndices>{{0}, {1, 2}, {3}});
  SmallVector<Value> inputs = {windows};
  SmallVector<DimList> dims = {DimList{0, 1, 2, 3}};
  Value counts;
  if (padded) {
    inputs.push_back(tensor::ExpandShapeOp::create(
        b, loc, RankedTensorType::get({batch, k, w}, b.getI8Type()), valid,
        SmallVector<ReassociationIndices>{{0}, {1, 2}}));
    dims.push_back(DimList{0, 1, 2});
    counts = buildWindowCounts(b, loc, valid, k, b.getF32Type());
  }
  Value zeros = filledTensor(b, loc, {batch, k, dm}, et, b.getZeroAttr(et));
  Value sums = buildGeneric(
      b, loc, 4, inputs, dims, zeros, DimList{0, 1, 3}, {2},
      [&](OpBuilder &nb, Location l, ValueRange args) {
        return addMaskedTerm(nb, l, args, et, padded);
      });
  // With the lengths an entry argument, the windows' tokens (token =
  // window * w + r) stop at the length, as the unreassociated windows' do
  // (LowerToLinalg): the body masks padded tokens, so a tile of windows may
  // stop at its first window's real tokens. Not a rank's windows: they are
  // gathered, and the core reads every slot (masked), so each is written.
  if (lengthsArgument(op) && !gathersSlots(op))
    sums.getDefiningOp()->setAttr(
        kTokenBoundAttrName,
        TokenBoundAttr::get(b.getContext(), /*token=*/2, /*batch=*/0,
                            /*part=*/1, /*perPart=*/w, /*masked=*/true));
  SmallVector<Value> meanInputs = {sums};
  SmallVector<DimList> meanDims = {DimList{0, 1, 2}};
  if (padded) {
    meanInputs.push_back(counts);
    meanDims.push_back(DimList{0, 1});
  }
  result.value = markRoot(buildGeneric(
      b, loc, 3, meanInputs, meanDims,
      emptyTensor(b, loc, {batch, k, dm}, et), DimList{0, 1, 2}, {},
      [&](OpBuilder &nb, Location l, ValueRange args) {
        if (!padded) {
          Value inv = arith::ConstantOp::create(
              nb, l, nb.getFloatAttr(et, 1.0 / static_cast<double>(w)));
          return arith::MulFOp::create(nb, l, args[0], inv).getResult();
        }
        Value one = arith::ConstantOp::create(nb, l, nb.getF32FloatAttr(1));
        Value count = arith::MaximumFOp::create(nb, l, args[1], one);
        return arith::DivFOp::create(nb, l, args[0],
                                     castFloat(nb, l, count, et))
            .getResult();
      }));
  if (padded && op.getBq()) {
    // A window without a real token projects to 0, bias included.
    result.biasScale = buildGeneric(
        b, loc, 2, counts, {DimList{0, 1}},
        emptyTensor(b, loc, {batch, k}, et), DimList{0, 1}, {},
        [&](OpBuilder &nb, Location l, ValueRange args) {
          Value zero = arith::ConstantOp::create(nb, l, nb.getF32FloatAttr(0));
          Value any = arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OGT,
                                            args[0], zero);
          Value one = arith::ConstantOp::create(nb, l, nb.getFloatAttr(et, 1));
          Value none = arith::ConstantOp::create(nb, l, nb.getZeroAttr(et));
          return arith::SelectOp::create(nb, l, any, one, none).getResult();
        });
  }
  return result;
}


ProjectedInput projectInputImpl(OpBuilder &b, AttentionOp op, Value e) {
  Value valid;
  if (op.getLengths() || op.getMask())
    valid = markRoot(buildValidTokens(b, op.getLoc(), op.getLengths(),
                                      op.getMask(), op.getBatch(),
                                      op.getSeqLen()));
  if (op.getProjection() == ProjectionKind::learned)
    return projectLearned(b, op, e, valid);
  return projectMeanPool(b, op, valid);
}

/// A sequence-parallel layer's sum over its rank's tokens, summed over the
/// ranks (`linformer.all_reduce`); `partial` itself otherwise.
Value sumOverRanks(OpBuilder &b, AttentionOp op, Value partial) {
  if (!partial || !op.getSequenceParallel())
    return partial;
  return AllReduceOp::create(b, op.getLoc(), partial.getType(), partial,
                             op.getSequenceParallelAttr())
      .getResult();
}

/// projectInputImpl summed over the ranks: E X and E's row sums are sums
/// over the tokens (the bias term of (E X) W + (E 1) b too), so each rank's
/// partial sums add up to the whole sequence's, once per layer.
/// Pooled windows split at rank boundaries instead give each rank its
/// slots, which (with the bias scale, a flag per slot) are gathered.
ProjectedInput projectInputOverRanks(OpBuilder &b, AttentionOp op, Value e) {
  ProjectedInput in = projectInputImpl(b, op, e);
  if (gathersSlots(op)) {
    in.value = gatherOverRanks(b, op, in.value, /*axis=*/1);
    if (in.biasScale)
      in.biasScale = gatherOverRanks(b, op, in.biasScale, /*axis=*/1);
    return in;
  }
  in.value = sumOverRanks(b, op, in.value);
  in.biasScale = sumOverRanks(b, op, in.biasScale);
  return in;
}

/// The second half of (E X) W: [b, h, k, d] = EX [b, (h,) k, dm] times W
/// viewed as [dm, h, d], plus the bias scaled by `biasScale`.
Value projectWeightsImpl(OpBuilder &b, AttentionOp op,
                         const ProjectedInput &ex, Value w, Value bias) {
  Location loc = op.getLoc();
  Type et = op.getInput().getType().getElementType();
  int64_t batch = op.getBatch(), dm = op.getModelDim();
  int64_t h = op.getHeads(), d = op.getHeadDim(), k = op.getK();
  SmallVector<int64_t> outShape = {batch, h, k, d};
  Value w3 = tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get({dm, h, d}, et), w,
      SmallVector<ReassociationIndices>{{0}, {1, 2}});
  Value init;
  if (!bias) {
    init = filledTensor(b, loc, outShape, et, b.getZeroAttr(et));
  } else {
    Value bias2 = tensor::ExpandShapeOp::create(
        b, loc, RankedTensorType::get({h, d}, et), bias,
        SmallVector<ReassociationIndices>{{0, 1}});
    SmallVector<Value> inputs = {bias2};
    SmallVector<DimList> dims = {DimList{1, 3}};
    if (ex.biasScale) {
      inputs.push_back(ex.biasScale);
      dims.push_back(ex.perHead ? DimList{0, 1, 2} : DimList{0, 2});
    }
    init = buildGeneric(b, loc, 4, inputs, dims,
                        emptyTensor(b, loc, outShape, et), DimList{0, 1, 2, 3},
                        {}, [&](OpBuilder &nb, Location l, ValueRange args) {
                          if (args.size() == 2)
                            return args[0];
                          return arith::MulFOp::create(nb, l, args[0], args[1])
                              .getResult();
                        });
  }
  // loops (b, h, j, m, c), reduction m.
  DimList exDims = ex.perHead ? DimList{0, 1, 2, 3} : DimList{0, 2, 3};
  return markRoot(buildContraction(b, loc, 5, ex.value, exDims, w3,
                                   DimList{3, 1, 4}, init,
                                   DimList{0, 1, 2, 4}, {3}));
}

/// The core's key mask, [b, k] i8, or null. A learned slot mixes every
/// real token, so it is always valid; a pooled or convolved slot is valid
/// only if its window holds a real token. With ranks, which of the k slots
/// hold one is every rank's count of its own windows' tokens, gathered.
Value validSlots(OpBuilder &b, AttentionOp op) {
  bool padded = op.getLengths() || op.getMask();
  if (!padded || op.getProjection() == ProjectionKind::learned)
    return {};
  Location loc = op.getLoc();
  int64_t batch = op.getBatch(), n = op.getSeqLen();
  if (!gathersSlots(op))
    return buildValidSlots(b, loc, op.getLengths(), op.getMask(), batch, n,
                           op.getK());
  Value valid = markRoot(
      buildValidTokens(b, loc, op.getLengths(), op.getMask(), batch, n));
  Value counts =
      buildWindowCounts(b, loc, valid, rankSlots(op), b.getF32Type());
  return buildSlotFlags(b, loc, gatherOverRanks(b, op, counts, /*axis=*/1));
}

struct DecomposeAttention : OpRewritePattern<AttentionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AttentionOp op,
                                PatternRewriter &rewriter) const override {
    RankedTensorType inputType = op.getInput().getType();
    if (!inputType.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "needs static shapes");
    Location loc = op.getLoc();
    Type et = inputType.getElementType();
    int64_t batch = op.getBatch(), n = op.getSeqLen(), dm = op.getModelDim();
    int64_t h = op.getHeads(), d = op.getHeadDim(), k = op.getK();
    Value x = op.getInput();

    // X [b, n, dm] * W [dm, h, d] -> [b, h, n, d]; loops (b, h, i, m, c):
    // the innermost loop runs along contiguous output channels.
    auto inputProjection = [&](Value w, Value bias) {
      Value w3 = tensor::ExpandShapeOp::create(
          rewriter, loc, RankedTensorType::get({dm, h, d}, et), w,
          SmallVector<ReassociationIndices>{{0}, {1, 2}});
      Value init = biasInit(rewriter, loc, bias, {h, d}, DimList{1, 3},
                            {batch, h, n, d}, et);
      return markRoot(buildContraction(rewriter, loc, 5, x, DimList{0, 2, 3},
                                       w3, DimList{3, 1, 4}, init,
                                       DimList{0, 1, 2, 4}, {3}));
    };
    Value q = inputProjection(op.getWq(), op.getBq());
    ProjectionKind kind = op.getProjection();
    Value keyProj, valueProj;
    if (op.getReassociate().value_or(false)) {
      // (E X) W: the full-length K and V are never materialised.
      ProjectedInput ex = projectInputOverRanks(rewriter, op, op.getE());
      ProjectedInput fx =
          op.getSharing().getKv() || kind == ProjectionKind::mean_pool
              ? ex
              : projectInputOverRanks(rewriter, op, op.getF());
      keyProj = projectWeightsImpl(rewriter, op, ex, op.getWk(), op.getBk());
      valueProj =
          projectWeightsImpl(rewriter, op, fx, op.getWv(), op.getBv());
    } else {
      Value key = inputProjection(op.getWk(), op.getBk());
      Value value = inputProjection(op.getWv(), op.getBv());
      // A learned projection's partial sums add up over the ranks; a rank's
      // windows project to its own slots, gathered in rank order.
      auto projectedType =
          RankedTensorType::get({batch, h, rankSlots(op), d}, et);
      auto kindAttr = ProjectionKindAttr::get(rewriter.getContext(), kind);
      IntegerAttr partialSums =
          gathersSlots(op) ? IntegerAttr() : op.getSequenceParallelAttr();
      // A rank's windows take the lengths as a mask of valid tokens: a
      // projection given the entry's lengths stops at them (LowerToLinalg),
      // leaving the slots past them unwritten, and the gathered slots are
      // all read.
      Value lengths = op.getLengths(), mask = op.getMask();
      if (gathersSlots(op) && lengths) {
        mask = markRoot(
            buildValidTokens(rewriter, loc, lengths, mask, batch, n));
        lengths = Value();
      }
      auto overRanks = [&](Value projected) {
        return gathersSlots(op)
                   ? gatherOverRanks(rewriter, op, projected, /*axis=*/2)
                   : sumOverRanks(rewriter, op, projected);
      };
      keyProj = overRanks(ProjectOp::create(rewriter, loc, projectedType, key,
                                            op.getE(), lengths, mask,
                                            kindAttr, partialSums));
      valueProj = overRanks(ProjectOp::create(
          rewriter, loc, projectedType, value, op.getValueProjection(),
          lengths, mask, kindAttr, partialSums));
    }

    Value keyMask = validSlots(rewriter, op);

    Value coreInit = emptyTensor(rewriter, loc, {batch, h, n, d}, et);
    auto core = AttentionCoreOp::create(
        rewriter, loc, coreInit.getType(), q, keyProj, valueProj, keyMask,
        coreInit,
        rewriter.getF64FloatAttr(1.0 / std::sqrt(static_cast<double>(d))));
    core->setAttr(kRootAttrName, rewriter.getUnitAttr());
    // A pooled or convolved slot j is the window of tokens [j w, (j + 1) w),
    // valid while its first token is real: with the lengths an entry
    // argument, the core's scores and its weighted sum stop at the
    // ceil(length / w) slots that can be (the others are masked, and the
    // CPU does not compute them). Not with ranks: a rank's lengths are its
    // share's, and the slots past them may be other ranks' real ones.
    if (keyMask && lengthsArgument(op) && n / k >= 2 &&
        !op.getSequenceParallel())
      core->setAttr(kTokenBoundAttrName,
                    TokenBoundAttr::get(rewriter.getContext(), /*token=*/2,
                                        /*batch=*/0, /*part=*/-1,
                                        /*perPart=*/0, /*masked=*/false,
                                        /*perStep=*/n / k));

    // concat_h(A) [b, h, n, d] * W_o [h, d, dm] -> [b, n, dm];
    // loops (b, i, h, c, o).
    Value wo3 = tensor::ExpandShapeOp::create(
        rewriter, loc, RankedTensorType::get({h, d, dm}, et), op.getWo(),
        SmallVector<ReassociationIndices>{{0, 1}, {2}});
    Value init = biasInit(rewriter, loc, op.getBo(), {dm}, DimList{2},
                          {batch, n, dm}, et);
    Value out = markRoot(buildContraction(rewriter, loc, 5, core.getResult(),
                                          DimList{0, 2, 1, 3}, wo3,
                                          DimList{2, 3, 4}, init,
                                          DimList{0, 1, 4}, {2, 3}));
    rewriter.replaceOp(op, out);
    return success();
  }
};

struct DecomposeAttentionPass
    : mlir::linformer::impl::LinformerDecomposeAttentionPassBase<
          DecomposeAttentionPass> {
  void runOnOperation() override {
    // The lengths argument is named for the stages that read it per
    // workgroup (the register tiling of the token reductions).
    func::FuncOp fn = getOperation();
    fn.walk([&](AttentionOp op) {
      if (BlockArgument arg = lengthsArgument(op))
        fn.setArgAttr(arg.getArgNumber(), kLengthsArgAttrName,
                      UnitAttr::get(&getContext()));
    });
    RewritePatternSet patterns(&getContext());
    patterns.add<DecomposeAttention>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    // Anything left could not be decomposed: say which and why.
    WalkResult result = getOperation().walk([](AttentionOp op) {
      op.emitOpError("cannot be decomposed: code generation needs static "
                     "shapes, but the input is ")
          << op.getInput().getType();
      return WalkResult::interrupt();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
