//===- Reassociate.cpp - choose the order of the K/V projection -*- C++ -*-===//
//
// E (X W) versus (E X) W: a per-layer decision by a FLOP/byte cost model,
// recorded on the op for the decomposition to follow.
//
//===----------------------------------------------------------------------===//

#include "dialect/IR/LinformerOps.h"
#include "dialect/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace mlir::linformer {
#define GEN_PASS_DEF_LINFORMERREASSOCIATEPASS
#include "dialect/Transforms/Passes.h.inc"
} // namespace mlir::linformer

using namespace mlir;
using namespace mlir::linformer;

ReassociationCost mlir::linformer::estimateReassociation(AttentionOp op) {
  ReassociationCost cost;
  ProjectionKind kind = op.getProjection();
  cost.applicable =
      kind == ProjectionKind::learned || kind == ProjectionKind::mean_pool;
  double b = op.getBatch(), n = op.getSeqLen(), m = op.getModelDim();
  double h = op.getHeads(), k = op.getK();
  double elem =
      (op.getInput().getType().getElementTypeBitWidth() + 7) / 8;
  // Standard order, for K and V: X W (2 b n m^2 each), then the projection
  // over n; the full-length K and V are written and read back.
  double projFlops = kind == ProjectionKind::learned ? 2 * b * k * n * m
                                                     : b * n * m;
  cost.standardFlops = 2 * (2 * b * n * m * m + projFlops);
  cost.standardBytes = 2 * (2 * b * n * m * elem);
  // Reassociated: E X (once when K and V share E, per head unless E is
  // shared by heads), then (E X) W for K and V.
  bool sharedKV = kind == ProjectionKind::mean_pool || op.getSharing().getKv();
  bool sharedHeads =
      kind == ProjectionKind::mean_pool || op.getSharing().getHeads();
  double copies = (sharedKV ? 1 : 2) * (sharedHeads ? 1 : h);
  double exFlops = kind == ProjectionKind::learned ? 2 * b * k * n * m
                                                   : b * n * m;
  cost.reassociatedFlops = copies * exFlops + 2 * (2 * b * k * m * m);
  // E X is written once and read by each of K and V.
  cost.reassociatedBytes = copies * 3 * b * k * m * elem;
  return cost;
}

namespace {
struct ReassociatePass
    : mlir::linformer::impl::LinformerReassociatePassBase<ReassociatePass> {
  using Base::Base;

  void runOnOperation() override {
    if (mode != "auto" && mode != "always" && mode != "never") {
      getOperation().emitError() << "linformer-reassociate: unknown mode '"
                                 << mode << "' (expected auto, always or never)";
      return signalPassFailure();
    }
    getOperation().walk([&](AttentionOp op) {
      if (!op.getInput().getType().hasStaticShape() || op.getReassociate())
        return;
      ReassociationCost cost = estimateReassociation(op);
      if (!cost.applicable)
        return;
      double standard = cost.standardFlops + flopsPerByte * cost.standardBytes;
      double reassociated =
          cost.reassociatedFlops + flopsPerByte * cost.reassociatedBytes;
      bool choice = mode == "always" || (mode == "auto" && reassociated < standard);
      Builder b(op.getContext());
      op.setReassociate(choice);
      // Whole FLOP-equivalents as integers: they print readably (an f64
      // that does not round-trip through decimal prints in hex).
      op->setAttr(kReassociationCostAttrName,
                  b.getDictionaryAttr(
                      {b.getNamedAttr("standard",
                                      b.getI64IntegerAttr(
                                          static_cast<int64_t>(standard))),
                       b.getNamedAttr("reassociated",
                                      b.getI64IntegerAttr(static_cast<int64_t>(
                                          reassociated)))}));
    });
  }
};
} // namespace
