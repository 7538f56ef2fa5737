//===- Passes.h - Linformer compiler passes, every target -------*- C++ -*-===//
//
// Declarations and registration of the passes every target shares
// (Passes.td): decomposition, lowering to linalg, the packed sequence
// layout, outlining and hoisting, Halide's kernel grouping. The CPU code
// generator's passes are declared in compiler/Codegen/CPU/Passes.h, the CUDA
// code generator's in compiler/Codegen/CUDA/Passes.h (as IREE's
// Codegen/LLVMCPU and LLVMGPU each have theirs), so a CPU pass sees no GPU
// dialect header. registerAllLinformerPasses() registers all three.
//
//===----------------------------------------------------------------------===//
#ifndef LINFORMER_COMPILER_PASSES_H
#define LINFORMER_COMPILER_PASSES_H

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"

#include "dialect/IR/LinformerDialect.h"

namespace mlir::linformer {

#define GEN_PASS_DECL
#include "compiler/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "compiler/Passes.h.inc"

/// Registers every pass of the compiler: the shared ones, the CPU code
/// generator's and the CUDA code generator's (compiler/Pipelines).
void registerAllLinformerPasses();

} // namespace mlir::linformer

#endif // LINFORMER_COMPILER_PASSES_H
