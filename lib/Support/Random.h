//===- Random.h - Seeded deterministic random data for tests ----*- C++ -*-===//
//
// A tiny splitmix64 generator and helpers that fill tensors with uniform
// floats, padding lengths and masks. Tests, benchmarks and `linformer-run`
// use it instead of <random> because the standard distributions are not
// specified bit-for-bit: the same seed must give the same tensors on every
// compiler and machine, so a failing case can be replayed from its seed.
//
// Header-only, no dependencies beyond the standard library.
//
//===----------------------------------------------------------------------===//

#ifndef LINFORMER_LIB_SUPPORT_RANDOM_H
#define LINFORMER_LIB_SUPPORT_RANDOM_H

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace linformer {

/// splitmix64 (Steele, Lea, Flood 2014): one 64-bit state, passes BigCrush,
/// and any seed (0 included) is a good seed, which is all tests need.
class SplitMix64 {
public:
  explicit SplitMix64(uint64_t seed) : state(seed) {}

  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }

  /// Uniform in [0, 1) with 24 random bits: exactly representable as float,
  /// so the float result does not depend on the platform's rounding.
  float uniform01() {
    return static_cast<float>(next() >> 40) * (1.0f / 16777216.0f);
  }

  /// Uniform in [lo, hi). Computed in double and rounded once, so it is
  /// reproducible; a result that rounds up to hi is moved just below it.
  float uniform(float lo, float hi) {
    double v = double(lo) + (double(hi) - double(lo)) * double(uniform01());
    float f = static_cast<float>(v);
    return (f >= hi && hi > lo) ? std::nextafter(hi, lo) : f;
  }

  /// Uniform integer in [lo, hi] (inclusive). The modulo bias is at most
  /// range / 2^64, irrelevant for test data.
  int64_t uniformInt(int64_t lo, int64_t hi) {
    if (hi <= lo)
      return lo;
    uint64_t range = uint64_t(hi) - uint64_t(lo) + 1;
    return lo + int64_t(range == 0 ? next() : next() % range);
  }

private:
  uint64_t state;
};

/// Fills the existing elements of `values` with uniform floats in [lo, hi).
inline void fillUniform(std::vector<float> &values, uint64_t seed, float lo,
                        float hi) {
  SplitMix64 rng(seed);
  for (float &v : values)
    v = rng.uniform(lo, hi);
}

/// Same, for a raw buffer of `count` floats.
inline void fillUniform(float *values, size_t count, uint64_t seed, float lo,
                        float hi) {
  SplitMix64 rng(seed);
  for (size_t i = 0; i < count; ++i)
    values[i] = rng.uniform(lo, hi);
}

/// A new vector of `count` uniform floats in [lo, hi).
inline std::vector<float> uniformVector(size_t count, uint64_t seed, float lo,
                                        float hi) {
  std::vector<float> values(count);
  fillUniform(values, seed, lo, hi);
  return values;
}

/// `batch` sequence lengths, each uniform in [1, seqLen]: valid padding.
inline std::vector<int32_t> randomLengths(size_t batch, int32_t seqLen,
                                          uint64_t seed) {
  SplitMix64 rng(seed);
  std::vector<int32_t> lengths(batch);
  for (int32_t &l : lengths)
    l = static_cast<int32_t>(rng.uniformInt(1, seqLen < 1 ? 1 : seqLen));
  return lengths;
}

/// A [batch, seqLen] mask (1 = real) where each token is real with
/// probability `keep`; a row left empty gets one real token at a random
/// position, so the mask is always valid padding.
inline std::vector<uint8_t> randomMask(size_t batch, size_t seqLen,
                                       uint64_t seed, float keep = 0.5f) {
  SplitMix64 rng(seed);
  std::vector<uint8_t> mask(batch * seqLen, 0);
  if (seqLen == 0)
    return mask;
  for (size_t i = 0; i < batch; ++i) {
    bool any = false;
    for (size_t t = 0; t < seqLen; ++t) {
      mask[i * seqLen + t] = rng.uniform01() < keep ? 1 : 0;
      any = any || mask[i * seqLen + t];
    }
    if (!any)
      mask[i * seqLen + size_t(rng.uniformInt(0, int64_t(seqLen) - 1))] = 1;
  }
  return mask;
}

} // namespace linformer

#endif // LINFORMER_LIB_SUPPORT_RANDOM_H
