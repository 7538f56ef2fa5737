//===- CUDAFlags.h - the CUDA pipeline's knobs as --cuda-* flags -*- C++ -*-===//
//
// linformer-compile and linformer-e2e both expose the CUDA pipeline's
// schedule knobs on their command lines, as --cuda-<option> for each
// CUDAPipelineOptions option below. The flags are made from the options
// themselves: name, description and default are the pipeline option's, so
// a knob is declared once, in Pipelines.h, and its range checked once, here.
//
//===----------------------------------------------------------------------===//
#ifndef LINFORMER_COMPILER_PIPELINES_CUDAFLAGS_H
#define LINFORMER_COMPILER_PIPELINES_CUDAFLAGS_H

#include "compiler/Pipelines/Pipelines.h"

#include <string>

namespace mlir::linformer {

/// Registers --cuda-stage-core, --cuda-core-slots, --cuda-wgmma, ... (one
/// flag for each knob of CUDAPipelineOptions; see CUDAFlags.cpp for the
/// list) with the global command line. Call before
/// llvm::cl::ParseCommandLineOptions; a second call does nothing.
void registerCUDAFlags();

/// Copies the parsed flags into `options` (the flags' defaults are the
/// options' own, so an unset flag leaves the option's default).
void applyCUDAFlags(CUDAPipelineOptions &options);

/// The first knob of `options` out of its range, as an error message that
/// names it as `prefix` + its name (prefix "--cuda-" for the flags); empty
/// when all are in range.
std::string checkCUDAOptions(const CUDAPipelineOptions &options,
                             llvm::StringRef prefix = "--cuda-");

} // namespace mlir::linformer

#endif // LINFORMER_COMPILER_PIPELINES_CUDAFLAGS_H
