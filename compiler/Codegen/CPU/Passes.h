//===- Passes.h - the CPU code generator's passes ---------------*- C++ -*-===//
//
// Declarations and registration of the CPU pipeline's passes
// (compiler/Codegen/CPU/Passes.td): schedule selection, tiling and fusion,
// vectorization, vector lowering, bf16 products. The dialects they create
// come with it; the GPU dialects do not.
//
//===----------------------------------------------------------------------===//
#ifndef LINFORMER_COMPILER_CODEGEN_CPU_PASSES_H
#define LINFORMER_COMPILER_CODEGEN_CPU_PASSES_H

#include "compiler/Passes.h"
#include "compiler/ScheduleDefaults.h"

#include "mlir/Dialect/AMX/AMXDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"

namespace mlir::linformer {

#define GEN_PASS_DECL
#include "compiler/Codegen/CPU/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "compiler/Codegen/CPU/Passes.h.inc"

} // namespace mlir::linformer

#endif // LINFORMER_COMPILER_CODEGEN_CPU_PASSES_H
