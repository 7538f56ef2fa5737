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

namespace mlir::linformer::detail {
/// Makes linformer.attention_core and linformer.all_reduce bufferizable
/// (one-shot bufferization); the dialect calls it as it loads.
void attachAttentionCoreBufferization(MLIRContext &context);
} // namespace mlir::linformer::detail

#endif // LINFORMER_DIALECT_IR_LINFORMEROPS_H
