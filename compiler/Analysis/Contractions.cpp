//===- Contractions.cpp - a contraction's loops and operands --------------===//
//
// See Contractions.h.
//
//===----------------------------------------------------------------------===//

#include "compiler/Analysis/Contractions.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

std::optional<mlir::linformer::RegisterTileDims>
mlir::linformer::registerTileDims(linalg::LinalgOp op) {
  if (op.getNumDpsInputs() < 2 || op.getNumDpsInits() != 1 ||
      op.getNumReductionLoops() == 0)
    return std::nullopt;
  // The first two inputs are the contraction's operands (a third, a mask,
  // only selects).
  SmallVector<AffineMap> maps = {
      op.getMatchingIndexingMap(op.getDpsInputOperand(0)),
      op.getMatchingIndexingMap(op.getDpsInputOperand(1)),
      op.getMatchingIndexingMap(op.getDpsInitOperand(0))};
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(maps);
  if (failed(dims) || dims->m.empty() || dims->n.empty())
    return std::nullopt;
  // Of several m (n) dims, the one innermost in the result: its rows
  // (columns) are what a register tile spans.
  AffineMap out = maps[2];
  auto innermost = [&](ArrayRef<unsigned> candidates) {
    unsigned best = candidates.front();
    int bestPos = -1;
    for (unsigned d : candidates) {
      std::optional<unsigned> pos =
          out.getResultPosition(getAffineDimExpr(d, op.getContext()));
      if (pos && static_cast<int>(*pos) > bestPos) {
        bestPos = *pos;
        best = d;
      }
    }
    return best;
  };
  unsigned m = innermost(dims->m), n = innermost(dims->n);
  // Columns are vectors: they must be the loop contiguous in the result
  // (operands can come in either order, so "m" may be the contiguous one).
  auto pos = [&](unsigned d) {
    return out.getResultPosition(getAffineDimExpr(d, op.getContext()))
        .value_or(0);
  };
  RegisterTileDims result{m, n, SmallVector<unsigned>(dims->n.begin(), dims->n.end())};
  if (pos(m) > pos(n)) {
    std::swap(result.rows, result.columns);
    result.columnSide.assign(dims->m.begin(), dims->m.end());
  }
  return result;
}

OpOperand *mlir::linformer::streamedOperand(linalg::LinalgOp op,
                                            const RegisterTileDims &dims) {
  for (OpOperand *in : op.getDpsInputOperands()) {
    if (in->getOperandNumber() > 1)
      break; // a third input (a mask) only selects
    AffineMap map = op.getMatchingIndexingMap(in);
    if (map.isFunctionOfDim(dims.columns) && !map.isFunctionOfDim(dims.rows))
      return in;
  }
  return nullptr;
}

bool mlir::linformer::allBF16(linalg::LinalgOp op, bool f16) {
  return llvm::all_of(op.getDpsInputOperands(), [&](OpOperand *in) {
    Type t = getElementTypeOrSelf(in->get().getType());
    return f16 ? t.isF16() : t.isBF16();
  });
}

std::optional<unsigned>
mlir::linformer::pairedReductionDim(linalg::LinalgOp op) {
  std::optional<RegisterTileDims> dims = registerTileDims(op);
  OpOperand *streamed = dims ? streamedOperand(op, *dims) : nullptr;
  if (!streamed)
    return std::nullopt;
  OpOperand *broadcast = op.getDpsInputOperand(1 - streamed->getOperandNumber());
  AffineMap map = op.getMatchingIndexingMap(broadcast);
  if (map.getNumResults() == 0)
    return std::nullopt;
  auto inner = dyn_cast<AffineDimExpr>(map.getResults().back());
  if (!inner)
    return std::nullopt;
  unsigned d = inner.getPosition();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (op.getIteratorTypesArray()[d] != utils::IteratorType::reduction ||
      ShapedType::isDynamic(ranges[d]) || ranges[d] < 2)
    return std::nullopt;
  // A token loop stops at each sequence's length, which may be odd: a pair
  // there would read the padded token after it. Register tiling steps its
  // complete pairs and then the odd token alone (linformer-cpu-tile-for-
  // vectors), which takes an even range (no partial pair to peel besides)
  // and one token a step; tokens split into parts, or masked by the body,
  // stay single steps.
  if (auto bound = op->getAttrOfType<TokenBoundAttr>(kTokenBoundAttrName)) {
    bool token = bound.getToken() == int64_t(d);
    if (bound.getPart() == int64_t(d) ||
        (token && (bound.getPart() >= 0 || bound.getMasked() ||
                   bound.getPerStep() != 1 || ranges[d] % 2 != 0)))
      return std::nullopt;
  }
  return d;
}

Value mlir::linformer::convertedFrom(Value v) {
  auto generic = v.getDefiningOp<linalg::GenericOp>();
  if (!generic || generic.getNumDpsInputs() != 1 ||
      generic.getNumDpsInits() != 1 || generic.getNumReductionLoops() != 0 ||
      !llvm::all_of(generic.getIndexingMapsArray(),
                    [](AffineMap m) { return m.isIdentity(); }))
    return {};
  Block &body = generic.getRegion().front();
  if (body.getOperations().size() != 2)
    return {};
  Operation *conv = &body.front();
  auto yield = dyn_cast<linalg::YieldOp>(body.getTerminator());
  if (!yield || conv->getNumOperands() != 1 ||
      conv->getOperand(0) != body.getArgument(0) ||
      yield.getOperand(0) != conv->getResult(0))
    return {};
  Type in = conv->getOperand(0).getType(), out = conv->getResult(0).getType();
  bool widen = isa<arith::ExtFOp>(conv) && out.isF32() &&
               in.getIntOrFloatBitWidth() == 16;
  bool narrow = isa<arith::TruncFOp>(conv) && in.isF32() &&
                (out.isBF16() || out.isF16());
  if (!widen && !narrow)
    return {};
  return generic.getDpsInputOperand(0)->get();
}

std::optional<mlir::linformer::MatrixArgument>
mlir::linformer::matrixArgumentOf(Value v) {
  MatrixArgument result;
  if (auto expand = v.getDefiningOp<tensor::ExpandShapeOp>()) {
    SmallVector<ReassociationIndices> groups = expand.getReassociationIndices();
    if (groups.size() != 2)
      return std::nullopt;
    result.rowDims = groups[0].size();
    v = expand.getSrc();
  }
  if (Value source = convertedFrom(v)) {
    result.converted = true;
    v = source;
  }
  auto arg = dyn_cast<BlockArgument>(v);
  if (!arg || !isa<FunctionOpInterface>(arg.getOwner()->getParentOp()) ||
      !arg.getOwner()->isEntryBlock())
    return std::nullopt;
  auto type = dyn_cast<RankedTensorType>(arg.getType());
  if (!type || type.getRank() != 2 || !type.hasStaticShape())
    return std::nullopt;
  result.arg = arg;
  return result;
}

OpOperand *mlir::linformer::streamedMatrixArgument(linalg::LinalgOp op) {
  std::optional<RegisterTileDims> dims = registerTileDims(op);
  if (!dims)
    return nullptr;
  OpOperand *streamed = streamedOperand(op, *dims);
  if (!streamed)
    return nullptr;
  std::optional<MatrixArgument> matrix = matrixArgumentOf(streamed->get());
  auto func = op->getParentOfType<FunctionOpInterface>();
  if (!matrix || !func ||
      matrix->arg.getOwner()->getParentOp() != func.getOperation())
    return nullptr;
  AffineMap map = op.getMatchingIndexingMap(streamed);
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  unsigned rank = map.getNumResults();
  for (unsigned i = 0; i < rank; ++i) {
    auto d = dyn_cast<AffineDimExpr>(map.getResult(i));
    if (!d)
      return nullptr;
    bool reduction =
        iterators[d.getPosition()] == utils::IteratorType::reduction;
    bool ok = i < matrix->rowDims ? reduction
              : i + 1 < rank      ? !reduction
                                  : d.getPosition() == dims->columns;
    if (!ok)
      return nullptr;
  }
  return streamed;
}

OpOperand *mlir::linformer::streamedWeight(linalg::LinalgOp op) {
  OpOperand *streamed = streamedMatrixArgument(op);
  if (!streamed)
    return nullptr;
  return isWeightArgument(op->getParentOfType<func::FuncOp>(),
                          matrixArgumentOf(streamed->get())->arg.getArgNumber())
             ? streamed
             : nullptr;
}
