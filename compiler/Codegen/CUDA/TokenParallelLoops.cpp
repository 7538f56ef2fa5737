//===- TokenParallelLoops.cpp - token ops to loops that keep their rows -===//
//
// See Passes.td: linformer-cuda-token-parallel-loops lowers each linalg op
// marked `linformer.token_loops` to scf.parallel as
// convert-linalg-to-parallel-loops would, and marks the outer loop with the
// same dimensions, for linformer-cuda-tile-parallel-loops' length rule;
// and each op whose reduction over tokens stops at the lengths
// (`linformer.token_bound`: window sums, E X off the tensor cores) the same
// way, its token loop's trip count then read from the lengths (a window
// sum's slots keep their token loops too).
//
//===----------------------------------------------------------------------===//

#include "compiler/Codegen/CUDA/LoopMapping.h"
#include "compiler/Conversion/LinalgBuilders.h"
#include "compiler/Codegen/CUDA/Passes.h"
#include "dialect/IR/LinformerDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::linformer {
#define GEN_PASS_DEF_LINFORMERCUDATOKENPARALLELLOOPSPASS
#include "compiler/Codegen/CUDA/Passes.h.inc"
} // namespace mlir::linformer

using namespace mlir;

namespace {

using mlir::linformer::TokenBoundAttr;

/// Stops `tokens`, the token loop of a nest whose parallel loop `outer`
/// holds the batch and part loops, at the sequence's length: tokens
/// part * per_part + t with t below min(steps, max(0, len - part *
/// per_part)) (t below min(steps, len) without parts). Past the length the
/// op adds nothing (zeros or masked tokens), so the sum is the same.
void boundTokens(scf::ParallelOp outer, scf::ForOp tokens, TokenBoundAttr bound,
                 Value lengths) {
  OpBuilder b(tokens);
  Location loc = tokens.getLoc();
  SmallVector<Value> ivs = outer.getInductionVars();
  Value length = mlir::linformer::cuda::sequenceLength(b, loc, lengths,
                                                       ivs[bound.getBatch()]);
  if (bound.hasParts()) {
    Value first = arith::MulIOp::create(
        b, loc, ivs[bound.getPart()],
        arith::ConstantIndexOp::create(b, loc, bound.getPerPart()));
    length = arith::MaxSIOp::create(
        b, loc, arith::SubIOp::create(b, loc, length, first),
        arith::ConstantIndexOp::create(b, loc, 0));
  }
  tokens.setUpperBound(
      arith::MinSIOp::create(b, loc, tokens.getUpperBound(), length));
}

struct CUDATokenParallelLoopsPass
    : mlir::linformer::impl::LinformerCUDATokenParallelLoopsPassBase<
          CUDATokenParallelLoopsPass> {
  void runOnOperation() override {
    if (failed(boundReductions()))
      return signalPassFailure();
    SmallVector<linalg::LinalgOp> ops;
    getOperation().walk([&](linalg::LinalgOp op) {
      auto loops = op->getAttrOfType<DenseI64ArrayAttr>(
          mlir::linformer::kTokenLoopsAttrName);
      if (!op.hasPureBufferSemantics() || !loops || loops.size() != 2 ||
          loops[0] < 0 || loops[0] >= loops[1] ||
          loops[1] >= int64_t(op.getNumLoops()))
        return;
      // The outer scf.parallel holds the leading parallel dimensions, in
      // order: the token loops must be among them.
      auto iterators = op.getIteratorTypesArray();
      for (int64_t d = 0; d <= loops[1]; ++d)
        if (iterators[d] != utils::IteratorType::parallel)
          return;
      ops.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : ops) {
      auto loops = op->getAttrOfType<DenseI64ArrayAttr>(
          mlir::linformer::kTokenLoopsAttrName);
      rewriter.setInsertionPoint(op);
      FailureOr<linalg::LinalgLoops> nest =
          linalg::linalgOpToParallelLoops(rewriter, op);
      if (failed(nest) || nest->empty() ||
          !isa<scf::ParallelOp>(nest->front())) {
        op->emitOpError("cannot be lowered to parallel loops");
        return signalPassFailure();
      }
      nest->front()->setAttr(mlir::linformer::kTokenLoopsAttrName, loops);
      if (Attribute slots = op->getAttr(mlir::linformer::kCUDASlotRowsAttrName))
        nest->front()->setAttr(mlir::linformer::kCUDASlotRowsAttrName, slots);
      rewriter.eraseOp(op);
    }
  }

  /// The ops whose token reduction stops at the lengths, as loops.
  LogicalResult boundReductions() {
    SmallVector<std::pair<linalg::LinalgOp, TokenBoundAttr>> ops;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (TokenBoundAttr bound = mlir::linformer::cuda::appliedTokenBound(op))
        ops.emplace_back(op, bound);
    });
    Value lengths = mlir::linformer::markedLengthsArgument(getOperation());
    IRRewriter rewriter(&getContext());
    for (auto [op, bound] : ops) {
      rewriter.setInsertionPoint(op);
      FailureOr<linalg::LinalgLoops> nest =
          linalg::linalgOpToParallelLoops(rewriter, op);
      if (failed(nest) || nest->size() != 2 ||
          !isa<scf::ParallelOp>(nest->front()) ||
          !isa<scf::ForOp>(nest->back())) {
        op->emitOpError("cannot be lowered to parallel loops around its "
                        "token loop");
        return failure();
      }
      auto outer = cast<scf::ParallelOp>(nest->front());
      boundTokens(outer, cast<scf::ForOp>(nest->back()), bound, lengths);
      // A window sum's rows are slots: they keep their rule too.
      for (StringRef name : {mlir::linformer::kTokenLoopsAttrName,
                             mlir::linformer::kCUDASlotRowsAttrName})
        if (Attribute attr = op->getAttr(name))
          outer->setAttr(name, attr);
      rewriter.eraseOp(op);
    }
    return success();
  }
};

} // namespace
