//===- ModelConfig.cpp - a Linformer encoder description --------*- C++ -*-===//
//
// See ModelConfig.h and docs/Model.md.
//
//===----------------------------------------------------------------------===//

#include "lib/Model/ModelConfig.h"
#include "lib/Safetensors/Safetensors.h"
#include "lib/Support/Half.h"
#include "lib/Support/Random.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <cstdio>

#include <set>

namespace linformer {

using json = nlohmann::json;

std::string ModelConfig::sharingName() const {
  if (shareHeads && shareKV && shareLayers)
    return "layerwise";
  if (shareHeads && shareKV)
    return "key_value";
  if (shareHeads && !shareKV && !shareLayers)
    return "headwise";
  if (!shareHeads && !shareKV && !shareLayers)
    return "none";
  std::string s;
  for (auto [on, name] : {std::pair<bool, const char *>{shareHeads, "heads"},
                          {shareKV, "kv"},
                          {shareLayers, "layers"}})
    if (on)
      s += (s.empty() ? "" : ", ") + std::string(name);
  return s;
}

namespace {
std::string fail(const std::string &msg) { return "model.json: " + msg; }

/// Per-field bounds (docs/Model.md): far above any real Linformer, low
/// enough that no product of them overflows and that an absurd value is
/// refused by name before anything is allocated for it.
struct FieldLimit {
  const char *name;
  int64_t ModelConfig::*field;
  int64_t max;
};
const FieldLimit kFieldLimits[] = {
    {"layers", &ModelConfig::layers, kMaxLayers},
    {"d_model", &ModelConfig::dModel, kMaxDModel},
    {"heads", &ModelConfig::heads, kMaxDModel},
    {"max_seq_len", &ModelConfig::maxSeqLen, kMaxSeqLen},
    {"batch", &ModelConfig::batch, kMaxBatch},
    {"ffn_dim", &ModelConfig::ffnDim, kMaxFfnDim}};

std::string checkLimits(const ModelConfig &c) {
  for (const FieldLimit &l : kFieldLimits)
    if (c.*l.field > l.max)
      return fail("'" + std::string(l.name) + "' is " +
                  std::to_string(c.*l.field) + ", above the limit of " +
                  std::to_string(l.max));
  return "";
}

std::string shapeText(const std::vector<int64_t> &shape) {
  std::string s;
  for (int64_t d : shape)
    s += (s.empty() ? "" : " x ") + std::to_string(d);
  return s;
}

std::string gib(uint64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f GiB", double(bytes) / double(1ull << 30));
  return buf;
}

bool readInt(const json &j, const char *key, int64_t &out, std::string &err) {
  if (!j.contains(key))
    return true;
  if (!j[key].is_number_integer()) {
    err = fail(std::string("'") + key + "' must be an integer");
    return false;
  }
  out = j[key].get<int64_t>();
  return true;
}
} // namespace

std::string parseModelConfig(const std::string &text, ModelConfig &c) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded())
    return fail("not valid JSON");
  if (!j.is_object())
    return fail("the top level must be an object");
  static const std::set<std::string> known = {
      "layers",     "d_model",  "heads",      "max_seq_len",
      "batch",      "k",        "projection", "sharing",
      "ffn_dim",    "activation", "norm",     "dtype",
      "layer_norm_eps", "padding", "block",   "bias",
      "sequence_parallel"};
  for (auto it = j.begin(); it != j.end(); ++it)
    if (!known.count(it.key()))
      return fail("unknown field '" + it.key() + "'");
  std::string err;
  if (!readInt(j, "layers", c.layers, err) ||
      !readInt(j, "d_model", c.dModel, err) ||
      !readInt(j, "heads", c.heads, err) ||
      !readInt(j, "max_seq_len", c.maxSeqLen, err) ||
      !readInt(j, "batch", c.batch, err) ||
      !readInt(j, "ffn_dim", c.ffnDim, err))
    return err;
  if (c.layers <= 0)
    return fail("'layers' must be positive");
  // Bound before anything is sized by it (c.k below, weights, buffers).
  if (std::string e = checkLimits(c); !e.empty())
    return e;
  c.k.assign(c.layers, 256);
  if (j.contains("k")) {
    const json &k = j["k"];
    if (k.is_number_integer()) {
      c.k.assign(c.layers, k.get<int64_t>());
    } else if (k.is_array()) {
      if (static_cast<int64_t>(k.size()) != c.layers)
        return fail("'k' has " + std::to_string(k.size()) +
                    " entries but the model has " + std::to_string(c.layers) +
                    " layers");
      for (size_t i = 0; i < k.size(); ++i) {
        if (!k[i].is_number_integer())
          return fail("'k' entries must be integers");
        c.k[i] = k[i].get<int64_t>();
      }
    } else {
      return fail("'k' must be an integer or a list of one per layer");
    }
  }
  if (j.contains("projection")) {
    if (!j["projection"].is_string() ||
        !ref::parseProjectionKind(j["projection"].get<std::string>(),
                                  c.projection))
      return fail("'projection' must be one of learned, mean_pool, "
                  "max_pool, conv");
  }
  if (j.contains("sharing")) {
    const json &s = j["sharing"];
    if (s.is_string()) {
      std::string name = s.get<std::string>();
      if (name == "none")
        c.shareHeads = c.shareKV = c.shareLayers = false;
      else if (name == "headwise")
        c.shareHeads = true, c.shareKV = c.shareLayers = false;
      else if (name == "key_value")
        c.shareHeads = c.shareKV = true, c.shareLayers = false;
      else if (name == "layerwise")
        c.shareHeads = c.shareKV = c.shareLayers = true;
      else
        return fail("'sharing' preset '" + name +
                    "' is not one of none, headwise, key_value, layerwise");
    } else if (s.is_object()) {
      c.shareHeads = c.shareKV = c.shareLayers = false;
      for (auto it = s.begin(); it != s.end(); ++it) {
        if (!it.value().is_boolean())
          return fail("'sharing." + it.key() + "' must be true or false");
        bool on = it.value().get<bool>();
        if (it.key() == "heads")
          c.shareHeads = on;
        else if (it.key() == "kv")
          c.shareKV = on;
        else if (it.key() == "layers")
          c.shareLayers = on;
        else
          return fail("unknown sharing flag '" + it.key() +
                      "' (expected heads, kv, layers)");
      }
    } else {
      return fail("'sharing' must be a preset name or an object of flags");
    }
  }
  auto readString = [&](const char *key, std::string &out) {
    if (!j.contains(key))
      return true;
    if (!j[key].is_string()) {
      err = fail(std::string("'") + key + "' must be a string");
      return false;
    }
    out = j[key].get<std::string>();
    return true;
  };
  std::string norm = "post", padding = "lengths";
  if (!readString("activation", c.activation) || !readString("norm", norm) ||
      !readString("dtype", c.dtype) || !readString("padding", padding))
    return err;
  if (norm == "post")
    c.norm = NormPlacement::Post;
  else if (norm == "pre")
    c.norm = NormPlacement::Pre;
  else
    return fail("'norm' must be post or pre");
  if (padding == "lengths")
    c.padding = PaddingInput::Lengths;
  else if (padding == "mask")
    c.padding = PaddingInput::Mask;
  else if (padding == "none")
    c.padding = PaddingInput::None;
  else
    return fail("'padding' must be lengths, mask or none");
  if (!readString("block", c.block))
    return err;
  if (c.block != "encoder" && c.block != "attention")
    return fail("'block' must be encoder or attention");
  if (j.contains("bias")) {
    if (!j["bias"].is_boolean())
      return fail("'bias' must be true or false");
    c.bias = j["bias"].get<bool>();
  }
  if (j.contains("sequence_parallel")) {
    const json &p = j["sequence_parallel"];
    if (!p.is_number_integer() || p.get<int64_t>() < 1 ||
        p.get<int64_t>() > kMaxSequenceParallel)
      return fail("'sequence_parallel' must be an integer from 1 to " +
                  std::to_string(kMaxSequenceParallel) +
                  " (the ranks one sequence is split over)");
    c.sequenceParallel = p.get<int64_t>();
  }
  if (j.contains("layer_norm_eps")) {
    if (!j["layer_norm_eps"].is_number())
      return fail("'layer_norm_eps' must be a number");
    c.layerNormEps = j["layer_norm_eps"].get<double>();
  }
  return validateModelConfig(c);
}

std::string validateModelConfig(const ModelConfig &c) {
  if (c.dModel <= 0 || c.heads <= 0 || c.maxSeqLen <= 0 || c.batch <= 0 ||
      c.ffnDim <= 0)
    return fail("d_model, heads, max_seq_len, batch and ffn_dim must be "
                "positive");
  if (c.layers <= 0)
    return fail("'layers' must be positive");
  if (std::string e = checkLimits(c); !e.empty())
    return e;
  if (static_cast<int64_t>(c.k.size()) != c.layers)
    return fail("'k' has " + std::to_string(c.k.size()) +
                " entries but the model has " + std::to_string(c.layers) +
                " layers");

  if (c.dModel % c.heads != 0)
    return fail("heads " + std::to_string(c.heads) + " does not divide d_model " +
                std::to_string(c.dModel));
  if (c.activation != "gelu")
    return fail("activation '" + c.activation +
                "' is not supported (only gelu)");
  if (c.dtype != "f32" && c.dtype != "f16" && c.dtype != "bf16")
    return fail("dtype '" + c.dtype + "' is not one of f32, f16, bf16");
  if (c.layerNormEps <= 0)
    return fail("'layer_norm_eps' must be positive");
  for (int64_t i = 0; i < c.layers; ++i) {
    ref::LayerConfig l = layerConfig(c, i);
    if (std::string e = ref::validate(l); !e.empty())
      return fail("layer " + std::to_string(i) + ": " + e);
  }
  bool hasParams = c.projection == ref::ProjectionKind::Learned ||
                   c.projection == ref::ProjectionKind::Conv;
  if (c.shareLayers && hasParams)
    for (int64_t i = 1; i < c.layers; ++i)
      if (c.k[i] != c.k[0]) {
        auto shape = [&](int64_t layer) {
          return shapeText(ref::projectionWeightShape(
              c.projection, c.heads, c.maxSeqLen, c.headDim(), c.k[layer],
              c.shareHeads));
        };
        return fail("layer sharing needs one k for every layer (all layers "
                    "use one " +
                    std::string(ref::projectionKindName(c.projection)) +
                    " projection weight), but layer " + std::to_string(i) +
                    " has k " + std::to_string(c.k[i]) + " (weight " +
                    shape(i) + ") and layer 0 has k " +
                    std::to_string(c.k[0]) + " (weight " + shape(0) + ")");
      }
  if (c.sequenceParallel > 1) {
    std::string p = std::to_string(c.sequenceParallel);
    if (c.maxSeqLen % c.sequenceParallel != 0)
      return fail("'sequence_parallel' " + p + " does not divide max_seq_len " +
                  std::to_string(c.maxSeqLen) +
                  " (every rank holds n / sequence_parallel tokens)");
    // Windows split at rank boundaries: each rank projects its own to k / P
    // slots (n / k divides n / P exactly then).
    if (c.projection != ref::ProjectionKind::Learned)
      for (int64_t i = 0; i < c.layers; ++i)
        if (c.k[i] % c.sequenceParallel != 0)
          return fail("'sequence_parallel' " + p + " does not divide layer " +
                      std::to_string(i) + "'s k " + std::to_string(c.k[i]) +
                      " ('" +
                      std::string(ref::projectionKindName(c.projection)) +
                      "' windows do not cross ranks: each rank projects its "
                      "n / sequence_parallel tokens to k / sequence_parallel "
                      "slots)");
  }
  // Totals: what --random-weights would write and what one activation
  // tensor needs, checked before either is generated or allocated.
  uint64_t weightBytes = modelWeightBytes(c);
  if (weightBytes > kMaxModelBytes)
    return fail("the weights would need " + gib(weightBytes) +
                ", above the limit of " + gib(kMaxModelBytes) +
                "; reduce 'layers', 'd_model' or 'ffn_dim'");
  uint64_t activation = uint64_t(c.batch) * uint64_t(c.maxSeqLen) *
                        uint64_t(std::max(c.dModel, c.ffnDim)) * 4;
  if (activation > kMaxModelBytes)
    return fail("one activation ('batch' x 'max_seq_len' x max('d_model', "
                "'ffn_dim') floats) would need " +
                gib(activation) + ", above the limit of " +
                gib(kMaxModelBytes));
  return "";
}

uint64_t modelWeightBytes(const ModelConfig &c) {
  uint64_t total = 0;
  for (const WeightSpec &w : modelWeights(c)) {
    uint64_t n = 4;
    for (int64_t d : w.shape)
      n *= uint64_t(d);
    total += n;
  }
  return total;
}

ref::LayerConfig layerConfig(const ModelConfig &c, int64_t layer) {
  ref::LayerConfig l;
  l.batch = c.batch;
  l.seqLen = c.maxSeqLen;
  l.dModel = c.dModel;
  l.heads = c.heads;
  l.projLen = c.k.empty() ? 0 : c.k[layer];
  l.kind = c.projection;
  l.sharing.heads = c.shareHeads;
  l.sharing.kv = c.shareKV;
  l.hasBias = c.bias;
  return l;
}

std::string layerWeightName(int64_t layer, const std::string &leaf) {
  return "layers." + std::to_string(layer) + "." + leaf;
}

std::string projectionWeightName(const ModelConfig &c, int64_t layer,
                                 bool value) {
  std::string leaf = value && !c.shareKV ? "f" : "e";
  if (c.shareLayers)
    return "shared." + leaf;
  return layerWeightName(layer, "attn." + leaf);
}

std::vector<WeightSpec> modelWeights(const ModelConfig &c) {
  std::vector<WeightSpec> w;
  int64_t dm = c.dModel, f = c.ffnDim;
  bool hasParams = c.projection == ref::ProjectionKind::Learned ||
                   c.projection == ref::ProjectionKind::Conv;
  auto projShape = [&](int64_t layer) {
    return ref::projectionWeightShape(c.projection, c.heads, c.maxSeqLen,
                                      c.headDim(), c.k[layer], c.shareHeads);
  };
  if (hasParams && c.shareLayers) {
    w.push_back({"shared.e", projShape(0)});
    if (!c.shareKV)
      w.push_back({"shared.f", projShape(0)});
  }
  for (int64_t i = 0; i < c.layers; ++i) {
    for (const char *n : {"attn.wq", "attn.wk", "attn.wv", "attn.wo"})
      w.push_back({layerWeightName(i, n), {dm, dm}});
    if (c.bias)
      for (const char *n : {"attn.bq", "attn.bk", "attn.bv", "attn.bo"})
        w.push_back({layerWeightName(i, n), {dm}});
    if (hasParams && !c.shareLayers) {
      w.push_back({layerWeightName(i, "attn.e"), projShape(i)});
      if (!c.shareKV)
        w.push_back({layerWeightName(i, "attn.f"), projShape(i)});
    }
    if (c.attentionOnly())
      continue;
    for (const char *n : {"ln1.gamma", "ln1.beta", "ln2.gamma", "ln2.beta"})
      w.push_back({layerWeightName(i, n), {dm}});
    w.push_back({layerWeightName(i, "ffn.w1"), {dm, f}});
    if (c.bias)
      w.push_back({layerWeightName(i, "ffn.b1"), {f}});
    w.push_back({layerWeightName(i, "ffn.w2"), {f, dm}});
    if (c.bias)
      w.push_back({layerWeightName(i, "ffn.b2"), {dm}});
  }
  return w;
}

std::string modelConfigJson(const ModelConfig &c) {
  json j;
  j["layers"] = c.layers;
  j["d_model"] = c.dModel;
  j["heads"] = c.heads;
  j["max_seq_len"] = c.maxSeqLen;
  j["batch"] = c.batch;
  j["k"] = c.k;
  j["projection"] = ref::projectionKindName(c.projection);
  j["sharing"] = {{"heads", c.shareHeads}, {"kv", c.shareKV},
                  {"layers", c.shareLayers}};
  j["ffn_dim"] = c.ffnDim;
  j["activation"] = c.activation;
  j["norm"] = c.norm == NormPlacement::Post ? "post" : "pre";
  j["dtype"] = c.dtype;
  j["layer_norm_eps"] = c.layerNormEps;
  j["padding"] = c.padding == PaddingInput::Lengths ? "lengths"
                 : c.padding == PaddingInput::Mask  ? "mask"
                                                    : "none";
  j["block"] = c.block;
  j["bias"] = c.bias;
  if (c.sequenceParallel > 1)
    j["sequence_parallel"] = c.sequenceParallel;
  return j.dump(2);
}

DType storageType(const ModelConfig &config) {
  return config.dtype == "bf16"  ? DType::BF16
         : config.dtype == "f16" ? DType::F16
                                 : DType::F32;
}

static bool endsWith(const std::string &s, const char *suffix) {
  size_t n = std::char_traits<char>::length(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

std::vector<std::vector<float>> randomWeightValues(const ModelConfig &config,
                                                  uint64_t seed) {
  std::vector<std::vector<float>> all;
  uint64_t s = seed;
  for (const WeightSpec &w : modelWeights(config)) {
    int64_t elements = 1;
    for (int64_t d : w.shape)
      elements *= d;
    std::vector<float> values;
    const std::string &name = w.name;
    if (endsWith(name, ".gamma")) {
      values = uniformVector(elements, s++, 0.9f, 1.1f);
    } else if (endsWith(name, ".beta") || w.shape.size() == 1) {
      values = uniformVector(elements, s++, -0.1f, 0.1f);
    } else {
      // Fan-in: the reduced dimension (rows of W, n for E, the window for
      // conv kernels).
      int64_t fanIn = w.shape[0];
      if (endsWith(name, ".e") || endsWith(name, ".f"))
        fanIn = w.shape.back();
      float bound = 1.0f / std::sqrt(static_cast<float>(fanIn));
      values = uniformVector(elements, s++, -bound, bound);
    }
    all.push_back(std::move(values));
  }
  return all;
}

std::string writeRandomWeights(const ModelConfig &config, uint64_t seed,
                               const std::string &path, size_t *count) {
  std::vector<WeightSpec> specs = modelWeights(config);
  std::vector<std::vector<float>> drawn = randomWeightValues(config, seed);
  std::map<std::string, SafetensorsEntry> entries;
  for (size_t i = 0; i < specs.size(); ++i) {
    const WeightSpec &w = specs[i];
    const std::vector<float> &values = drawn[i];
    SafetensorsEntry e;
    e.dtype = storageType(config);
    e.shape = w.shape;
    if (e.dtype == DType::F32) {
      e.bytes.assign(reinterpret_cast<const char *>(values.data()),
                     values.size() * sizeof(float));
    } else {
      std::vector<uint16_t> half(values.size());
      for (size_t j = 0; j < values.size(); ++j)
        half[j] = e.dtype == DType::BF16 ? floatToBF16(values[j])
                                         : floatToF16(values[j]);
      e.bytes.assign(reinterpret_cast<const char *>(half.data()),
                     half.size() * sizeof(uint16_t));
    }
    entries[w.name] = std::move(e);
  }
  std::map<std::string, std::string> metadata = {
      {"linformer.model", modelConfigJson(config)},
      {"linformer.seed", std::to_string(seed)}};
  if (std::string err = writeSafetensors(path, entries, metadata);
      !err.empty())
    return err;
  if (count)
    *count = specs.size();
  return "";
}

} // namespace linformer
