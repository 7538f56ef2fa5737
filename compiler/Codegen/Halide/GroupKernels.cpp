//===- GroupKernels.cpp - the Halide generator's kernels --------*- C++ -*-===//
//
// See LinformerHalideGroupKernelsPass in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::linformer {
#define GEN_PASS_DEF_LINFORMERHALIDEGROUPKERNELSPASS
#include "compiler/Passes.h.inc"
} // namespace mlir::linformer

using namespace mlir;

namespace {

/// A generic that initializes its output: all loops parallel, the old
/// contents unread (a fill, or a bias broadcast into an accumulator).
bool isFill(linalg::GenericOp g) {
  return g.getNumDpsInits() == 1 && g.getNumReductionLoops() == 0 &&
         !g.payloadUsesValueFromOperand(g.getDpsInitOperand(0)) &&
         llvm::none_of(g.getDpsInputOperands(), [&](OpOperand *o) {
           return o->get() == g.getDpsInitOperand(0)->get();
         });
}

struct HalideGroupKernelsPass
    : mlir::linformer::impl::LinformerHalideGroupKernelsPassBase<
          HalideGroupKernelsPass> {
  void runOnOperation() override {
    func::FuncOp fn = getOperation();
    IRRewriter rewriter(fn.getContext());
    // Copies as generics.
    SmallVector<memref::CopyOp> copies;
    fn.walk([&](memref::CopyOp c) { copies.push_back(c); });
    for (memref::CopyOp c : copies) {
      rewriter.setInsertionPoint(c);
      auto copy = linalg::CopyOp::create(rewriter, c.getLoc(), c.getSource(),
                                         c.getTarget());
      rewriter.eraseOp(c);
      if (failed(linalg::generalizeNamedOp(rewriter, copy))) {
        copy.emitOpError("cannot be generalized for the Halide generator");
        return signalPassFailure();
      }
    }
    if (fn.getBody().empty())
      return;
    // Fill + the next op that accumulates into the same buffer.
    SmallVector<std::pair<linalg::GenericOp, linalg::GenericOp>> pairs;
    Block &body = fn.getBody().front();
    for (Operation &op : body) {
      auto fill = dyn_cast<linalg::GenericOp>(op);
      if (!fill || !isFill(fill))
        continue;
      Value buffer = fill.getDpsInitOperand(0)->get();
      for (Operation *next = op.getNextNode(); next;
           next = next->getNextNode()) {
        auto g = dyn_cast<linalg::GenericOp>(next);
        if (!g) {
          // Views and deallocations of other buffers may sit between.
          if (isa<memref::DeallocOp>(next) &&
              next->getOperand(0) != buffer)
            continue;
          if (isPure(next))
            continue;
          break;
        }
        if (g.getNumDpsInits() == 1 &&
            g.getDpsInitOperand(0)->get() == buffer &&
            g.payloadUsesValueFromOperand(g.getDpsInitOperand(0)) &&
            llvm::none_of(g.getDpsInputOperands(), [&](OpOperand *o) {
              return o->get() == buffer;
            }))
          pairs.push_back({fill, g});
        break;
      }
    }
    for (auto [fill, g] : pairs) {
      rewriter.setInsertionPoint(fill);
      auto single = scf::ForallOp::create(
          rewriter, fill.getLoc(),
          ArrayRef<OpFoldResult>{rewriter.getIndexAttr(0)},
          ArrayRef<OpFoldResult>{rewriter.getIndexAttr(1)},
          ArrayRef<OpFoldResult>{rewriter.getIndexAttr(1)}, ValueRange{},
          std::nullopt);
      // The views g uses that sit between the two move before the loop.
      for (Operation *between = fill->getNextNode(); between != g;) {
        Operation *next = between->getNextNode();
        if (isPure(between))
          between->moveBefore(single);
        between = next;
      }
      fill->moveBefore(single.getBody()->getTerminator());
      g->moveBefore(single.getBody()->getTerminator());
    }
  }
};

} // namespace
