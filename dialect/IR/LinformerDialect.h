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

#include "dialect/IR/LinformerDialect.h.inc"
#include "dialect/IR/LinformerEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dialect/IR/LinformerAttrs.h.inc"

namespace mlir::linformer {

/// Where an entry function carries its #linformer.dispatch_plan.
constexpr llvm::StringLiteral kDispatchPlanAttrName = "linformer.dispatch_plan";

/// The dispatch plan of `entry` (null if it has none).
DispatchPlanAttr getDispatchPlan(Operation *entry);
void setDispatchPlan(Operation *entry, DispatchPlanAttr plan);

} // namespace mlir::linformer

#endif // LINFORMER_DIALECT_IR_LINFORMERDIALECT_H
