//===- Passes.h - Linformer dialect-level passes ----------------*- C++ -*-===//
//
// Declarations and registration of the dialect-level passes.
//
//===----------------------------------------------------------------------===//
#ifndef LINFORMER_DIALECT_TRANSFORMS_PASSES_H
#define LINFORMER_DIALECT_TRANSFORMS_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::linformer {

#define GEN_PASS_DECL
#include "dialect/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "dialect/Transforms/Passes.h.inc"

} // namespace mlir::linformer

#endif // LINFORMER_DIALECT_TRANSFORMS_PASSES_H
