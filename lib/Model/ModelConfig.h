//===- ModelConfig.h - a Linformer encoder description ----------*- C++ -*-===//
//
// The model description (model.json) that linformer-compile builds an
// encoder from, its validation, and the names, shapes and dtypes of the
// weights it expects (docs/Model.md). MLIR-free: the compiler builds IR from
// it, the reference implementation and the tools read weights with it.
//
//===----------------------------------------------------------------------===//
#ifndef LINFORMER_LIB_MODEL_MODELCONFIG_H
#define LINFORMER_LIB_MODEL_MODELCONFIG_H

#include "lib/Manifest/Common.h"
#include "lib/Reference/Reference.h"

#include <cstdint>
#include <string>
#include <vector>

namespace linformer {

/// Where LayerNorm sits: after each residual add (RoBERTa, "post") or at the
/// start of each sub-block ("pre").
enum class NormPlacement { Post, Pre };

/// What the compiled model takes to describe padding.
enum class PaddingInput { Lengths, Mask, None };

/// Bounds on model.json fields and totals (docs/Model.md). parseModelConfig
/// refuses a larger value by name before anything is sized by it.
inline constexpr int64_t kMaxLayers = 1024;
inline constexpr int64_t kMaxDModel = 65536;
inline constexpr int64_t kMaxSeqLen = int64_t(1) << 24;
inline constexpr int64_t kMaxBatch = 65536;
inline constexpr int64_t kMaxFfnDim = int64_t(1) << 18;
inline constexpr int64_t kMaxSequenceParallel = 4096;
/// The weights in total, and any one activation tensor: 64 GiB.
inline constexpr uint64_t kMaxModelBytes = uint64_t(64) << 30;

struct ModelConfig {
  int64_t layers = 4;
  int64_t dModel = 512;
  int64_t heads = 8;
  int64_t maxSeqLen = 4096; ///< n
  int64_t batch = 1;
  std::vector<int64_t> k;   ///< per layer (one value repeated if uniform)
  ref::ProjectionKind projection = ref::ProjectionKind::Learned;
  bool shareHeads = true, shareKV = true, shareLayers = true;
  int64_t ffnDim = 2048;
  std::string activation = "gelu";
  NormPlacement norm = NormPlacement::Post;
  /// Storage type of weights, input and output: "f32", "f16" or "bf16".
  /// Arithmetic is f32 throughout (the compiled entry extends at its inputs
  /// and rounds its output once).
  std::string dtype = "f32";
  double layerNormEps = 1e-5;
  PaddingInput padding = PaddingInput::Lengths;
  /// "encoder": attention, residual, LayerNorm and FFN per layer;
  /// "attention": the multi-head attention layer alone (h = attention(h)).
  std::string block = "encoder";
  /// Biases on the attention projections and the FFN.
  bool bias = true;
  /// Ranks one sequence is split over (docs/Model.md, "Sequence
  /// parallelism"): 1, or P > 1 with n % P == 0 and `learned` projections.
  /// The compiled artifact runs one rank's n / P tokens; each layer's
  /// projected keys and values are summed over the ranks by the
  /// application's all-reduce.
  int64_t sequenceParallel = 1;

  bool attentionOnly() const { return block == "attention"; }

  int64_t headDim() const { return dModel / heads; }
  /// The tokens of a sequence one rank holds: n / sequence_parallel.
  int64_t rankSeqLen() const { return maxSeqLen / sequenceParallel; }
  /// The sharing as the preset name the dialect prints, or the flags.
  std::string sharingName() const;
};

/// One weight the model expects.
struct WeightSpec {
  std::string name;
  std::vector<int64_t> shape;
};

/// Parses and validates model.json text. Returns "" or a message that names
/// the field and the rule ("model.json: heads 6 does not divide d_model
/// 512").
std::string parseModelConfig(const std::string &jsonText, ModelConfig &out);

/// Checks the combination of fields (also called by parseModelConfig).
std::string validateModelConfig(const ModelConfig &config);

/// The weights in the order the compiled entry takes them.
std::vector<WeightSpec> modelWeights(const ModelConfig &config);

/// Their total size in bytes (f32), for a validated config.
uint64_t modelWeightBytes(const ModelConfig &config);

/// The storage dtype (DType::F32, F16 or BF16) of a validated config.
DType storageType(const ModelConfig &config);

/// The values writeRandomWeights draws, in modelWeights order, as f32
/// (before rounding to the config's dtype).
std::vector<std::vector<float>> randomWeightValues(const ModelConfig &config,
                                                  uint64_t seed);

/// Writes seeded random weights for `config` (in its dtype, each tensor drawn
/// uniformly: LayerNorm gains in [0.9, 1.1], biases and betas in
/// [-0.1, 0.1], matrices in +-1/sqrt(fan-in)) as safetensors at `path`,
/// the config and seed in its metadata. The same config and seed give the
/// same bytes, on any machine (the compiler and linformer-run share it).
/// Returns "" or the error; `count` gets the number of tensors.
std::string writeRandomWeights(const ModelConfig &config, uint64_t seed,
                               const std::string &path, size_t *count);

/// Serializes back (the artifact's manifest keeps the description).
std::string modelConfigJson(const ModelConfig &config);

/// The reference layer configuration of layer `i`.
ref::LayerConfig layerConfig(const ModelConfig &config, int64_t layer);

/// Weight names (docs/Model.md).
std::string layerWeightName(int64_t layer, const std::string &leaf);
/// The E (or F, with `value`) projection weight used by layer `layer`.
std::string projectionWeightName(const ModelConfig &config, int64_t layer,
                                 bool value);

} // namespace linformer

#endif // LINFORMER_LIB_MODEL_MODELCONFIG_H
