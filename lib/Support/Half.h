//===- Half.h - f16 and bf16 to and from f32, in software --------*- C++ -*-===//
//
// The storage conversions the tools and the reference need for f16 and bf16
// models (weights, inputs, outputs): round to nearest even, NaN kept NaN,
// overflow to infinity, f16 subnormals exact. Header-only, no dependencies
// (the runtime, the compiler and the tests share it).
//
//===----------------------------------------------------------------------===//

#ifndef LINFORMER_LIB_SUPPORT_HALF_H
#define LINFORMER_LIB_SUPPORT_HALF_H

#include <cstdint>
#include <cstring>

namespace linformer {

inline uint32_t floatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float bitsFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

/// f32 -> bf16 bits, round to nearest even.
inline uint16_t floatToBF16(float f) {
  uint32_t u = floatBits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) // NaN: keep it quiet and NaN
    return uint16_t((u >> 16) | 0x40u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return uint16_t(u >> 16);
}
inline float bf16ToFloat(uint16_t h) { return bitsFloat(uint32_t(h) << 16); }

/// f32 -> IEEE binary16 bits, round to nearest even.
inline uint16_t floatToF16(float f) {
  uint32_t u = floatBits(f);
  uint32_t sign = (u >> 16) & 0x8000u;
  uint32_t abs = u & 0x7fffffffu;
  if (abs > 0x7f800000u) // NaN
    return uint16_t(sign | 0x7e00u);
  if (abs >= 0x477ff000u) // rounds to >= 65520: infinity
    return uint16_t(sign | 0x7c00u);
  if (abs < 0x38800000u) { // below 2^-14: subnormal (or zero)
    // Scale so that the f16 subnormal unit (2^-24) is 1, then round.
    float scaled = bitsFloat(abs) * 16777216.0f; // exact: power of two
    uint32_t m = uint32_t(scaled);
    float rest = scaled - float(m);
    if (rest > 0.5f || (rest == 0.5f && (m & 1u)))
      ++m;
    return uint16_t(sign | m);
  }
  uint32_t exp = ((abs >> 23) - 127 + 15) << 10;
  uint32_t mant = abs & 0x7fffffu;
  uint32_t h = exp | (mant >> 13);
  uint32_t rest = mant & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u)))
    ++h; // may carry into the exponent: still correct
  return uint16_t(sign | h);
}
inline float f16ToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
  if (exp == 0) // zero or subnormal: mant * 2^-24
    return (sign ? -1.0f : 1.0f) * float(mant) * (1.0f / 16777216.0f);
  if (exp == 31)
    return bitsFloat(sign | 0x7f800000u | (mant << 13));
  return bitsFloat(sign | ((exp - 15 + 127) << 23) | (mant << 13));
}

} // namespace linformer

#endif // LINFORMER_LIB_SUPPORT_HALF_H
