//===- TokenParallelLoops.cpp - token ops to loops that keep their rows -===//
//
// See Passes.td: linformer-cuda-token-parallel-loops lowers each linalg op
// marked `linformer.token_loops` to scf.parallel as
// convert-linalg-to-parallel-loops would, and marks the outer loop with the
// same dimensions, for linformer-cuda-tile-parallel-loops' length rule.
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::linformer {
#define GEN_PASS_DEF_LINFORMERCUDATOKENPARALLELLOOPSPASS
#include "compiler/Passes.h.inc"
} // namespace mlir::linformer

using namespace mlir;

namespace {

struct CUDATokenParallelLoopsPass
    : mlir::linformer::impl::LinformerCUDATokenParallelLoopsPassBase<
          CUDATokenParallelLoopsPass> {
  void runOnOperation() override {
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
      rewriter.eraseOp(op);
    }
  }
};

} // namespace
