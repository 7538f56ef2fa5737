//===- Encoder.h - reference Linformer encoder (test oracle) ----*- C++ -*-===//
//
// The plain C++ encoder stack of a ModelConfig: Linformer attention,
// residual adds, LayerNorm and a GELU feed-forward block per layer. Like the
// rest of lib/Reference it is only ever a test oracle (linformer-run
// --check, integration tests), never a kernel.
//
//===----------------------------------------------------------------------===//
#ifndef LINFORMER_LIB_REFERENCE_ENCODER_H
#define LINFORMER_LIB_REFERENCE_ENCODER_H

#include "lib/Model/ModelConfig.h"

#include <functional>
#include <string>

namespace linformer::ref {

/// Finds a weight's f32 data by name (docs/Model.md); null if absent.
using WeightLookup = std::function<const float *(const std::string &)>;

/// y = encoder(x) for x [batch, n, d_model]; padding by `lengths` [batch] or
/// `mask` [batch, n] (either may be null). Returns "" or the problem.
std::string encoderForward(const ModelConfig &config,
                           const WeightLookup &weights, const float *x,
                           const int32_t *lengths, const uint8_t *mask,
                           float *y);

/// LayerNorm over the last dimension of [rows, dim], in place.
void layerNorm(float *data, int64_t rows, int64_t dim, const float *gamma,
               const float *beta, double eps);

/// GELU, the exact (erf) form: 0.5 x (1 + erf(x / sqrt 2)).
float gelu(float x);

} // namespace linformer::ref

#endif // LINFORMER_LIB_REFERENCE_ENCODER_H
