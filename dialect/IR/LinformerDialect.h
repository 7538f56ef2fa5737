//===- LinformerDialect.h - Linformer dialect -------------------*- C++ -*-===//
//
// Declares the Linformer dialect, its enums and attributes. Include
// "dialect/IR/LinformerOps.h" for the ops.
//
//===----------------------------------------------------------------------===//
#ifndef LINFORMER_DIALECT_IR_LINFORMERDIALECT_H
#define LINFORMER_DIALECT_IR_LINFORMERDIALECT_H

#include "mlir/Dialect/SCF/IR/DeviceMappingInterface.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Dialect.h"

// The attributes before the dialect: its discardable attributes' helpers
// (LinformerBase.td) are typed with them.
#include "dialect/IR/LinformerEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dialect/IR/LinformerAttrs.h.inc"

#include "dialect/IR/LinformerDialect.h.inc"

namespace mlir::linformer {

/// Where an entry function carries its #linformer.dispatch_plan.
constexpr llvm::StringLiteral kDispatchPlanAttrName =
    LinformerDialect::DispatchPlanAttrHelper::getNameStr();

/// An outlined kernel function's workgroup count, each bound buffer's
/// bytes, and its length rule as the words of its ABI record.
constexpr llvm::StringLiteral kWorkgroupsAttrName =
    LinformerDialect::WorkgroupsAttrHelper::getNameStr();
constexpr llvm::StringLiteral kBufferBytesAttrName =
    LinformerDialect::BufferBytesAttrHelper::getNameStr();
constexpr llvm::StringLiteral kTokenRowsRecordAttrName =
    LinformerDialect::TokenRowsRecordAttrHelper::getNameStr();

/// Function argument attributes (unit): a sequence input `[b, n, ...]`
/// (batch at dimension 0, tokens at dimension 1), and the argument holding
/// each sequence's real length (`i32 [b]`). docs/Pipeline.md, "Lengths".
constexpr llvm::StringLiteral kSequenceArgAttrName = "linformer.sequence";
constexpr llvm::StringLiteral kLengthsArgAttrName = "linformer.lengths";

/// The dispatch plan of `entry` (null if it has none).
DispatchPlanAttr getDispatchPlan(Operation *entry);
void setDispatchPlan(Operation *entry, DispatchPlanAttr plan);

} // namespace mlir::linformer

#endif // LINFORMER_DIALECT_IR_LINFORMERDIALECT_H
