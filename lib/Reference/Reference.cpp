//===- Reference.cpp - Plain C++ Linformer attention (test oracle) --------===//
//
// Straight-loop implementation of the functions declared in Reference.h.
// Tensors are stored as float32 (as the compiled kernels store them), but
// every reduction (matmul, projection sum, dot product, softmax) accumulates
// in double, so the oracle's own rounding error is far below the tolerances
// the compiled code is tested with.
//
//===----------------------------------------------------------------------===//

#include "lib/Reference/Reference.h"
#include "lib/Support/EnumNames.h"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <limits>
#include <sstream>
#include <system_error>
#include <thread>
#include <utility>

namespace linformer {
namespace ref {

namespace {

/// Builds an error message from any streamable pieces.
template <typename... Args> std::string msg(const Args &...args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}

/// Runs fn(begin, end) over [0, count) split into contiguous ranges, one a
/// core, when the work (count x costPerItem multiply-adds) is big enough to
/// pay for the threads (the demo's n = 4096 encoder check: 31 -> 18 s on 2
/// cores). Callers make the items independent and write disjoint outputs, so
/// the result does not depend on the split. The oracle keeps its own threads:
/// the runtime's pool is part of what it checks.
template <typename Fn>
void parallelFor(int64_t count, int64_t costPerItem, const Fn &fn) {
  const int64_t cores = std::max(1u, std::thread::hardware_concurrency());
  const int64_t threads =
      std::min({cores, count * costPerItem / (int64_t(1) << 24) + 1, count});
  if (threads <= 1) {
    fn(int64_t(0), count);
    return;
  }
  const int64_t per = (count + threads - 1) / threads;
  auto range = [&fn, per, count](int64_t part) {
    fn(std::min(count, part * per), std::min(count, (part + 1) * per));
  };
  std::vector<std::thread> pool;
  int64_t part = 1;
  try {
    for (; part < threads; ++part)
      pool.emplace_back(range, part);
  } catch (const std::system_error &) {
    // No thread to be had: the parts not handed out run here.
  }
  for (; part < threads; ++part)
    range(part);
  range(0);
  for (std::thread &t : pool)
    t.join();
}

std::string checkPositive(const char *name, int64_t value) {
  if (value < 1)
    return msg(name, " must be positive, got ", value);
  return "";
}

/// Element counts are products of user-given sizes; refuse sizes whose
/// products do not fit so that no index computation below can overflow.
bool productFits(std::initializer_list<int64_t> dims) {
  // Leave room for byte offsets of 8-byte elements.
  const int64_t limit = std::numeric_limits<int64_t>::max() / 8;
  int64_t p = 1;
  for (int64_t d : dims) {
    if (d < 0 || __builtin_mul_overflow(p, d, &p) || p > limit)
      return false;
  }
  return true;
}

/// The size checks shared by the projection and the layer: positive sizes,
/// k <= n, and n % k == 0 for windowed kinds.
std::string checkProjectionSizes(ProjectionKind kind, int64_t batch,
                                 int64_t heads, int64_t seqLen,
                                 int64_t headDim, int64_t projLen) {
  std::string err;
  if (!(err = checkPositive("batch", batch)).empty() ||
      !(err = checkPositive("heads", heads)).empty() ||
      !(err = checkPositive("sequence length n", seqLen)).empty() ||
      !(err = checkPositive("head dim d", headDim)).empty() ||
      !(err = checkPositive("projected length k", projLen)).empty())
    return err;
  if (projLen > seqLen)
    return msg("projected length k ", projLen,
               " is greater than sequence length n ", seqLen);
  if (isWindowed(kind) && seqLen % projLen != 0)
    return msg("sequence length n ", seqLen, " is not divisible by k ",
               projLen, " (required by ", projectionKindName(kind),
               ": window = stride = n / k)");
  if (!productFits({batch, heads, seqLen, headDim}) ||
      !productFits({heads, projLen, seqLen}))
    return msg("sizes too large: batch ", batch, " heads ", heads, " n ",
               seqLen, " d ", headDim, " k ", projLen);
  return "";
}

/// Token t of sequence i is real. Both descriptions absent: all real.
inline bool isReal(int64_t i, int64_t t, int64_t seqLen,
                   const int32_t *lengths, const uint8_t *mask) {
  if (lengths)
    return t < lengths[i];
  if (mask)
    return mask[i * seqLen + t] != 0;
  return true;
}

} // namespace

//===----------------------------------------------------------------------===//
// Names and shapes
//===----------------------------------------------------------------------===//

static constexpr EnumName<ProjectionKind> kProjectionKindNames[] = {
    {ProjectionKind::Learned, "learned"},
    {ProjectionKind::MeanPool, "mean_pool"},
    {ProjectionKind::MaxPool, "max_pool"},
    {ProjectionKind::Conv, "conv"}};

const char *projectionKindName(ProjectionKind kind) {
  return enumName(kProjectionKindNames, kind, "unknown");
}

bool parseProjectionKind(const std::string &name, ProjectionKind &kind) {
  return parseEnum(kProjectionKindNames, name, kind);
}

bool isWindowed(ProjectionKind kind) { return kind != ProjectionKind::Learned; }

std::vector<int64_t> projectionWeightShape(ProjectionKind kind, int64_t heads,
                                           int64_t seqLen, int64_t headDim,
                                           int64_t projLen,
                                           bool sharedAcrossHeads) {
  std::vector<int64_t> shape;
  switch (kind) {
  case ProjectionKind::Learned:
    shape = {projLen, seqLen};
    break;
  case ProjectionKind::Conv:
    shape = {headDim, projLen > 0 ? seqLen / projLen : 0};
    break;
  case ProjectionKind::MeanPool:
  case ProjectionKind::MaxPool:
    return shape;
  }
  if (!sharedAcrossHeads)
    shape.insert(shape.begin(), heads);
  return shape;
}

int64_t projectionWeightElements(ProjectionKind kind, int64_t heads,
                                 int64_t seqLen, int64_t headDim,
                                 int64_t projLen, bool sharedAcrossHeads) {
  std::vector<int64_t> shape = projectionWeightShape(
      kind, heads, seqLen, headDim, projLen, sharedAcrossHeads);
  if (shape.empty())
    return 0;
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0 || __builtin_mul_overflow(n, d, &n))
      return 0;
  }
  return n;
}

int64_t projectionWeightElements(const LayerConfig &config) {
  return projectionWeightElements(config.kind, config.heads, config.seqLen,
                                  config.headDim(), config.projLen,
                                  config.sharing.heads);
}

float defaultScale(int64_t headDim) {
  return headDim > 0 ? static_cast<float>(1.0 / std::sqrt(double(headDim)))
                     : 1.0f;
}

//===----------------------------------------------------------------------===//
// Validation
//===----------------------------------------------------------------------===//

std::string validate(const LayerConfig &c) {
  std::string err;
  if (!(err = checkPositive("batch", c.batch)).empty() ||
      !(err = checkPositive("sequence length n", c.seqLen)).empty() ||
      !(err = checkPositive("d_model", c.dModel)).empty() ||
      !(err = checkPositive("heads", c.heads)).empty() ||
      !(err = checkPositive("projected length k", c.projLen)).empty())
    return err;
  if (c.dModel % c.heads != 0)
    return msg("d_model ", c.dModel, " is not divisible by heads ", c.heads);
  if (!productFits({c.batch, c.seqLen, c.dModel}) ||
      !productFits({c.dModel, c.dModel}))
    return msg("sizes too large: batch ", c.batch, " n ", c.seqLen,
               " d_model ", c.dModel);
  return checkProjectionSizes(c.kind, c.batch, c.heads, c.seqLen, c.headDim(),
                              c.projLen);
}

std::string validatePadding(int64_t batch, int64_t seqLen,
                            const int32_t *lengths, const uint8_t *mask) {
  std::string err;
  if (!(err = checkPositive("batch", batch)).empty() ||
      !(err = checkPositive("sequence length n", seqLen)).empty())
    return err;
  if (lengths && mask)
    return "give at most one of lengths and mask, not both";
  if (lengths) {
    for (int64_t i = 0; i < batch; ++i) {
      if (lengths[i] < 1 || lengths[i] > seqLen)
        return msg("length ", lengths[i], " of sequence ", i,
                   " is outside [1, ", seqLen, "] (n = ", seqLen, ")");
    }
  }
  if (mask) {
    for (int64_t i = 0; i < batch; ++i) {
      bool any = false;
      for (int64_t t = 0; t < seqLen && !any; ++t)
        any = mask[i * seqLen + t] != 0;
      if (!any)
        return msg("mask row ", i, " has no real token (length 0)");
    }
  }
  return "";
}

std::string validateWeights(const LayerConfig &c, const LayerWeights &w) {
  const std::pair<const char *, const float *> dense[] = {
      {"wq", w.wq}, {"wk", w.wk}, {"wv", w.wv}, {"wo", w.wo}};
  for (const auto &[name, ptr] : dense)
    if (!ptr)
      return msg("weight ", name, " is null");
  if (c.hasBias) {
    const std::pair<const char *, const float *> biases[] = {
        {"bq", w.bq}, {"bk", w.bk}, {"bv", w.bv}, {"bo", w.bo}};
    for (const auto &[name, ptr] : biases)
      if (!ptr)
        return msg("bias ", name, " is null but has_bias is set");
  }
  bool hasParams =
      c.kind == ProjectionKind::Learned || c.kind == ProjectionKind::Conv;
  if (hasParams && !w.e)
    return msg("projection E is null (required by ",
               projectionKindName(c.kind), ")");
  if (hasParams && !c.sharing.kv && !w.f)
    return msg("projection F is null (required by ",
               projectionKindName(c.kind), " without K/V sharing)");
  return "";
}

//===----------------------------------------------------------------------===//
// The parts
//===----------------------------------------------------------------------===//

std::string validSlotMask(ProjectionKind kind, int64_t batch, int64_t seqLen,
                          int64_t projLen, const int32_t *lengths,
                          const uint8_t *mask, uint8_t *validSlots) {
  std::string err = checkProjectionSizes(kind, batch, 1, seqLen, 1, projLen);
  if (!err.empty())
    return err;
  if (!(err = validatePadding(batch, seqLen, lengths, mask)).empty())
    return err;
  if (!validSlots)
    return "validSlots is null";
  const int64_t w = seqLen / projLen;
  for (int64_t i = 0; i < batch; ++i) {
    for (int64_t j = 0; j < projLen; ++j) {
      bool valid = !isWindowed(kind);
      for (int64_t t = j * w; t < (j + 1) * w && !valid; ++t)
        valid = isReal(i, t, seqLen, lengths, mask);
      validSlots[i * projLen + j] = valid ? 1 : 0;
    }
  }
  return "";
}

std::string sequenceProjection(ProjectionKind kind, int64_t batch,
                               int64_t heads, int64_t seqLen, int64_t headDim,
                               int64_t projLen, const float *input,
                               const float *weights,
                               bool weightsSharedAcrossHeads,
                               const int32_t *lengths, const uint8_t *mask,
                               float *out, uint8_t *validSlots) {
  std::string err =
      checkProjectionSizes(kind, batch, heads, seqLen, headDim, projLen);
  if (!err.empty())
    return err;
  if (!(err = validatePadding(batch, seqLen, lengths, mask)).empty())
    return err;
  if (!input || !out)
    return "projection input or output is null";
  bool hasParams =
      kind == ProjectionKind::Learned || kind == ProjectionKind::Conv;
  if (hasParams && !weights)
    return msg("projection weights are null (required by ",
               projectionKindName(kind), ")");

  const int64_t n = seqLen, d = headDim, k = projLen, w = n / k;
  const int64_t perHeadWeights =
      weightsSharedAcrossHeads
          ? 0
          : projectionWeightElements(kind, 1, n, d, k, /*shared=*/true);
  auto project = [&](int64_t bhBegin, int64_t bhEnd) {
    std::vector<double> acc(d);
    std::vector<float> best(d);
    for (int64_t bh = bhBegin; bh < bhEnd; ++bh) {
      const int64_t bi = bh / heads, hh = bh % heads;
      const float *in = input + bh * n * d;
      float *o = out + bh * k * d;
      const float *wh = hasParams ? weights + hh * perHeadWeights : nullptr;
      for (int64_t j = 0; j < k; ++j) {
        std::fill(acc.begin(), acc.end(), 0.0);
        // Learned slots read every token; windowed slots read their window.
        int64_t tBegin = isWindowed(kind) ? j * w : 0;
        int64_t tEnd = isWindowed(kind) ? (j + 1) * w : n;
        int64_t count = 0;
        std::fill(best.begin(), best.end(),
                  -std::numeric_limits<float>::infinity());
        for (int64_t t = tBegin; t < tEnd; ++t) {
          if (!isReal(bi, t, n, lengths, mask))
            continue;
          ++count;
          const float *row = in + t * d;
          switch (kind) {
          case ProjectionKind::Learned: {
            double e = wh[j * n + t];
            for (int64_t c = 0; c < d; ++c)
              acc[c] += e * row[c];
            break;
          }
          case ProjectionKind::MeanPool:
            for (int64_t c = 0; c < d; ++c)
              acc[c] += row[c];
            break;
          case ProjectionKind::MaxPool:
            for (int64_t c = 0; c < d; ++c)
              best[c] = std::max(best[c], row[c]);
            break;
          case ProjectionKind::Conv:
            for (int64_t c = 0; c < d; ++c)
              acc[c] += double(wh[c * w + (t - tBegin)]) * row[c];
            break;
          }
        }
        for (int64_t c = 0; c < d; ++c) {
          double v = 0.0;
          if (count > 0 || kind == ProjectionKind::Learned) {
            if (kind == ProjectionKind::MeanPool)
              v = acc[c] / double(count);
            else if (kind == ProjectionKind::MaxPool)
              v = best[c];
            else
              v = acc[c];
          }
          o[j * d + c] = static_cast<float>(v);
        }
      }
    }
  };
  // (sequence, head) pairs are independent: split over the cores.
  parallelFor(batch * heads, k * (isWindowed(kind) ? w : n) * d, project);
  if (validSlots)
    return validSlotMask(kind, batch, n, k, lengths, mask, validSlots);
  return "";
}

std::string attentionCore(int64_t batch, int64_t heads, int64_t seqLen,
                          int64_t projLen, int64_t headDim, int64_t valueDim,
                          const float *q, const float *kp, const float *vp,
                          float scale, const uint8_t *keyMask, float *out) {
  std::string err;
  if (!(err = checkPositive("batch", batch)).empty() ||
      !(err = checkPositive("heads", heads)).empty() ||
      !(err = checkPositive("query length n", seqLen)).empty() ||
      !(err = checkPositive("projected length k", projLen)).empty() ||
      !(err = checkPositive("head dim d", headDim)).empty() ||
      !(err = checkPositive("value dim dv", valueDim)).empty())
    return err;
  if (!productFits({batch, heads, seqLen, headDim}) ||
      !productFits({batch, heads, seqLen, valueDim}) ||
      !productFits({batch, heads, projLen, headDim}) ||
      !productFits({batch, heads, projLen, valueDim}))
    return "attention core sizes too large";
  if (!q || !kp || !vp || !out)
    return "attention core q, kp, vp or out is null";
  if (!std::isfinite(scale))
    return msg("attention scale ", scale, " is not finite");
  if (keyMask) {
    for (int64_t bi = 0; bi < batch; ++bi) {
      bool any = false;
      for (int64_t j = 0; j < projLen && !any; ++j)
        any = keyMask[bi * projLen + j] != 0;
      if (!any)
        return msg("key mask of sequence ", bi,
                   " has no valid slot: softmax over nothing");
    }
  }

  const int64_t n = seqLen, k = projLen, d = headDim, dv = valueDim;
  const double negInf = -std::numeric_limits<double>::infinity();
  auto attend = [&](int64_t bhBegin, int64_t bhEnd) {
    std::vector<double> logits(k), acc(dv);
    for (int64_t bh = bhBegin; bh < bhEnd; ++bh) {
      const int64_t bi = bh / heads;
      const float *kh = kp + bh * k * d;
      const float *vh = vp + bh * k * dv;
      for (int64_t i = 0; i < n; ++i) {
        const float *qi = q + (bh * n + i) * d;
        double rowMax = negInf;
        for (int64_t j = 0; j < k; ++j) {
          if (keyMask && !keyMask[bi * k + j]) {
            logits[j] = negInf;
            continue;
          }
          double dot = 0.0;
          for (int64_t c = 0; c < d; ++c)
            dot += double(qi[c]) * kh[j * d + c];
          logits[j] = double(scale) * dot;
          rowMax = std::max(rowMax, logits[j]);
        }
        // Subtracting the row maximum keeps exp() in [0, 1]: no overflow
        // however large the logits, and the largest term is exactly 1.
        double sum = 0.0;
        std::fill(acc.begin(), acc.end(), 0.0);
        for (int64_t j = 0; j < k; ++j) {
          if (logits[j] == negInf)
            continue;
          double p = std::exp(logits[j] - rowMax);
          sum += p;
          for (int64_t c = 0; c < dv; ++c)
            acc[c] += p * vh[j * dv + c];
        }
        float *oi = out + (bh * n + i) * dv;
        for (int64_t c = 0; c < dv; ++c)
          oi[c] = static_cast<float>(acc[c] / sum);
      }
    }
  };
  // (sequence, head) pairs are independent: split over the cores.
  parallelFor(batch * heads, n * k * (d + dv), attend);
  return "";
}

std::string attentionCore(int64_t batch, int64_t heads, int64_t seqLen,
                          int64_t projLen, int64_t headDim, int64_t valueDim,
                          const float *q, const float *kp, const float *vp,
                          const uint8_t *keyMask, float *out) {
  return attentionCore(batch, heads, seqLen, projLen, headDim, valueDim, q, kp,
                       vp, defaultScale(headDim), keyMask, out);
}

std::string linear(int64_t rows, int64_t inDim, int64_t outDim, const float *x,
                   const float *w, const float *bias, float *y) {
  std::string err;
  if (!(err = checkPositive("rows", rows)).empty() ||
      !(err = checkPositive("input dim", inDim)).empty() ||
      !(err = checkPositive("output dim", outDim)).empty())
    return err;
  if (!productFits({rows, inDim}) || !productFits({rows, outDim}) ||
      !productFits({inDim, outDim}))
    return "linear sizes too large";
  if (!x || !w || !y)
    return "linear x, w or y is null";
  parallelFor(rows, inDim * outDim, [&](int64_t begin, int64_t end) {
    std::vector<double> acc(outDim);
    for (int64_t r = begin; r < end; ++r) {
      for (int64_t o = 0; o < outDim; ++o)
        acc[o] = bias ? double(bias[o]) : 0.0;
      for (int64_t i = 0; i < inDim; ++i) {
        double xi = x[r * inDim + i];
        const float *wi = w + i * outDim;
        for (int64_t o = 0; o < outDim; ++o)
          acc[o] += xi * wi[o];
      }
      for (int64_t o = 0; o < outDim; ++o)
        y[r * outDim + o] = static_cast<float>(acc[o]);
    }
  });
  return "";
}

/// splitHeads and mergeHeads are one permutation read in two directions.
static std::string permuteHeads(int64_t batch, int64_t seqLen, int64_t heads,
                                int64_t headDim, const float *in, float *out,
                                bool split) {
  std::string err;
  if (!(err = checkPositive("batch", batch)).empty() ||
      !(err = checkPositive("sequence length n", seqLen)).empty() ||
      !(err = checkPositive("heads", heads)).empty() ||
      !(err = checkPositive("head dim d", headDim)).empty())
    return err;
  if (!productFits({batch, seqLen, heads, headDim}))
    return "head permutation sizes too large";
  if (!in || !out)
    return "head permutation input or output is null";
  const int64_t dm = heads * headDim;
  for (int64_t bi = 0; bi < batch; ++bi)
    for (int64_t t = 0; t < seqLen; ++t)
      for (int64_t hh = 0; hh < heads; ++hh)
        for (int64_t c = 0; c < headDim; ++c) {
          int64_t merged = (bi * seqLen + t) * dm + hh * headDim + c;
          int64_t perHead = ((bi * heads + hh) * seqLen + t) * headDim + c;
          if (split)
            out[perHead] = in[merged];
          else
            out[merged] = in[perHead];
        }
  return "";
}

std::string splitHeads(int64_t batch, int64_t seqLen, int64_t heads,
                       int64_t headDim, const float *in, float *out) {
  return permuteHeads(batch, seqLen, heads, headDim, in, out, /*split=*/true);
}

std::string mergeHeads(int64_t batch, int64_t seqLen, int64_t heads,
                       int64_t headDim, const float *in, float *out) {
  return permuteHeads(batch, seqLen, heads, headDim, in, out, /*split=*/false);
}

//===----------------------------------------------------------------------===//
// The whole layer
//===----------------------------------------------------------------------===//

std::string attentionLayer(const LayerConfig &c, const LayerWeights &w,
                           const float *x, const int32_t *lengths,
                           const uint8_t *mask, float *out) {
  std::string err;
  if (!(err = validate(c)).empty() || !(err = validateWeights(c, w)).empty() ||
      !(err = validatePadding(c.batch, c.seqLen, lengths, mask)).empty())
    return err;
  if (!x || !out)
    return "layer input x or output is null";

  const int64_t b = c.batch, n = c.seqLen, dm = c.dModel, h = c.heads;
  const int64_t d = c.headDim(), k = c.projLen, rows = b * n;
  const float *bq = c.hasBias ? w.bq : nullptr;
  const float *bk = c.hasBias ? w.bk : nullptr;
  const float *bv = c.hasBias ? w.bv : nullptr;
  const float *bo = c.hasBias ? w.bo : nullptr;

  std::vector<float> full(rows * dm);
  std::vector<float> qh(rows * dm), kh(rows * dm), vh(rows * dm);
  // Sizes were validated above, so the parts below cannot fail; their
  // results are still checked so that a future bug reports instead of lying.
  auto project = [&](const float *wt, const float *bias, std::vector<float> &dst) {
    std::string e = linear(rows, dm, dm, x, wt, bias, full.data());
    if (e.empty())
      e = splitHeads(b, n, h, d, full.data(), dst.data());
    return e;
  };
  if (!(err = project(w.wq, bq, qh)).empty() ||
      !(err = project(w.wk, bk, kh)).empty() ||
      !(err = project(w.wv, bv, vh)).empty())
    return err;

  const float *e = w.e;
  const float *f = c.sharing.kv ? w.e : w.f;
  std::vector<float> kp(b * h * k * d), vp(b * h * k * d);
  std::vector<uint8_t> valid(b * k);
  if (!(err = sequenceProjection(c.kind, b, h, n, d, k, kh.data(), e,
                                 c.sharing.heads, lengths, mask, kp.data(),
                                 valid.data()))
           .empty() ||
      !(err = sequenceProjection(c.kind, b, h, n, d, k, vh.data(), f,
                                 c.sharing.heads, lengths, mask, vp.data()))
           .empty())
    return err;

  std::vector<float> attn(rows * dm);
  if (!(err = attentionCore(b, h, n, k, d, d, qh.data(), kp.data(), vp.data(),
                            defaultScale(d), valid.data(), attn.data()))
           .empty() ||
      !(err = mergeHeads(b, n, h, d, attn.data(), full.data())).empty())
    return err;
  return linear(rows, dm, dm, full.data(), w.wo, bo, out);
}

} // namespace ref
} // namespace linformer
