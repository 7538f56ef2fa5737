//===- Vectorize.cpp - linalg to vector ops --------------------*- C++ -*-===//
//
// Vectorizes every register-sized linalg op with upstream linalg::vectorize,
// asking for vector.contract on contractions, then cleans up transfers.
//
//===----------------------------------------------------------------------===//

#include "compiler/Codegen/CPU/Passes.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::linformer {
#define GEN_PASS_DEF_LINFORMERCPUVECTORIZEPASS
#include "compiler/Codegen/CPU/Passes.h.inc"
} // namespace mlir::linformer

using namespace mlir;
using namespace mlir::linformer;

namespace {

/// Drops the unit dimensions of a register-tile contraction, keeping one
/// reduction dimension. Register tiling leaves unit loops anywhere in the
/// iteration space (batch, head, all reduction loops but one); upstream's
/// lowering to outer products wants the canonical (m, k) x (k, n) form and
/// upstream only drops *leading parallel* unit dims. Operands are
/// shape_cast (free: the same elements in the same order), so the transfers
/// around the contraction keep their full rank and still pair up for
/// loop-invariant subset hoisting.
struct DropContractUnitDims : OpRewritePattern<vector::ContractionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(vector::ContractionOp op,
                                PatternRewriter &rewriter) const override {
    auto accType = dyn_cast<VectorType>(op.getAccType());
    if (!accType || op.getLhsType().isScalable() ||
        op.getRhsType().isScalable() || accType.isScalable())
      return rewriter.notifyMatchFailure(op, "needs fixed vector operands");
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    unsigned numDims = maps[0].getNumDims();
    SmallVector<int64_t> sizes(numDims, ShapedType::kDynamic);
    ArrayRef<int64_t> shapes[3] = {op.getLhsType().getShape(),
                                   op.getRhsType().getShape(),
                                   accType.getShape()};
    for (auto [map, shape] : llvm::zip(maps, shapes)) {
      if (!map.isProjectedPermutation())
        return rewriter.notifyMatchFailure(op, "maps must be projections");
      for (auto [i, e] : llvm::enumerate(map.getResults()))
        sizes[cast<AffineDimExpr>(e).getPosition()] = shape[i];
    }
    SmallVector<vector::IteratorType> iters = op.getIteratorTypesArray();
    int keepReduction = -1;
    for (unsigned d = 0; d < numDims; ++d)
      if (iters[d] == vector::IteratorType::reduction &&
          (keepReduction < 0 || sizes[d] != 1 ||
           sizes[keepReduction] == 1))
        keepReduction = d;
    SmallVector<unsigned> kept;
    for (unsigned d = 0; d < numDims; ++d)
      if (sizes[d] != 1 || static_cast<int>(d) == keepReduction)
        kept.push_back(d);
    if (kept.size() == numDims)
      return rewriter.notifyMatchFailure(op, "no unit dims to drop");
    // The accumulator must keep a vector shape (a contraction into a
    // 0-d vector is not valid; such reductions stay as they are).
    if (llvm::none_of(maps[2].getResults(), [&](AffineExpr e) {
          return llvm::is_contained(kept,
                                    cast<AffineDimExpr>(e).getPosition());
        }))
      return rewriter.notifyMatchFailure(op, "accumulator would be 0-d");
    DenseMap<unsigned, unsigned> newPos;
    for (auto [i, d] : llvm::enumerate(kept))
      newPos[d] = i;
    MLIRContext *ctx = op.getContext();
    Location loc = op.getLoc();
    SmallVector<AffineMap> newMaps;
    Value operands[3] = {op.getLhs(), op.getRhs(), op.getAcc()};
    SmallVector<Value> newOperands;
    for (auto [map, operand, shape] : llvm::zip(maps, operands, shapes)) {
      SmallVector<AffineExpr> results;
      SmallVector<int64_t> newShape;
      for (auto [i, e] : llvm::enumerate(map.getResults())) {
        unsigned d = cast<AffineDimExpr>(e).getPosition();
        auto it = newPos.find(d);
        if (it == newPos.end())
          continue;
        results.push_back(getAffineDimExpr(it->second, ctx));
        newShape.push_back(shape[i]);
      }
      newMaps.push_back(AffineMap::get(kept.size(), 0, results, ctx));
      auto type = VectorType::get(
          newShape, cast<VectorType>(operand.getType()).getElementType());
      newOperands.push_back(
          vector::ShapeCastOp::create(rewriter, loc, type, operand));
    }
    SmallVector<Attribute> newIters;
    for (unsigned d : kept)
      newIters.push_back(vector::IteratorTypeAttr::get(ctx, iters[d]));
    auto contract = vector::ContractionOp::create(
        rewriter, loc, newOperands[0], newOperands[1], newOperands[2],
        rewriter.getAffineMapArrayAttr(newMaps),
        rewriter.getArrayAttr(newIters), op.getKind());
    rewriter.replaceOpWithNewOp<vector::ShapeCastOp>(op, accType,
                                                     contract.getResult());
    return success();
  }
};

struct VectorizePass
    : mlir::linformer::impl::LinformerCPUVectorizePassBase<VectorizePass> {
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

    // Only once broadcasts and transposes are folded into the contractions'
    // maps (above) do their operands have the (m, k) / (k, n) shapes that
    // dropping unit dims should keep.
    RewritePatternSet dropPatterns(&getContext());
    dropPatterns.add<DropContractUnitDims>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(dropPatterns))))
      return signalPassFailure();
  }
};
} // namespace
