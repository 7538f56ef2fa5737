//===- VerifyLayerSharing.cpp - module-level sharing check -----*- C++ -*-===//
//
// Layer sharing is a claim about several ops at once: every layer uses one
// projection value. The op verifier sees a single op, so this pass checks
// the claim across each function.
//
//===----------------------------------------------------------------------===//

#include "dialect/IR/LinformerOps.h"
#include "dialect/Transforms/Passes.h"

#include "mlir/IR/BuiltinOps.h"

namespace mlir::linformer {
#define GEN_PASS_DEF_LINFORMERVERIFYLAYERSHARINGPASS
#include "dialect/Transforms/Passes.h.inc"
} // namespace mlir::linformer

using namespace mlir;
using namespace mlir::linformer;

namespace {
struct VerifyLayerSharingPass
    : mlir::linformer::impl::LinformerVerifyLayerSharingPassBase<
          VerifyLayerSharingPass> {
  void runOnOperation() override {
    bool failedAny = false;
    // Layers of one model live in one function (or region); check each
    // region that directly holds attention ops separately.
    DenseMap<Region *, AttentionOp> firstInRegion;
    getOperation().walk([&](AttentionOp op) {
      if (!op.getSharing().getLayers() || !op.getE())
        return;
      Region *scope = op->getParentRegion();
      // Scope the claim to the enclosing function-like op: its whole body.
      if (Operation *fn = op->getParentWithTrait<OpTrait::IsIsolatedFromAbove>())
        scope = &fn->getRegion(0);
      auto [it, inserted] = firstInRegion.try_emplace(scope, op);
      if (inserted)
        return;
      AttentionOp first = it->second;
      for (auto [name, mine, theirs] :
           {std::tuple<StringRef, Value, Value>{"e", op.getE(), first.getE()},
            {"f", op.getF(), first.getF()}}) {
        if (mine == theirs)
          continue;
        InFlightDiagnostic diag =
            op.emitOpError()
            << "claims layer sharing, but its '" << name
            << "' is not the value used by the first layer-shared op; "
               "layer sharing means every layer uses one projection value";
        diag.attachNote(first.getLoc()) << "first layer-shared op is here";
        failedAny = true;
        break;
      }
    });
    if (failedAny)
      signalPassFailure();
  }
};
} // namespace
