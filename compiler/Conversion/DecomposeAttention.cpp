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
    Value key = inputProjection(op.getWk(), op.getBk());
    Value value = inputProjection(op.getWv(), op.getBv());

    auto projectedType = RankedTensorType::get({batch, h, k, d}, et);
    ProjectionKind kind = op.getProjection();
    auto keyProj =
        ProjectOp::create(rewriter, loc, projectedType, kind, key, op.getE(),
                          op.getLengths(), op.getMask());
    auto valueProj = ProjectOp::create(rewriter, loc, projectedType, kind,
                                       value, op.getValueProjection(),
                                       op.getLengths(), op.getMask());

    // A learned slot mixes every real token, so it is always valid; a pooled
    // or convolved slot is valid only if its window holds a real token.
    Value keyMask;
    bool padded = op.getLengths() || op.getMask();
    if (padded && kind != ProjectionKind::learned)
      keyMask = buildValidSlots(rewriter, loc, op.getLengths(), op.getMask(),
                                batch, n, k);

    auto core = AttentionCoreOp::create(
        rewriter, loc, RankedTensorType::get({batch, h, n, d}, et), q,
        keyProj, valueProj, keyMask,
        rewriter.getF64FloatAttr(1.0 / std::sqrt(static_cast<double>(d))));
    core->setAttr(kRootAttrName, rewriter.getUnitAttr());

    // concat_h(A) [b, h, n, d] * W_o [h, d, dm] -> [b, n, dm];
    // loops (b, i, h, c, o).
    Value wo3 = tensor::ExpandShapeOp::create(
        rewriter, loc, RankedTensorType::get({h, d, dm}, et), op.getWo(),
        SmallVector<ReassociationIndices>{{0, 1}, {2}});
    Value init = biasInit(rewriter, loc, op.getBo(), {dm}, DimList{2},
                          {batch, n, dm}, et);
    Value out = markRoot(buildContraction(rewriter, loc, 5, core,
                                          DimList{0, 2, 1, 3}, wo3,
                                          DimList{2, 3, 4}, init,
                                          DimList{0, 1, 4}, {2, 3}));
    rewriter.replaceOp(op, out);
    return success();
  }
};

struct DecomposeAttentionPass
    : linformer::impl::LinformerDecomposeAttentionPassBase<
          DecomposeAttentionPass> {
  void runOnOperation() override {
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
