//===- Encoder.cpp - reference Linformer encoder (test oracle) --*- C++ -*-===//
//
// See Encoder.h. Sums are accumulated in double, as in Reference.cpp.
//
//===----------------------------------------------------------------------===//

#include "lib/Reference/Encoder.h"

#include <cmath>
#include <vector>

namespace linformer::ref {

void layerNorm(float *data, int64_t rows, int64_t dim, const float *gamma,
               const float *beta, double eps) {
  for (int64_t r = 0; r < rows; ++r) {
    float *row = data + r * dim;
    double mean = 0, var = 0;
    for (int64_t i = 0; i < dim; ++i)
      mean += row[i];
    mean /= dim;
    for (int64_t i = 0; i < dim; ++i)
      var += (row[i] - mean) * (row[i] - mean);
    var /= dim;
    double inv = 1.0 / std::sqrt(var + eps);
    for (int64_t i = 0; i < dim; ++i)
      row[i] = static_cast<float>((row[i] - mean) * inv * gamma[i] + beta[i]);
  }
}

float gelu(float x) {
  return static_cast<float>(0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))));
}

std::string encoderForward(const ModelConfig &c, const WeightLookup &weights,
                           const float *x, const int32_t *lengths,
                           const uint8_t *mask, float *y) {
  if (std::string e = validateModelConfig(c); !e.empty())
    return e;
  int64_t rows = c.batch * c.maxSeqLen, dm = c.dModel, ffn = c.ffnDim;
  auto need = [&](const std::string &name, const float *&out) {
    out = weights(name);
    return out != nullptr;
  };
  std::vector<float> h(x, x + rows * dm), a(rows * dm), t(rows * dm),
      mid(rows * ffn);
  for (int64_t i = 0; i < c.layers; ++i) {
    LayerConfig l = layerConfig(c, i);
    LayerWeights w;
    const float *g1 = nullptr, *b1 = nullptr, *g2 = nullptr, *b2 = nullptr,
                *w1 = nullptr, *fb1 = nullptr, *w2 = nullptr, *fb2 = nullptr;
    auto name = [&](const char *leaf) { return layerWeightName(i, leaf); };
    bool ok = need(name("attn.wq"), w.wq) && need(name("attn.wk"), w.wk) &&
              need(name("attn.wv"), w.wv) && need(name("attn.wo"), w.wo);
    if (c.bias)
      ok = ok && need(name("attn.bq"), w.bq) && need(name("attn.bk"), w.bk) &&
           need(name("attn.bv"), w.bv) && need(name("attn.bo"), w.bo);
    if (!c.attentionOnly()) {
      ok = ok && need(name("ln1.gamma"), g1) && need(name("ln1.beta"), b1) &&
           need(name("ln2.gamma"), g2) && need(name("ln2.beta"), b2) &&
           need(name("ffn.w1"), w1) && need(name("ffn.w2"), w2);
      if (c.bias)
        ok = ok && need(name("ffn.b1"), fb1) && need(name("ffn.b2"), fb2);
    }
    if (!ok)
      return "reference encoder: a weight of layer " + std::to_string(i) +
             " is missing";
    bool hasParams = c.projection == ProjectionKind::Learned ||
                     c.projection == ProjectionKind::Conv;
    if (hasParams) {
      if (!need(projectionWeightName(c, i, false), w.e))
        return "reference encoder: missing " + projectionWeightName(c, i, false);
      if (!c.shareKV && !need(projectionWeightName(c, i, true), w.f))
        return "reference encoder: missing " + projectionWeightName(c, i, true);
    }
    if (c.attentionOnly()) {
      if (std::string e =
              attentionLayer(l, w, h.data(), lengths, mask, a.data());
          !e.empty())
        return e;
      h = a;
      continue;
    }
    // Attention sub-block.
    const float *attnIn = h.data();
    if (c.norm == NormPlacement::Pre) {
      t = h;
      layerNorm(t.data(), rows, dm, g1, b1, c.layerNormEps);
      attnIn = t.data();
    }
    if (std::string e = attentionLayer(l, w, attnIn, lengths, mask, a.data());
        !e.empty())
      return e;
    for (int64_t j = 0; j < rows * dm; ++j)
      h[j] += a[j];
    if (c.norm == NormPlacement::Post)
      layerNorm(h.data(), rows, dm, g1, b1, c.layerNormEps);
    // Feed-forward sub-block.
    const float *ffnIn = h.data();
    if (c.norm == NormPlacement::Pre) {
      t = h;
      layerNorm(t.data(), rows, dm, g2, b2, c.layerNormEps);
      ffnIn = t.data();
    }
    if (std::string e = linear(rows, dm, ffn, ffnIn, w1, fb1, mid.data());
        !e.empty())
      return e;
    for (float &v : mid)
      v = gelu(v);
    if (std::string e = linear(rows, ffn, dm, mid.data(), w2, fb2, a.data());
        !e.empty())
      return e;
    for (int64_t j = 0; j < rows * dm; ++j)
      h[j] += a[j];
    if (c.norm == NormPlacement::Post)
      layerNorm(h.data(), rows, dm, g2, b2, c.layerNormEps);
  }
  std::copy(h.begin(), h.end(), y);
  return "";
}

} // namespace linformer::ref
