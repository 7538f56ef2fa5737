//===- ReferenceTest.cpp - Tests of the reference implementation ----------===//
//
// The reference in lib/Reference is the oracle for every compiled kernel, so
// it is tested against values computed by hand, against naive formulas
// written out here independently (full softmax attention, softmax without
// max subtraction), and against the algebraic identities the compiler relies
// on (sharing presets, mask = lengths, n == k mean pool = no projection).
//
// Tolerances: the reference stores float32 and accumulates in double.
//   - hand-computed cases use exactly representable values: EXPECT_FLOAT_EQ
//     (4 ulp);
//   - comparisons with the naive double-precision formulas below, on O(1)
//     data: 1e-5 absolute (float32 rounding of O(1) intermediates is ~1e-7,
//     accumulated over a few dozen terms);
//   - identities that run the very same arithmetic (shared vs copied
//     weights, mask vs lengths, perturbing padded tokens): exact equality.
//
//===----------------------------------------------------------------------===//

#include "lib/Reference/Reference.h"
#include "lib/Support/Random.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

using namespace linformer;
using namespace linformer::ref;

namespace {

constexpr float kNaiveTol = 1e-5f;

const ProjectionKind kAllKinds[] = {ProjectionKind::Learned,
                                    ProjectionKind::MeanPool,
                                    ProjectionKind::MaxPool,
                                    ProjectionKind::Conv};
const ProjectionKind kWindowedKinds[] = {
    ProjectionKind::MeanPool, ProjectionKind::MaxPool, ProjectionKind::Conv};

bool contains(const std::string &haystack, const std::string &needle) {
  return haystack.find(needle) != std::string::npos;
}

void expectAllNear(const std::vector<float> &actual,
                   const std::vector<float> &expected, float tol) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i)
    EXPECT_NEAR(actual[i], expected[i], tol) << "at index " << i;
}

void expectAllFloatEq(const std::vector<float> &actual,
                      const std::vector<float> &expected) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i)
    EXPECT_FLOAT_EQ(actual[i], expected[i]) << "at index " << i;
}

/// A layer with random weights in [-0.5, 0.5) and input in [-1, 1), so that
/// every intermediate stays O(1).
struct RandomLayer {
  LayerConfig cfg;
  std::vector<float> wq, wk, wv, wo, bq, bk, bv, bo, e, f, x;

  RandomLayer(const LayerConfig &config, uint64_t seed) : cfg(config) {
    size_t dm = size_t(cfg.dModel);
    wq = uniformVector(dm * dm, seed + 1, -0.5f, 0.5f);
    wk = uniformVector(dm * dm, seed + 2, -0.5f, 0.5f);
    wv = uniformVector(dm * dm, seed + 3, -0.5f, 0.5f);
    wo = uniformVector(dm * dm, seed + 4, -0.5f, 0.5f);
    bq = uniformVector(dm, seed + 5, -0.5f, 0.5f);
    bk = uniformVector(dm, seed + 6, -0.5f, 0.5f);
    bv = uniformVector(dm, seed + 7, -0.5f, 0.5f);
    bo = uniformVector(dm, seed + 8, -0.5f, 0.5f);
    size_t pe = size_t(projectionWeightElements(cfg));
    e = uniformVector(pe, seed + 9, -0.5f, 0.5f);
    f = uniformVector(pe, seed + 10, -0.5f, 0.5f);
    x = uniformVector(size_t(cfg.batch * cfg.seqLen) * dm, seed + 11, -1.0f,
                      1.0f);
  }

  LayerWeights weights() const {
    LayerWeights w;
    w.wq = wq.data();
    w.wk = wk.data();
    w.wv = wv.data();
    w.wo = wo.data();
    if (cfg.hasBias) {
      w.bq = bq.data();
      w.bk = bk.data();
      w.bv = bv.data();
      w.bo = bo.data();
    }
    w.e = e.empty() ? nullptr : e.data();
    w.f = (f.empty() || cfg.sharing.kv) ? nullptr : f.data();
    return w;
  }

  std::vector<float> run(const int32_t *lengths = nullptr,
                         const uint8_t *mask = nullptr) const {
    std::vector<float> out(x.size(), -999.0f);
    std::string err =
        attentionLayer(cfg, weights(), x.data(), lengths, mask, out.data());
    EXPECT_EQ(err, "");
    return out;
  }
};

LayerConfig makeConfig(ProjectionKind kind, int64_t b, int64_t n, int64_t dm,
                       int64_t h, int64_t k, bool hasBias = true) {
  LayerConfig c;
  c.batch = b;
  c.seqLen = n;
  c.dModel = dm;
  c.heads = h;
  c.projLen = k;
  c.kind = kind;
  c.hasBias = hasBias;
  return c;
}

/// Standard multi-head attention over all (real) tokens, with no sequence
/// projection, written independently of the library in double precision.
/// lengths (nullable) masks padded keys.
std::vector<float> naiveFullAttention(const RandomLayer &L,
                                      const int32_t *lengths) {
  const LayerConfig &c = L.cfg;
  const int64_t b = c.batch, n = c.seqLen, dm = c.dModel, h = c.heads;
  const int64_t d = dm / h;
  auto lin = [&](const std::vector<float> &in, const std::vector<float> &w,
                 const std::vector<float> &bias) {
    std::vector<double> y(size_t(b * n * dm));
    for (int64_t r = 0; r < b * n; ++r)
      for (int64_t o = 0; o < dm; ++o) {
        double s = c.hasBias ? bias[o] : 0.0;
        for (int64_t i = 0; i < dm; ++i)
          s += double(in[r * dm + i]) * w[i * dm + o];
        y[r * dm + o] = s;
      }
    return y;
  };
  std::vector<double> q = lin(L.x, L.wq, L.bq), k = lin(L.x, L.wk, L.bk),
                      v = lin(L.x, L.wv, L.bv);
  std::vector<float> merged(size_t(b * n * dm));
  for (int64_t bi = 0; bi < b; ++bi) {
    int64_t len = lengths ? lengths[bi] : n;
    for (int64_t hh = 0; hh < h; ++hh)
      for (int64_t i = 0; i < n; ++i) {
        std::vector<double> p(static_cast<size_t>(len));
        double sum = 0.0;
        for (int64_t j = 0; j < len; ++j) {
          double dot = 0.0;
          for (int64_t c2 = 0; c2 < d; ++c2)
            dot += q[(bi * n + i) * dm + hh * d + c2] *
                   k[(bi * n + j) * dm + hh * d + c2];
          p[j] = std::exp(dot / std::sqrt(double(d)));
          sum += p[j];
        }
        for (int64_t c2 = 0; c2 < d; ++c2) {
          double acc = 0.0;
          for (int64_t j = 0; j < len; ++j)
            acc += p[j] * v[(bi * n + j) * dm + hh * d + c2];
          merged[(bi * n + i) * dm + hh * d + c2] = float(acc / sum);
        }
      }
  }
  std::vector<float> out(size_t(b * n * dm));
  for (int64_t r = 0; r < b * n; ++r)
    for (int64_t o = 0; o < dm; ++o) {
      double s = c.hasBias ? L.bo[o] : 0.0;
      for (int64_t i = 0; i < dm; ++i)
        s += double(merged[r * dm + i]) * L.wo[i * dm + o];
      out[r * dm + o] = float(s);
    }
  return out;
}

/// softmax(scale * q kp^T) vp with exp() taken directly (no max
/// subtraction): only valid for small logits, which is the point: it is a
/// different formula from the library's.
std::vector<float> naiveCore(int64_t b, int64_t h, int64_t n, int64_t k,
                             int64_t d, int64_t dv,
                             const std::vector<float> &q,
                             const std::vector<float> &kp,
                             const std::vector<float> &vp, double scale,
                             const uint8_t *keyMask) {
  std::vector<float> out(size_t(b * h * n * dv));
  for (int64_t bi = 0; bi < b; ++bi)
    for (int64_t hh = 0; hh < h; ++hh)
      for (int64_t i = 0; i < n; ++i) {
        int64_t bh = bi * h + hh;
        double sum = 0.0;
        std::vector<double> num(size_t(dv), 0.0);
        for (int64_t j = 0; j < k; ++j) {
          if (keyMask && !keyMask[bi * k + j])
            continue;
          double dot = 0.0;
          for (int64_t c = 0; c < d; ++c)
            dot += double(q[(bh * n + i) * d + c]) * kp[(bh * k + j) * d + c];
          double p = std::exp(scale * dot);
          sum += p;
          for (int64_t c = 0; c < dv; ++c)
            num[c] += p * vp[(bh * k + j) * dv + c];
        }
        for (int64_t c = 0; c < dv; ++c)
          out[(bh * n + i) * dv + c] = float(num[c] / sum);
      }
  return out;
}

/// Runs sequenceProjection and expects success.
std::vector<float> project(ProjectionKind kind, int64_t b, int64_t h,
                           int64_t n, int64_t d, int64_t k,
                           const std::vector<float> &in, const float *weights,
                           bool shared, const int32_t *lengths,
                           const uint8_t *mask,
                           std::vector<uint8_t> *valid = nullptr) {
  std::vector<float> out(size_t(b * h * k * d), -999.0f);
  if (valid)
    valid->assign(size_t(b * k), 7);
  std::string err =
      sequenceProjection(kind, b, h, n, d, k, in.data(), weights, shared,
                         lengths, mask, out.data(),
                         valid ? valid->data() : nullptr);
  EXPECT_EQ(err, "");
  return out;
}

//===----------------------------------------------------------------------===//
// Hand-computed projections
//===----------------------------------------------------------------------===//

// n = 4, k = 2, d = 2: tokens (1,2) (3,4) (5,6) (7,8); windows {0,1}, {2,3}.
const std::vector<float> kTokens = {1, 2, 3, 4, 5, 6, 7, 8};

TEST(ReferenceProjection, MeanPoolHandComputed) {
  std::vector<uint8_t> valid;
  auto out = project(ProjectionKind::MeanPool, 1, 1, 4, 2, 2, kTokens, nullptr,
                     false, nullptr, nullptr, &valid);
  expectAllFloatEq(out, {2, 3, 6, 7});
  EXPECT_EQ(valid, (std::vector<uint8_t>{1, 1}));
}

TEST(ReferenceProjection, MaxPoolHandComputed) {
  // All-negative second window: a max initialised at 0 would give (0, 0).
  std::vector<float> in = {-1, 5, 3, -2, -4, -3, -6, -1};
  auto out = project(ProjectionKind::MaxPool, 1, 1, 4, 2, 2, in, nullptr,
                     false, nullptr, nullptr);
  expectAllFloatEq(out, {3, 5, -4, -1});
}

TEST(ReferenceProjection, ConvHandComputedPerHead) {
  // Two heads, per-head filters [h=2, d=2, w=2].
  //   head 0: channel 0 taps (1, 2), channel 1 taps (0.5, -1)
  //   head 1: channel 0 taps (0, 1), channel 1 taps (1, 0)
  std::vector<float> w = {1, 2, 0.5f, -1, 0, 1, 1, 0};
  std::vector<float> in = kTokens;
  for (float v : kTokens)
    in.push_back(10 * v); // head 1: (10,20) (30,40) (50,60) (70,80)
  auto out = project(ProjectionKind::Conv, 1, 2, 4, 2, 2, in, w.data(), false,
                     nullptr, nullptr);
  // head 0 slot 0: c0 = 1*1 + 2*3 = 7, c1 = 0.5*2 - 1*4 = -3
  // head 0 slot 1: c0 = 1*5 + 2*7 = 19, c1 = 0.5*6 - 1*8 = -5
  // head 1 slot 0: c0 = 0*10 + 1*30 = 30, c1 = 1*20 + 0*40 = 20
  // head 1 slot 1: c0 = 70, c1 = 60
  expectAllFloatEq(out, {7, -3, 19, -5, 30, 20, 70, 60});
}

TEST(ReferenceProjection, LearnedHandComputedPerHead) {
  // E [h=2, k=2, n=4]: head 0 picks token 2, then averages tokens 0 and 3;
  // head 1 picks token 0, then takes token 1 - token 2.
  std::vector<float> e = {0, 0, 1, 0, 0.5f, 0, 0, 0.5f, //
                          1, 0, 0, 0, 0, 1, -1, 0};
  std::vector<float> in = kTokens;
  for (float v : kTokens)
    in.push_back(10 * v);
  std::vector<uint8_t> valid;
  auto out = project(ProjectionKind::Learned, 1, 2, 4, 2, 2, in, e.data(),
                     false, nullptr, nullptr, &valid);
  expectAllFloatEq(out, {5, 6, 4, 5, 10, 20, -20, -20});
  EXPECT_EQ(valid, (std::vector<uint8_t>{1, 1}));
}

//===----------------------------------------------------------------------===//
// Padding
//===----------------------------------------------------------------------===//

TEST(ReferencePadding, LearnedWithLengthsEqualsZeroedColumns) {
  const int64_t b = 2, h = 2, n = 6, k = 3, d = 4;
  auto in = uniformVector(size_t(b * h * n * d), 11, -1, 1);
  auto e = uniformVector(size_t(h * k * n), 12, -1, 1);
  const int32_t lengths[] = {4, 6};
  std::vector<uint8_t> valid;
  auto padded = project(ProjectionKind::Learned, b, h, n, d, k, in, e.data(),
                        false, lengths, nullptr, &valid);
  EXPECT_EQ(valid, std::vector<uint8_t>(size_t(b * k), 1));
  for (int64_t bi = 0; bi < b; ++bi) {
    std::vector<float> zeroed = e;
    for (int64_t hh = 0; hh < h; ++hh)
      for (int64_t j = 0; j < k; ++j)
        for (int64_t t = lengths[bi]; t < n; ++t)
          zeroed[(hh * k + j) * n + t] = 0;
    std::vector<float> slice(in.begin() + bi * h * n * d,
                             in.begin() + (bi + 1) * h * n * d);
    auto ref = project(ProjectionKind::Learned, 1, h, n, d, k, slice,
                       zeroed.data(), false, nullptr, nullptr);
    std::vector<float> got(padded.begin() + bi * h * k * d,
                           padded.begin() + (bi + 1) * h * k * d);
    expectAllNear(got, ref, 1e-6f);
  }
}

TEST(ReferencePadding, MeanPoolAveragesOnlyRealTokens) {
  // n = 6, k = 2, d = 1: windows {0,1,2} and {3,4,5}.
  std::vector<float> in = {1, 2, 4, 8, 16, 32};
  const int32_t lengths[] = {4};
  auto out = project(ProjectionKind::MeanPool, 1, 1, 6, 1, 2, in, nullptr,
                     false, lengths, nullptr);
  expectAllFloatEq(out, {7.0f / 3.0f, 8}); // (1+2+4)/3 and token 3 alone
  const uint8_t mask[] = {1, 0, 1, 0, 1, 0};
  out = project(ProjectionKind::MeanPool, 1, 1, 6, 1, 2, in, nullptr, false,
                nullptr, mask);
  expectAllFloatEq(out, {2.5f, 16}); // (1+4)/2 and token 4 alone
}

TEST(ReferencePadding, MaxPoolAndConvSkipPaddedTokens) {
  std::vector<float> in = {1, 2, 4, 8, 16, 32};
  const int32_t lengths[] = {4};
  auto out = project(ProjectionKind::MaxPool, 1, 1, 6, 1, 2, in, nullptr,
                     false, lengths, nullptr);
  expectAllFloatEq(out, {4, 8}); // not 32: tokens 4 and 5 are padding
  std::vector<float> w = {1, 10, 100}; // [d=1, w=3]
  out = project(ProjectionKind::Conv, 1, 1, 6, 1, 2, in, w.data(), false,
                lengths, nullptr);
  expectAllFloatEq(out, {1 + 20 + 400, 8}); // slot 1: 1*8 only
}

TEST(ReferencePadding, AllPaddedWindowIsInvalidAndZero) {
  // n = 4, k = 2, length 2: the second window holds only padding.
  const int32_t lengths[] = {2};
  std::vector<float> w = {1, 2, 3, 4};
  for (ProjectionKind kind : kWindowedKinds) {
    SCOPED_TRACE(projectionKindName(kind));
    std::vector<uint8_t> valid;
    auto out = project(kind, 1, 1, 4, 2, 2, kTokens,
                       kind == ProjectionKind::Conv ? w.data() : nullptr,
                       false, lengths, nullptr, &valid);
    EXPECT_EQ(valid, (std::vector<uint8_t>{1, 0}));
    EXPECT_EQ(out[2], 0.0f);
    EXPECT_EQ(out[3], 0.0f);
    std::vector<uint8_t> slots(2, 7);
    EXPECT_EQ(validSlotMask(kind, 1, 4, 2, lengths, nullptr, slots.data()),
              "");
    EXPECT_EQ(slots, (std::vector<uint8_t>{1, 0}));
  }
  // Learned slots mix all real tokens: always valid.
  std::vector<uint8_t> slots(2, 7);
  EXPECT_EQ(validSlotMask(ProjectionKind::Learned, 1, 4, 2, lengths, nullptr,
                          slots.data()),
            "");
  EXPECT_EQ(slots, (std::vector<uint8_t>{1, 1}));
}

TEST(ReferencePadding, InvalidSlotIsMaskedInLayer) {
  // n = 4, k = 2, length 2 with pooling: only slot 0 is valid, so every
  // query row attends to it alone and all output rows of the sequence are
  // equal. Were the empty slot (0) not masked, the rows would differ.
  for (ProjectionKind kind : kWindowedKinds) {
    SCOPED_TRACE(projectionKindName(kind));
    RandomLayer L(makeConfig(kind, 1, 4, 4, 2, 2), 100);
    // Sharpen the attention so that rows attending differently differ
    // clearly in the sanity check below.
    for (float &v : L.wq)
      v *= 5;
    for (float &v : L.wk)
      v *= 5;
    const int32_t lengths[] = {2};
    auto out = L.run(lengths);
    for (int64_t i = 1; i < 4; ++i)
      for (int64_t c = 0; c < 4; ++c)
        EXPECT_NEAR(out[i * 4 + c], out[c], 1e-6f) << "row " << i;
    // Sanity: without padding the rows do differ.
    auto unpadded = L.run();
    EXPECT_GT(std::fabs(unpadded[4] - unpadded[0]) +
                  std::fabs(unpadded[12] - unpadded[0]),
              1e-4f);
  }
}

TEST(ReferencePadding, MaskEqualsEquivalentLengths) {
  const int32_t lengths[] = {3, 6};
  const uint8_t mask[] = {1, 1, 1, 0, 0, 0, //
                          1, 1, 1, 1, 1, 1};
  for (ProjectionKind kind : kAllKinds) {
    SCOPED_TRACE(projectionKindName(kind));
    RandomLayer L(makeConfig(kind, 2, 6, 8, 2, 3), 200);
    EXPECT_EQ(L.run(lengths), L.run(nullptr, mask)); // same arithmetic
    std::vector<uint8_t> a(6), m(6);
    EXPECT_EQ(validSlotMask(kind, 2, 6, 3, lengths, nullptr, a.data()), "");
    EXPECT_EQ(validSlotMask(kind, 2, 6, 3, nullptr, mask, m.data()), "");
    EXPECT_EQ(a, m);
  }
}

TEST(ReferencePadding, PaddedTokensDoNotAffectRealRows) {
  // Changing the input at padded positions must leave the output of every
  // real row unchanged, bit for bit (padded terms are skipped, not zeroed
  // after the fact). Padded query rows are still computed and finite.
  const uint8_t mask[] = {1, 0, 1, 1, 0, 1, //
                          0, 0, 0, 1, 1, 1};
  for (ProjectionKind kind : kAllKinds) {
    SCOPED_TRACE(projectionKindName(kind));
    RandomLayer L(makeConfig(kind, 2, 6, 8, 2, 3), 300);
    auto before = L.run(nullptr, mask);
    RandomLayer M = L;
    for (int64_t r = 0; r < 12; ++r)
      if (!mask[r])
        for (int64_t c = 0; c < 8; ++c)
          M.x[r * 8 + c] += 3.0f + float(c);
    auto after = M.run(nullptr, mask);
    for (int64_t r = 0; r < 12; ++r)
      for (int64_t c = 0; c < 8; ++c) {
        EXPECT_TRUE(std::isfinite(after[r * 8 + c]));
        if (mask[r]) {
          EXPECT_EQ(after[r * 8 + c], before[r * 8 + c]) << "row " << r;
        }
      }
  }
}

//===----------------------------------------------------------------------===//
// Attention core
//===----------------------------------------------------------------------===//

TEST(ReferenceCore, MatchesNaiveSoftmax) {
  const int64_t b = 2, h = 2, n = 5, k = 3, d = 4, dv = 3;
  auto q = uniformVector(size_t(b * h * n * d), 21, -1, 1);
  auto kp = uniformVector(size_t(b * h * k * d), 22, -1, 1);
  auto vp = uniformVector(size_t(b * h * k * dv), 23, -1, 1);
  std::vector<float> out(size_t(b * h * n * dv));

  // Default scale 1/sqrt(d) = 0.5.
  EXPECT_EQ(attentionCore(b, h, n, k, d, dv, q.data(), kp.data(), vp.data(),
                          nullptr, out.data()),
            "");
  expectAllNear(out, naiveCore(b, h, n, k, d, dv, q, kp, vp, 0.5, nullptr),
                kNaiveTol);

  // Explicit scale.
  EXPECT_EQ(attentionCore(b, h, n, k, d, dv, q.data(), kp.data(), vp.data(),
                          3.0f, nullptr, out.data()),
            "");
  expectAllNear(out, naiveCore(b, h, n, k, d, dv, q, kp, vp, 3.0, nullptr),
                kNaiveTol);

  // Key mask: masked slots are left out of the softmax entirely.
  const uint8_t keyMask[] = {1, 0, 1, 0, 1, 1};
  EXPECT_EQ(attentionCore(b, h, n, k, d, dv, q.data(), kp.data(), vp.data(),
                          keyMask, out.data()),
            "");
  expectAllNear(out, naiveCore(b, h, n, k, d, dv, q, kp, vp, 0.5, keyMask),
                kNaiveTol);
}

// Big products are split over the cores (rows of linear, (sequence, head)
// pairs of the projection and the core); each piece alone is small enough to
// run on one thread. Splitting must not change a bit, on any core count.
TEST(ReferenceThreads, SplitWorkEqualsOnePieceAtATime) {
  {
    const int64_t rows = 5, in = 1024, out = 4096; // 2^22 MACs a row
    auto x = uniformVector(size_t(rows * in), 31, -1, 1);
    auto w = uniformVector(size_t(in * out), 32, -1, 1);
    auto bias = uniformVector(size_t(out), 33, -1, 1);
    std::vector<float> whole(size_t(rows * out)), piece(whole.size());
    ASSERT_EQ(linear(rows, in, out, x.data(), w.data(), bias.data(),
                     whole.data()),
              "");
    for (int64_t r = 0; r < rows; ++r)
      ASSERT_EQ(linear(1, in, out, x.data() + r * in, w.data(), bias.data(),
                       piece.data() + r * out),
                "");
    EXPECT_EQ(whole, piece);
  }
  const int64_t b = 3, n = 2048, k = 256, d = 32; // 2^24 MACs a sequence
  auto x = uniformVector(size_t(b * n * d), 34, -1, 1);
  auto e = uniformVector(size_t(k * n), 35, -1, 1);
  const int32_t lengths[] = {2048, 1000, 7};
  std::vector<float> whole(size_t(b * k * d)), piece(whole.size());
  ASSERT_EQ(sequenceProjection(ProjectionKind::Learned, b, 1, n, d, k,
                               x.data(), e.data(), true, lengths, nullptr,
                               whole.data()),
            "");
  for (int64_t i = 0; i < b; ++i)
    ASSERT_EQ(sequenceProjection(ProjectionKind::Learned, 1, 1, n, d, k,
                                 x.data() + i * n * d, e.data(), true,
                                 lengths + i, nullptr,
                                 piece.data() + i * k * d),
              "");
  EXPECT_EQ(whole, piece);

  auto kp = uniformVector(size_t(b * k * d), 36, -1, 1);
  auto vp = uniformVector(size_t(b * k * d), 37, -1, 1);
  std::vector<float> core(size_t(b * n * d)), corePiece(core.size());
  ASSERT_EQ(attentionCore(b, 1, n, k, d, d, x.data(), kp.data(), vp.data(),
                          nullptr, core.data()),
            "");
  for (int64_t i = 0; i < b; ++i)
    ASSERT_EQ(attentionCore(1, 1, n, k, d, d, x.data() + i * n * d,
                            kp.data() + i * k * d, vp.data() + i * k * d,
                            nullptr, corePiece.data() + i * n * d),
              "");
  EXPECT_EQ(core, corePiece);
}

TEST(ReferenceCore, LargeLogitsStayFinite) {
  // Logits of order 1e4 (exp overflows double beyond ~710): with max
  // subtraction the softmax is one-hot on the largest logit, so the output
  // is that slot's value row.
  const int64_t n = 2, k = 3, d = 4, dv = 2;
  std::vector<float> q = {100, 100, 100, 100, -100, -100, -100, -100};
  std::vector<float> kp;
  for (int64_t j = 0; j < k; ++j)
    for (int64_t c = 0; c < d; ++c)
      kp.push_back(50.0f * float(j + 1)); // logits +-1e4, 2e4, 3e4
  std::vector<float> vp = {1, -1, 2, -2, 3, -3};
  std::vector<float> out(size_t(n * dv));
  EXPECT_EQ(attentionCore(1, 1, n, k, d, dv, q.data(), kp.data(), vp.data(),
                          nullptr, out.data()),
            "");
  for (float v : out)
    EXPECT_TRUE(std::isfinite(v));
  // Row 0 (positive q) picks slot 2; row 1 (negative q) picks slot 0.
  expectAllFloatEq(out, {3, -3, 1, -1});

  // Masking the winning slot hands the row to the runner-up.
  const uint8_t keyMask[] = {1, 1, 0};
  EXPECT_EQ(attentionCore(1, 1, n, k, d, dv, q.data(), kp.data(), vp.data(),
                          keyMask, out.data()),
            "");
  expectAllFloatEq(out, {2, -2, 1, -1});
}

//===----------------------------------------------------------------------===//
// Whole layer: identities
//===----------------------------------------------------------------------===//

TEST(ReferenceLayer, MeanPoolWithNEqualsKIsFullAttention) {
  // w = n / k = 1: each slot is one token, so the layer is standard
  // multi-head attention; with padding, padded tokens' slots are invalid,
  // which is standard key-padding masking.
  RandomLayer L(makeConfig(ProjectionKind::MeanPool, 2, 5, 8, 2, 5), 400);
  expectAllNear(L.run(), naiveFullAttention(L, nullptr), kNaiveTol);
  const int32_t lengths[] = {3, 5};
  expectAllNear(L.run(lengths), naiveFullAttention(L, lengths), kNaiveTol);

  RandomLayer noBias(
      makeConfig(ProjectionKind::MeanPool, 1, 4, 6, 3, 4, /*hasBias=*/false),
      401);
  expectAllNear(noBias.run(), naiveFullAttention(noBias, nullptr), kNaiveTol);
}

TEST(ReferenceLayer, HeadSharedEqualsPerHeadCopies) {
  for (ProjectionKind kind : {ProjectionKind::Learned, ProjectionKind::Conv}) {
    SCOPED_TRACE(projectionKindName(kind));
    LayerConfig cfg = makeConfig(kind, 2, 6, 8, 2, 3);
    cfg.sharing.heads = true;
    RandomLayer shared(cfg, 500);
    RandomLayer perHead = shared;
    perHead.cfg.sharing.heads = false;
    perHead.e.clear();
    perHead.f.clear();
    for (int64_t hh = 0; hh < cfg.heads; ++hh) {
      perHead.e.insert(perHead.e.end(), shared.e.begin(), shared.e.end());
      perHead.f.insert(perHead.f.end(), shared.f.begin(), shared.f.end());
    }
    ASSERT_EQ(int64_t(perHead.e.size()),
              projectionWeightElements(perHead.cfg));
    const int32_t lengths[] = {4, 6};
    EXPECT_EQ(shared.run(lengths), perHead.run(lengths)); // same arithmetic

    // And the copies matter: a different second head changes the result.
    for (size_t i = perHead.e.size() / 2; i < perHead.e.size(); ++i)
      perHead.e[i] += 0.25f;
    EXPECT_NE(shared.run(lengths), perHead.run(lengths));
  }
}

TEST(ReferenceLayer, KvSharedEqualsPassingFEqualsE) {
  for (ProjectionKind kind : {ProjectionKind::Learned, ProjectionKind::Conv})
    for (bool headsShared : {false, true}) {
      SCOPED_TRACE(std::string(projectionKindName(kind)) +
                   (headsShared ? " heads-shared" : " per-head"));
      LayerConfig cfg = makeConfig(kind, 2, 6, 8, 2, 3);
      cfg.sharing.heads = headsShared;
      cfg.sharing.kv = true;
      RandomLayer kv(cfg, 600);
      RandomLayer separate = kv;
      separate.cfg.sharing.kv = false;
      separate.f = separate.e;
      EXPECT_EQ(kv.weights().f, nullptr);
      EXPECT_EQ(kv.run(), separate.run()); // same arithmetic
      // A distinct F gives a different layer, so F is really used.
      separate.f = RandomLayer(cfg, 601).e;
      EXPECT_NE(kv.run(), separate.run());
    }
}

TEST(ReferenceLayer, ComposedFromParts) {
  // The layer is exactly linear -> split -> project -> core -> merge ->
  // linear; the compiler's part-level tests rely on that decomposition.
  LayerConfig cfg = makeConfig(ProjectionKind::Learned, 2, 6, 8, 2, 3);
  RandomLayer L(cfg, 700);
  const int32_t lengths[] = {5, 2};
  const int64_t b = 2, n = 6, dm = 8, h = 2, d = 4, k = 3;
  std::vector<float> tmp(size_t(b * n * dm)), qh(tmp.size()), kh(tmp.size()),
      vh(tmp.size());
  ASSERT_EQ(linear(b * n, dm, dm, L.x.data(), L.wq.data(), L.bq.data(),
                   tmp.data()),
            "");
  ASSERT_EQ(splitHeads(b, n, h, d, tmp.data(), qh.data()), "");
  ASSERT_EQ(linear(b * n, dm, dm, L.x.data(), L.wk.data(), L.bk.data(),
                   tmp.data()),
            "");
  ASSERT_EQ(splitHeads(b, n, h, d, tmp.data(), kh.data()), "");
  ASSERT_EQ(linear(b * n, dm, dm, L.x.data(), L.wv.data(), L.bv.data(),
                   tmp.data()),
            "");
  ASSERT_EQ(splitHeads(b, n, h, d, tmp.data(), vh.data()), "");
  std::vector<uint8_t> valid;
  auto kp = project(cfg.kind, b, h, n, d, k, kh, L.e.data(), false, lengths,
                    nullptr, &valid);
  auto vp = project(cfg.kind, b, h, n, d, k, vh, L.f.data(), false, lengths,
                    nullptr);
  std::vector<float> attn(tmp.size()), out(tmp.size());
  ASSERT_EQ(attentionCore(b, h, n, k, d, d, qh.data(), kp.data(), vp.data(),
                          valid.data(), attn.data()),
            "");
  ASSERT_EQ(mergeHeads(b, n, h, d, attn.data(), tmp.data()), "");
  ASSERT_EQ(linear(b * n, dm, dm, tmp.data(), L.wo.data(), L.bo.data(),
                   out.data()),
            "");
  EXPECT_EQ(L.run(lengths), out);
}

TEST(ReferenceLayer, SplitAndMergeHeadsUseChannelBlocks) {
  // [b=1, n=2, dm=4] with h=2: head hh owns channels [2*hh, 2*hh + 2).
  std::vector<float> merged = {0, 1, 2, 3, 10, 11, 12, 13};
  std::vector<float> split(8), back(8);
  ASSERT_EQ(splitHeads(1, 2, 2, 2, merged.data(), split.data()), "");
  EXPECT_EQ(split, (std::vector<float>{0, 1, 10, 11, 2, 3, 12, 13}));
  ASSERT_EQ(mergeHeads(1, 2, 2, 2, split.data(), back.data()), "");
  EXPECT_EQ(back, merged);
}

//===----------------------------------------------------------------------===//
// Validation
//===----------------------------------------------------------------------===//

TEST(ReferenceValidate, AcceptsGoodConfigs) {
  for (ProjectionKind kind : kAllKinds)
    EXPECT_EQ(validate(makeConfig(kind, 2, 8, 8, 2, 4)), "");
  // Learned does not need n % k == 0.
  EXPECT_EQ(validate(makeConfig(ProjectionKind::Learned, 1, 6, 8, 2, 4)), "");
  EXPECT_EQ(validate(makeConfig(ProjectionKind::Learned, 1, 4, 8, 2, 4)), "");
}

TEST(ReferenceValidate, RejectsBadConfigs) {
  std::string err =
      validate(makeConfig(ProjectionKind::Learned, 1, 8, 30, 4, 4));
  EXPECT_TRUE(contains(err, "d_model 30 is not divisible by heads 4")) << err;

  err = validate(makeConfig(ProjectionKind::Learned, 1, 4, 8, 2, 8));
  EXPECT_TRUE(contains(err, "k 8 is greater than sequence length n 4")) << err;

  for (ProjectionKind kind : kWindowedKinds) {
    err = validate(makeConfig(kind, 1, 6, 8, 2, 4));
    EXPECT_TRUE(contains(err, "n 6 is not divisible by k 4")) << err;
    EXPECT_TRUE(contains(err, projectionKindName(kind))) << err;
  }

  err = validate(makeConfig(ProjectionKind::Learned, 0, 4, 8, 2, 2));
  EXPECT_TRUE(contains(err, "batch must be positive")) << err;
  err = validate(makeConfig(ProjectionKind::Learned, 1, 4, 8, 0, 2));
  EXPECT_TRUE(contains(err, "heads must be positive")) << err;
  err = validate(makeConfig(ProjectionKind::Learned, 1, 4, 8, 2, -1));
  EXPECT_TRUE(contains(err, "projected length k must be positive")) << err;
  err = validate(
      makeConfig(ProjectionKind::Learned, int64_t(1) << 40, 1 << 20, 1 << 20,
                 1, 1));
  EXPECT_TRUE(contains(err, "too large")) << err;
}

TEST(ReferenceValidate, RejectsBadPadding) {
  const int32_t zero[] = {4, 0};
  std::string err = validatePadding(2, 4, zero, nullptr);
  EXPECT_TRUE(contains(err, "length 0 of sequence 1 is outside [1, 4]"))
      << err;
  const int32_t tooLong[] = {5};
  err = validatePadding(1, 4, tooLong, nullptr);
  EXPECT_TRUE(contains(err, "length 5 of sequence 0 is outside")) << err;
  const uint8_t emptyRow[] = {1, 0, 0, 0, 0, 0};
  err = validatePadding(2, 3, nullptr, emptyRow);
  EXPECT_TRUE(contains(err, "mask row 1 has no real token")) << err;
  const int32_t ok[] = {2, 3};
  const uint8_t okMask[] = {1, 0, 0, 0, 0, 1};
  EXPECT_EQ(validatePadding(2, 3, ok, nullptr), "");
  EXPECT_EQ(validatePadding(2, 3, nullptr, okMask), "");
  err = validatePadding(2, 3, ok, okMask);
  EXPECT_TRUE(contains(err, "at most one of lengths and mask")) << err;
}

TEST(ReferenceValidate, EntryPointsReportInsteadOfCrashing) {
  LayerConfig cfg = makeConfig(ProjectionKind::Learned, 1, 4, 4, 2, 2);
  RandomLayer L(cfg, 800);
  std::vector<float> out(L.x.size());

  LayerWeights w = L.weights();
  w.wk = nullptr;
  std::string err =
      attentionLayer(cfg, w, L.x.data(), nullptr, nullptr, out.data());
  EXPECT_TRUE(contains(err, "wk is null")) << err;

  w = L.weights();
  w.bo = nullptr;
  err = attentionLayer(cfg, w, L.x.data(), nullptr, nullptr, out.data());
  EXPECT_TRUE(contains(err, "bo is null")) << err;

  w = L.weights();
  w.e = nullptr;
  err = attentionLayer(cfg, w, L.x.data(), nullptr, nullptr, out.data());
  EXPECT_TRUE(contains(err, "projection E is null")) << err;

  w = L.weights();
  w.f = nullptr;
  err = attentionLayer(cfg, w, L.x.data(), nullptr, nullptr, out.data());
  EXPECT_TRUE(contains(err, "projection F is null")) << err;
  LayerConfig kvCfg = cfg;
  kvCfg.sharing.kv = true; // then F is not needed
  EXPECT_EQ(attentionLayer(kvCfg, w, L.x.data(), nullptr, nullptr, out.data()),
            "");

  // Pooling needs no projection parameters at all.
  LayerConfig pool = cfg;
  pool.kind = ProjectionKind::MaxPool;
  w.e = nullptr;
  EXPECT_EQ(attentionLayer(pool, w, L.x.data(), nullptr, nullptr, out.data()),
            "");

  const int32_t badLengths[] = {0};
  err = attentionLayer(cfg, L.weights(), L.x.data(), badLengths, nullptr,
                       out.data());
  EXPECT_TRUE(contains(err, "length 0")) << err;

  LayerConfig bad = cfg;
  bad.dModel = 5;
  err = attentionLayer(bad, L.weights(), L.x.data(), nullptr, nullptr,
                       out.data());
  EXPECT_TRUE(contains(err, "not divisible by heads")) << err;

  // The parts validate too.
  std::vector<float> kp(16);
  err = sequenceProjection(ProjectionKind::MeanPool, 1, 1, 6, 2, 4,
                           L.x.data(), nullptr, false, nullptr, nullptr,
                           kp.data());
  EXPECT_TRUE(contains(err, "not divisible by k")) << err;
  err = sequenceProjection(ProjectionKind::Conv, 1, 1, 4, 2, 2, L.x.data(),
                           nullptr, false, nullptr, nullptr, kp.data());
  EXPECT_TRUE(contains(err, "weights are null")) << err;
  err = sequenceProjection(ProjectionKind::Learned, 1, 1, 4, 0, 2, L.x.data(),
                           L.e.data(), false, nullptr, nullptr, kp.data());
  EXPECT_TRUE(contains(err, "head dim d must be positive")) << err;

  const uint8_t noKeys[] = {0, 0};
  err = attentionCore(1, 1, 2, 2, 2, 2, L.x.data(), L.x.data(), L.x.data(),
                      noKeys, out.data());
  EXPECT_TRUE(contains(err, "no valid slot")) << err;
  err = attentionCore(1, 1, 2, 2, 2, 2, L.x.data(), L.x.data(), L.x.data(),
                      INFINITY, nullptr, out.data());
  EXPECT_TRUE(contains(err, "not finite")) << err;
}

TEST(ReferenceValidate, ProjectionWeightShapes) {
  using S = std::vector<int64_t>;
  // h = 2, n = 8, d = 4, k = 2 (w = 4).
  EXPECT_EQ(projectionWeightShape(ProjectionKind::Learned, 2, 8, 4, 2, false),
            (S{2, 2, 8}));
  EXPECT_EQ(projectionWeightShape(ProjectionKind::Learned, 2, 8, 4, 2, true),
            (S{2, 8}));
  EXPECT_EQ(projectionWeightShape(ProjectionKind::Conv, 2, 8, 4, 2, false),
            (S{2, 4, 4}));
  EXPECT_EQ(projectionWeightShape(ProjectionKind::Conv, 2, 8, 4, 2, true),
            (S{4, 4}));
  EXPECT_EQ(projectionWeightShape(ProjectionKind::MeanPool, 2, 8, 4, 2, false),
            S{});
  EXPECT_EQ(projectionWeightElements(ProjectionKind::Learned, 2, 8, 4, 2,
                                     false),
            32);
  EXPECT_EQ(projectionWeightElements(ProjectionKind::MaxPool, 2, 8, 4, 2,
                                     false),
            0);
  EXPECT_FLOAT_EQ(defaultScale(16), 0.25f);
}

TEST(ReferenceValidate, KindNamesRoundTrip) {
  for (ProjectionKind kind : kAllKinds) {
    ProjectionKind parsed = ProjectionKind::Learned;
    EXPECT_TRUE(parseProjectionKind(projectionKindName(kind), parsed));
    EXPECT_EQ(parsed, kind);
  }
  EXPECT_STREQ(projectionKindName(ProjectionKind::MeanPool), "mean_pool");
  ProjectionKind unused;
  EXPECT_FALSE(parseProjectionKind("avg_pool", unused));
}

//===----------------------------------------------------------------------===//
// Random
//===----------------------------------------------------------------------===//

TEST(Random, DeterministicAndInRange) {
  // First splitmix64 output for seed 0 (reference value of the algorithm).
  SplitMix64 rng(0);
  EXPECT_EQ(rng.next(), 0xe220a8397b1dcdafULL);

  auto a = uniformVector(1000, 42, -2.0f, 3.0f);
  auto b = uniformVector(1000, 42, -2.0f, 3.0f);
  auto c = uniformVector(1000, 43, -2.0f, 3.0f);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  float lo = 10, hi = -10;
  for (float v : a) {
    EXPECT_GE(v, -2.0f);
    EXPECT_LT(v, 3.0f);
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  EXPECT_LT(lo, -1.9f); // spread over the whole range
  EXPECT_GT(hi, 2.9f);

  std::vector<float> filled(1000);
  fillUniform(filled, 42, -2.0f, 3.0f);
  EXPECT_EQ(filled, a);

  auto lengths = randomLengths(100, 7, 5);
  for (int32_t l : lengths) {
    EXPECT_GE(l, 1);
    EXPECT_LE(l, 7);
  }
  auto mask = randomMask(50, 3, 6, 0.1f);
  EXPECT_EQ(validatePadding(50, 3, nullptr, mask.data()), "");
}

} // namespace
