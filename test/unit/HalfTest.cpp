//===- HalfTest.cpp - f16/bf16 conversions against the hardware's ---------===//
//
// Every f16 and bf16 value round-trips exactly; rounding of f32 is to
// nearest even, checked against the compiler's _Float16 conversion (F16C /
// SSE2 code on x86) on a million pseudo-random bit patterns, and on the
// cases that decide it: ties, subnormals, overflow, NaN.
//
//===----------------------------------------------------------------------===//

#include "lib/Support/Half.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

using namespace linformer;

TEST(Half, EveryValueRoundTrips) {
  for (uint32_t h = 0; h < 65536; ++h) {
    float f = f16ToFloat(uint16_t(h));
    if (!std::isnan(f)) {
      ASSERT_EQ(floatToF16(f), h) << "f16 " << std::hex << h;
    }
    float g = bf16ToFloat(uint16_t(h));
    if (!std::isnan(g)) {
      ASSERT_EQ(floatToBF16(g), h) << "bf16 " << std::hex << h;
    }
  }
}

TEST(Half, RoundsToNearestEven) {
  // 1 + 2^-11 is a tie between 1 and 1 + 2^-10 in f16: even (1) wins;
  // 1 + 3 * 2^-11 ties up to 1 + 2^-9.
  EXPECT_EQ(floatToF16(1.0f + std::ldexp(1.0f, -11)), 0x3c00);
  EXPECT_EQ(floatToF16(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);
  EXPECT_EQ(floatToBF16(1.0f + std::ldexp(1.0f, -8)), 0x3f80);
  EXPECT_EQ(floatToBF16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3f82);
  EXPECT_EQ(floatToF16(65504.0f), 0x7bff);  // the largest f16
  EXPECT_EQ(floatToF16(65520.0f), 0x7c00);  // rounds to infinity
  EXPECT_EQ(floatToF16(std::ldexp(1.0f, -24)), 0x0001); // smallest subnormal
  EXPECT_EQ(floatToF16(std::ldexp(1.0f, -26)), 0x0000); // below half of it
  EXPECT_EQ(floatToF16(-0.0f), 0x8000);
  EXPECT_TRUE(std::isnan(f16ToFloat(floatToF16(NAN))));
  EXPECT_TRUE(std::isnan(bf16ToFloat(floatToBF16(NAN))));
}

#if defined(__FLT16_MAX__)
TEST(Half, AgreesWithTheCompilersF16) {
  uint32_t s = 1;
  for (int i = 0; i < 1000000; ++i) {
    s = s * 1664525u + 1013904223u;
    float f = bitsFloat(s);
    if (std::isnan(f))
      continue;
    _Float16 h = static_cast<_Float16>(f);
    uint16_t bits;
    std::memcpy(&bits, &h, 2);
    ASSERT_EQ(floatToF16(f), bits) << f;
  }
}
#endif
