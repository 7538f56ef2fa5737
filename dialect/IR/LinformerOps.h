//===- LinformerOps.h - Linformer operations --------------------*- C++ -*-===//
//
// Declares the ops of the Linformer dialect (generated from LinformerOps.td).
//
//===----------------------------------------------------------------------===//
#ifndef LINFORMER_DIALECT_IR_LINFORMEROPS_H
#define LINFORMER_DIALECT_IR_LINFORMEROPS_H

#include "dialect/IR/LinformerDialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/TilingInterface.h"

#define GET_OP_CLASSES
#include "dialect/IR/LinformerOps.h.inc"

namespace mlir::linformer {
/// Whether `scope` holds a collective step (`linformer.all_reduce` or
/// `linformer.all_gather`): a sequence-parallel entry, one rank's share of
/// a sequence, whose length there may be 0.
bool hasCollectiveSteps(Operation *scope);
} // namespace mlir::linformer

namespace mlir::linformer::detail {
/// Makes linformer.attention_core and linformer.all_reduce bufferizable
/// (one-shot bufferization); the dialect calls it as it loads.
void attachAttentionCoreBufferization(MLIRContext &context);
} // namespace mlir::linformer::detail

#endif // LINFORMER_DIALECT_IR_LINFORMEROPS_H
