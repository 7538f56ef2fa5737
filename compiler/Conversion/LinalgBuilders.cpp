//===- LinalgBuilders.cpp - small builders for linalg on tensors ----------===//
//
// See LinalgBuilders.h.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/LinalgBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AffineMap.h"

using namespace mlir;
using namespace mlir::linformer;

Value mlir::linformer::emptyTensor(OpBuilder &b, Location loc,
                                   ArrayRef<int64_t> shape, Type elementType) {
  return tensor::EmptyOp::create(b, loc, shape, elementType);
}

Value mlir::linformer::filledTensor(OpBuilder &b, Location loc,
                                    ArrayRef<int64_t> shape, Type elementType,
                                    TypedAttr value) {
  Value empty = emptyTensor(b, loc, shape, elementType);
  Value scalar = arith::ConstantOp::create(b, loc, value);
  return linalg::FillOp::create(b, loc, scalar, empty).getResult(0);
}

static AffineMap mapOf(MLIRContext *ctx, unsigned numLoops,
                       ArrayRef<unsigned> dims) {
  SmallVector<AffineExpr> exprs;
  for (unsigned d : dims)
    exprs.push_back(getAffineDimExpr(d, ctx));
  return AffineMap::get(numLoops, 0, exprs, ctx);
}

Value mlir::linformer::buildGeneric(
    OpBuilder &b, Location loc, unsigned numLoops, ValueRange inputs,
    ArrayRef<DimList> inputDims, Value init, const DimList &outputDims,
    ArrayRef<unsigned> reductionDims,
    function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
  MLIRContext *ctx = b.getContext();
  SmallVector<AffineMap> maps;
  for (const DimList &dims : inputDims)
    maps.push_back(mapOf(ctx, numLoops, dims));
  maps.push_back(mapOf(ctx, numLoops, outputDims));
  SmallVector<utils::IteratorType> iterators(numLoops,
                                             utils::IteratorType::parallel);
  for (unsigned d : reductionDims)
    iterators[d] = utils::IteratorType::reduction;
  auto generic = linalg::GenericOp::create(
      b, loc, init.getType(), inputs, init, maps, iterators,
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        linalg::YieldOp::create(nb, nloc, body(nb, nloc, args));
      });
  return generic.getResult(0);
}

Value mlir::linformer::buildContraction(OpBuilder &b, Location loc,
                                        unsigned numLoops, Value a,
                                        const DimList &aDims, Value bOperand,
                                        const DimList &bDims, Value init,
                                        const DimList &outDims,
                                        ArrayRef<unsigned> reductionDims) {
  return buildGeneric(
      b, loc, numLoops, {a, bOperand}, {aDims, bDims}, init, outDims,
      reductionDims, [](OpBuilder &nb, Location nloc, ValueRange args) {
        Value mul = arith::MulFOp::create(nb, nloc, args[0], args[1]);
        return arith::AddFOp::create(nb, nloc, args[2], mul).getResult();
      });
}

Value mlir::linformer::maskBit(OpBuilder &b, Location loc, Value flag) {
  if (flag.getType().isInteger(1))
    return flag;
  Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(flag.getType()));
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, flag, zero);
}

Value mlir::linformer::buildValidTokens(OpBuilder &b, Location loc,
                                        Value lengths, Value mask,
                                        int64_t batch, int64_t seqLen) {
  Value init = emptyTensor(b, loc, {batch, seqLen}, b.getI8Type());
  if (mask) {
    // One byte per token from here on, whatever the mask's type.
    return buildGeneric(
        b, loc, 2, mask, {DimList{0, 1}}, init, DimList{0, 1}, {},
        [](OpBuilder &nb, Location nloc, ValueRange args) {
          return arith::ExtUIOp::create(nb, nloc, nb.getI8Type(),
                                        maskBit(nb, nloc, args[0]))
              .getResult();
        });
  }
  // valid[b, t] = t < lengths[b]
  return buildGeneric(
      b, loc, 2, lengths, {DimList{0}}, init, DimList{0, 1}, {},
      [](OpBuilder &nb, Location nloc, ValueRange args) {
        Value t = linalg::IndexOp::create(nb, nloc, 1);
        Value tInt = arith::IndexCastOp::create(nb, nloc,
                                                args[0].getType(), t);
        Value lt = arith::CmpIOp::create(nb, nloc, arith::CmpIPredicate::slt,
                                         tInt, args[0]);
        return arith::ExtUIOp::create(nb, nloc, nb.getI8Type(), lt)
            .getResult();
      });
}

Value mlir::linformer::buildWindowCounts(OpBuilder &b, Location loc,
                                         Value validTokens, int64_t k,
                                         Type elementType) {
  auto type = cast<RankedTensorType>(validTokens.getType());
  int64_t batch = type.getDimSize(0), n = type.getDimSize(1), w = n / k;
  auto windowsType = RankedTensorType::get({batch, k, w}, b.getI8Type());
  Value windows = tensor::ExpandShapeOp::create(
      b, loc, windowsType, validTokens,
      SmallVector<ReassociationIndices>{{0}, {1, 2}});
  Value init = filledTensor(b, loc, {batch, k}, elementType,
                            b.getZeroAttr(elementType));
  // count[b, j] += valid[b, j, r]
  return buildGeneric(
      b, loc, 3, windows, {DimList{0, 1, 2}}, init, DimList{0, 1}, {2},
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value one = arith::UIToFPOp::create(nb, nloc, elementType, args[0]);
        // args[0] is 0 or 1.
        return arith::AddFOp::create(nb, nloc, args[1], one).getResult();
      });
}

Value mlir::linformer::buildValidSlots(OpBuilder &b, Location loc,
                                       Value lengths, Value mask,
                                       int64_t batch, int64_t seqLen,
                                       int64_t k) {
  Value valid =
      markRoot(buildValidTokens(b, loc, lengths, mask, batch, seqLen));
  return buildSlotFlags(b, loc,
                        buildWindowCounts(b, loc, valid, k, b.getF32Type()));
}

Value mlir::linformer::buildSlotFlags(OpBuilder &b, Location loc,
                                      Value counts) {
  ArrayRef<int64_t> shape = cast<RankedTensorType>(counts.getType()).getShape();
  Value init = emptyTensor(b, loc, shape, b.getI8Type());
  return buildGeneric(
      b, loc, 2, counts, {DimList{0, 1}}, init, DimList{0, 1}, {},
      [](OpBuilder &nb, Location nloc, ValueRange args) {
        Value zero = arith::ConstantOp::create(
            nb, nloc, nb.getZeroAttr(args[0].getType()));
        Value any = arith::CmpFOp::create(nb, nloc, arith::CmpFPredicate::OGT,
                                          args[0], zero);
        return arith::ExtUIOp::create(nb, nloc, nb.getI8Type(), any)
            .getResult();
      });
}

Value mlir::linformer::castFloat(OpBuilder &b, Location loc, Value v,
                                 Type type) {
  if (v.getType() == type)
    return v;
  if (cast<FloatType>(type).getWidth() <
      cast<FloatType>(v.getType()).getWidth())
    return arith::TruncFOp::create(b, loc, type, v);
  return arith::ExtFOp::create(b, loc, type, v);
}

BlockArgument mlir::linformer::markedLengthsArgument(Operation *op) {
  auto fn = op->getParentOfType<func::FuncOp>();
  if (!fn)
    return {};
  return markedLengthsArgument(fn);
}

BlockArgument mlir::linformer::markedLengthsArgument(func::FuncOp fn) {
  for (unsigned i = 0; i < fn.getNumArguments(); ++i)
    if (fn.getArgAttr(i, kLengthsArgAttrName))
      return fn.getArgument(i);
  return {};
}

int64_t mlir::linformer::markedSequenceLength(func::FuncOp fn) {
  int64_t n = 0;
  for (BlockArgument arg : fn.getArguments())
    if (fn.getArgAttr(arg.getArgNumber(), kSequenceArgAttrName))
      if (auto type = dyn_cast<ShapedType>(arg.getType());
          type && type.hasRank() && type.getRank() >= 2 &&
          !type.isDynamicDim(1))
        n = type.getDimSize(1);
  return n;
}

Value mlir::linformer::markRoot(Value v) {
  Operation *op = v.getDefiningOp();
  op->setAttr(kRootAttrName, UnitAttr::get(op->getContext()));
  return v;
}
