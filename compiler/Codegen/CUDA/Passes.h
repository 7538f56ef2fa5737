//===- Passes.h - the CUDA code generator's passes --------------*- C++ -*-===//
//
// Declarations and registration of the CUDA pipeline's passes
// (compiler/Codegen/CUDA/Passes.td): loop mapping, schedules, tensor-core
// contractions, warp emulation on the host, launch planning; with the GPU,
// NVGPU and NVVM dialects they create.
//
//===----------------------------------------------------------------------===//
#ifndef LINFORMER_COMPILER_CODEGEN_CUDA_PASSES_H
#define LINFORMER_COMPILER_CODEGEN_CUDA_PASSES_H

#include "compiler/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace mlir::linformer {

#define GEN_PASS_DECL
#include "compiler/Codegen/CUDA/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "compiler/Codegen/CUDA/Passes.h.inc"

} // namespace mlir::linformer

#endif // LINFORMER_COMPILER_CODEGEN_CUDA_PASSES_H
