//===- CUDATarget.h - PTX to cubin with the toolkit's ptxas -----*- C++ -*-===//
//
// The CUDA back end's last step, beside Target/CPU's: the PTX the pipeline
// generated (gpu-module-to-binary, format isa) assembled into a cubin for
// one SM by the CUDA toolkit's ptxas, in a private temporary directory.
// Without a toolkit an artifact carries PTX only, which the driver compiles
// when the module is loaded.
//
//===----------------------------------------------------------------------===//

#ifndef LINFORMER_COMPILER_TARGET_CUDA_CUDATARGET_H
#define LINFORMER_COMPILER_TARGET_CUDA_CUDATARGET_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>

namespace mlir::linformer {

/// The ptxas of the toolkit at `toolkit`, else $CUDA_HOME, else
/// /usr/local/cuda (the path, whether or not it is there).
std::string ptxasPath(llvm::StringRef toolkit);

/// Assembles `ptx` for `chip` (sm_80, sm_90a, ...) with `ptxas -O3`;
/// the cubin's bytes, or ptxas's own words on why it refused.
llvm::Expected<std::string> assemblePTX(llvm::StringRef ptxas,
                                        llvm::StringRef ptx,
                                        llvm::StringRef chip);

} // namespace mlir::linformer

#endif // LINFORMER_COMPILER_TARGET_CUDA_CUDATARGET_H
