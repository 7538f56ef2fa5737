//===- Passes.h - Linformer dialect-level passes ----------------*- C++ -*-===//
//
// Declarations and registration of the dialect-level passes.
//
//===----------------------------------------------------------------------===//
#ifndef LINFORMER_DIALECT_TRANSFORMS_PASSES_H
#define LINFORMER_DIALECT_TRANSFORMS_PASSES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::linformer {

class AttentionOp;

/// The cost estimates of the two orders of the K/V computation of a layer.
struct ReassociationCost {
  double standardFlops = 0, standardBytes = 0;
  double reassociatedFlops = 0, reassociatedBytes = 0;
  /// False when the projection is not linear (max_pool, conv).
  bool applicable = false;
};

/// FLOPs and bytes of `E (X W)` versus `(E X) W` for K and V of `op`.
ReassociationCost estimateReassociation(AttentionOp op);

#define GEN_PASS_DECL
#include "dialect/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "dialect/Transforms/Passes.h.inc"

} // namespace mlir::linformer

#endif // LINFORMER_DIALECT_TRANSFORMS_PASSES_H
