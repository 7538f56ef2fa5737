//===- PrepareLoops.cpp - linalg on memrefs ready for GPU loops -*- C++ -*-===//
//
// Before `convert-linalg-to-parallel-loops` in the CUDA pipeline (see
// Passes.td): every loop nest must become one kernel, and nothing may stay
// on the host, which cannot touch device memory.
//   * A linalg.generic whose reduction dimension sits between parallel ones
//     (the head-split projections: [b, h, n, k-reduction, dh]) would become
//     scf.parallel { scf.for { scf.parallel } }: only the outer parallel
//     dimensions get threads. Interchanging the reductions innermost puts
//     every parallel dimension in the outer loop.
//   * memref.copy (bufferization's copies) has no loop form; linalg.copy has
//     one, so the copy becomes a kernel like every other op.
//
//===----------------------------------------------------------------------===//

#include "compiler/Codegen/CUDA/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::linformer {
#define GEN_PASS_DEF_LINFORMERCUDAPREPARELOOPSPASS
#include "compiler/Codegen/CUDA/Passes.h.inc"
} // namespace mlir::linformer

using namespace mlir;

namespace {

struct CUDAPrepareLoopsPass
    : mlir::linformer::impl::LinformerCUDAPrepareLoopsPassBase<
          CUDAPrepareLoopsPass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    SmallVector<memref::CopyOp> copies;
    getOperation().walk([&](memref::CopyOp op) { copies.push_back(op); });
    for (memref::CopyOp op : copies) {
      rewriter.setInsertionPoint(op);
      rewriter.replaceOpWithNewOp<linalg::CopyOp>(op, op.getSource(),
                                                  op.getTarget());
    }
    SmallVector<linalg::GenericOp> generics;
    getOperation().walk([&](linalg::GenericOp op) { generics.push_back(op); });
    for (linalg::GenericOp op : generics) {
      SmallVector<unsigned> parallel, reduction;
      for (auto [i, type] : llvm::enumerate(op.getIteratorTypesArray()))
        (type == utils::IteratorType::parallel ? parallel : reduction)
            .push_back(unsigned(i));
      SmallVector<unsigned> order(parallel);
      order.append(reduction);
      bool identity = llvm::all_of(llvm::enumerate(order), [](auto e) {
        return e.index() == e.value();
      });
      if (identity)
        continue;
      rewriter.setInsertionPoint(op);
      auto tokens = op->getAttrOfType<DenseI64ArrayAttr>(
          mlir::linformer::kTokenLoopsAttrName);
      Attribute slots = op->getAttr(mlir::linformer::kCUDASlotRowsAttrName);
      auto bound = op->getAttrOfType<mlir::linformer::TokenBoundAttr>(
          mlir::linformer::kTokenBoundAttrName);
      FailureOr<linalg::GenericOp> moved =
          linalg::interchangeGenericOp(rewriter, op, order);
      if (failed(moved)) {
        op.emitError("cannot move the reduction dimensions innermost");
        return signalPassFailure();
      }
      auto position = [&](int64_t d) -> int64_t {
        return llvm::find(order, unsigned(d)) - order.begin();
      };
      // Token loops (linformer-cuda-mark-token-loops) follow their loops.
      if (tokens) {
        SmallVector<int64_t> renumbered;
        for (int64_t d : tokens.asArrayRef())
          renumbered.push_back(position(d));
        (*moved)->setAttr(mlir::linformer::kTokenLoopsAttrName,
                          rewriter.getDenseI64ArrayAttr(renumbered));
        if (slots)
          (*moved)->setAttr(mlir::linformer::kCUDASlotRowsAttrName, slots);
      }
      // So does a token bound's.
      if (bound)
        (*moved)->setAttr(mlir::linformer::kTokenBoundAttrName,
                          bound.renumbered(position));
    }
  }
};

} // namespace
