//===- BF16Products.cpp - contractions multiply bf16, accumulate f32 ------===//
//
// Every kernel-root contraction of f32 values (`acc + a * b`) reads its two
// factors as bf16 and extends them in its body, so its products are of bf16
// operands and its sums stay f32; see LinformerBF16ProductsPass in
// Passes.td.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/LinalgBuilders.h"
#include "compiler/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::linformer {
#define GEN_PASS_DEF_LINFORMERBF16PRODUCTSPASS
#include "compiler/Passes.h.inc"
} // namespace mlir::linformer

using namespace mlir;
using namespace mlir::linformer;

namespace {

/// Whether `op` is an elementwise generic (identity maps, one input, one
/// init) whose body is one `arith.extf` or `arith.truncf` of its input.
/// Returns that conversion, or null.
Operation *elementwiseConversion(linalg::GenericOp op) {
  if (!op || op.getNumDpsInputs() != 1 || op.getNumDpsInits() != 1 ||
      op.getNumReductionLoops() != 0 ||
      !llvm::all_of(op.getIndexingMapsArray(),
                    [](AffineMap m) { return m.isIdentity(); }))
    return nullptr;
  Block &body = op.getRegion().front();
  if (body.getOperations().size() != 2)
    return nullptr;
  Operation *conv = &body.front();
  if (!isa<arith::ExtFOp, arith::TruncFOp>(conv) ||
      conv->getOperand(0) != body.getArgument(0) ||
      body.getTerminator()->getOperand(0) != conv->getResult(0))
    return nullptr;
  return conv;
}

/// Whether `op` is `acc + a * b` on f32 scalars: two inputs, one init, at
/// least one reduction loop, the body a `mulf` of the two inputs and an
/// `addf` of it and the accumulator.
bool isF32Contraction(linalg::GenericOp op) {
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      op.getNumReductionLoops() == 0 || op->getNumResults() != 1)
    return false;
  Block &body = op.getRegion().front();
  if (body.getOperations().size() != 3 ||
      llvm::any_of(body.getArgumentTypes(),
                   [](Type t) { return !t.isF32(); }))
    return false;
  auto mul = dyn_cast<arith::MulFOp>(&body.front());
  auto add = dyn_cast<arith::AddFOp>(mul ? mul->getNextNode() : nullptr);
  if (!mul || !add || body.getTerminator()->getOperand(0) != add.getResult())
    return false;
  Value a = body.getArgument(0), b = body.getArgument(1),
        acc = body.getArgument(2);
  bool factors = (mul.getLhs() == a && mul.getRhs() == b) ||
                 (mul.getLhs() == b && mul.getRhs() == a);
  bool sum = (add.getLhs() == acc && add.getRhs() == mul.getResult()) ||
             (add.getRhs() == acc && add.getLhs() == mul.getResult());
  return factors && sum;
}

struct BF16ProductsPass
    : mlir::linformer::impl::LinformerBF16ProductsPassBase<BF16ProductsPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    converted.clear();
    SmallVector<linalg::GenericOp> contractions;
    func.walk([&](linalg::GenericOp op) {
      if (op->hasAttr(kRootAttrName) && isF32Contraction(op))
        contractions.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::GenericOp op : contractions) {
      SmallVector<Value> inputs;
      for (OpOperand *in : op.getDpsInputOperands())
        inputs.push_back(asBF16(rewriter, in->get()));
      rewriter.setInsertionPoint(op);
      auto narrow = linalg::GenericOp::create(
          rewriter, op.getLoc(), op->getResultTypes(), inputs,
          op.getDpsInits(), op.getIndexingMapsArray(),
          op.getIteratorTypesArray(),
          [&](OpBuilder &b, Location loc, ValueRange args) {
            // The original body with the factors extended: bf16 times bf16
            // is exact in f32, so only the sums round.
            Block &body = op.getRegion().front();
            IRMapping map;
            for (unsigned i = 0; i < 2; ++i)
              map.map(body.getArgument(i),
                      arith::ExtFOp::create(b, loc, b.getF32Type(), args[i])
                          .getResult());
            map.map(body.getArgument(2), args[2]);
            for (Operation &inner : body.getOperations())
              b.clone(inner, map);
          });
      narrow->setDiscardableAttrs(op->getDiscardableAttrDictionary());
      rewriter.replaceOp(op, narrow->getResults());
    }
  }

  /// `v` (f32) as the bf16 tensor its contractions read: the bf16 value it
  /// was extended from, a reshape of such a value, or `v` rounded to nearest
  /// even by an elementwise generic of its own (one per value, shared by
  /// every contraction that reads it; fused into them, or a kernel's
  /// epilogue, by tiling).
  Value asBF16(IRRewriter &rewriter, Value v) {
    if (Value known = converted.lookup(v))
      return known;
    Type bf16 = rewriter.getBF16Type();
    Value result;
    if (auto generic = v.getDefiningOp<linalg::GenericOp>();
        generic && isa_and_nonnull<arith::ExtFOp>(
                       elementwiseConversion(generic)) &&
        getElementTypeOrSelf(generic.getDpsInputOperand(0)->get().getType())
            .isBF16()) {
      result = generic.getDpsInputOperand(0)->get();
    } else if (auto expand = v.getDefiningOp<tensor::ExpandShapeOp>()) {
      Value src = asBF16(rewriter, expand.getSrc());
      rewriter.setInsertionPointAfter(expand);
      result = tensor::ExpandShapeOp::create(
          rewriter, expand.getLoc(), expand.getResultType().clone(bf16), src,
          expand.getReassociationIndices());
    } else if (auto collapse = v.getDefiningOp<tensor::CollapseShapeOp>()) {
      Value src = asBF16(rewriter, collapse.getSrc());
      rewriter.setInsertionPointAfter(collapse);
      result = tensor::CollapseShapeOp::create(
          rewriter, collapse.getLoc(), src, collapse.getReassociationIndices());
    } else {
      if (Operation *def = v.getDefiningOp())
        rewriter.setInsertionPointAfter(def);
      else
        rewriter.setInsertionPointToStart(
            cast<BlockArgument>(v).getOwner());
      auto type = cast<RankedTensorType>(v.getType());
      unsigned rank = type.getRank();
      DimList all;
      for (unsigned d = 0; d < rank; ++d)
        all.push_back(d);
      result = buildGeneric(
          rewriter, v.getLoc(), rank, v, {all},
          emptyTensor(rewriter, v.getLoc(), type.getShape(), bf16), all, {},
          [&](OpBuilder &b, Location loc, ValueRange args) {
            return arith::TruncFOp::create(b, loc, bf16, args[0]).getResult();
          });
    }
    converted[v] = result;
    return result;
  }

  DenseMap<Value, Value> converted;
};
} // namespace
