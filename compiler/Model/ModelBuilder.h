//===- ModelBuilder.h - model.json to a Linformer encoder in IR -*- C++ -*-===//
//
// Builds the encoder stack a ModelConfig describes as one function in the
// Linformer dialect (attention layers) and linalg (residual adds, LayerNorm,
// the GELU feed-forward block), ready for the CPU pipeline.
//
//===----------------------------------------------------------------------===//
#ifndef LINFORMER_COMPILER_MODEL_MODELBUILDER_H
#define LINFORMER_COMPILER_MODEL_MODELBUILDER_H

#include "lib/Model/ModelConfig.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <string>
#include <vector>

namespace mlir::linformer {

/// The entry's arguments, in order: the input x, the padding input (if the
/// model has one), then the weights of ::linformer::modelWeights.
struct EncoderSignature {
  std::string entry = "encoder";
  std::vector<std::string> argNames;
  /// Index of the padding argument, or -1.
  int paddingArg = -1;
};

/// Builds `func.func @encoder` for `config`. Layer sharing is expressed as
/// one projection argument used by every layer.
OwningOpRef<ModuleOp> buildEncoderModule(MLIRContext *context,
                                         const ::linformer::ModelConfig &config,
                                         EncoderSignature &signature);

} // namespace mlir::linformer

#endif // LINFORMER_COMPILER_MODEL_MODELBUILDER_H
