#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "io/dtype.h"

namespace kvscope {
namespace {

TEST(DType, HalfRoundTripsEveryFiniteValue) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    if ((h & 0x7c00) == 0x7c00) continue;  // inf / nan
    const float f = f16_to_f32(static_cast<uint16_t>(h));
    ASSERT_EQ(f32_to_f16(f), h) << "half 0x" << std::hex << h;
  }
}

TEST(DType, HalfKnownValues) {
  EXPECT_EQ(f16_to_f32(0x3c00), 1.0f);
  EXPECT_EQ(f16_to_f32(0xc000), -2.0f);
  EXPECT_EQ(f16_to_f32(0x0001), std::ldexp(1.0f, -24));  // smallest subnormal
  EXPECT_EQ(f16_to_f32(0x7bff), 65504.0f);
  EXPECT_TRUE(std::isinf(f16_to_f32(0x7c00)));
  EXPECT_EQ(f32_to_f16(65520.0f), 0x7c00);  // rounds to infinity
  EXPECT_EQ(f32_to_f16(1.0f + std::ldexp(1.0f, -11)), 0x3c00);  // tie rounds to even
  EXPECT_EQ(f32_to_f16(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);
}

TEST(DType, Bfloat16RoundsToNearestEven) {
  EXPECT_EQ(bf16_to_f32(0x3f80), 1.0f);
  uint32_t u = 0x3f808000;  // exactly halfway between 0x3f80 and 0x3f81
  float f;
  std::memcpy(&f, &u, 4);
  EXPECT_EQ(f32_to_bf16(f), 0x3f80);
  u = 0x3f818000;
  std::memcpy(&f, &u, 4);
  EXPECT_EQ(f32_to_bf16(f), 0x3f82);
}

// first_beyond_half agrees with the conversion itself: a finite value is
// refused exactly when f32_to_f16 turns it into an infinity, for every
// float32 between 60000 and 70000 in magnitude (both signs) and for the
// bfloat16 values there; NaN and infinities are left to the caller.
TEST(DType, FirstBeyondHalfIsWhereTheConversionOverflows) {
  uint32_t lo, hi;
  const float a = 60000.0f, b = 70000.0f;
  std::memcpy(&lo, &a, 4);
  std::memcpy(&hi, &b, 4);
  for (uint32_t u = lo; u <= hi; ++u)
    for (uint32_t sign : {0u, 0x80000000u}) {
      const uint32_t bits = u | sign;
      float f;
      std::memcpy(&f, &bits, 4);
      const bool overflows = (f32_to_f16(f) & 0x7fffu) == 0x7c00u;
      ASSERT_EQ(first_beyond_half(DType::F32, &f, 1), overflows ? 0 : -1) << f;
      const uint16_t bf = static_cast<uint16_t>(bits >> 16);
      const bool bf_overflows = (f32_to_f16(bf16_to_f32(bf)) & 0x7fffu) == 0x7c00u;
      ASSERT_EQ(first_beyond_half(DType::BF16, &bf, 1), bf_overflows ? 0 : -1) << bf16_to_f32(bf);
    }
  const float row[] = {1.0f, -3.0f, NAN, INFINITY, 65504.0f, -65519.0f, 7.0f, -1e6f, 1e9f};
  EXPECT_EQ(first_beyond_half(DType::F32, row, 9), 7);
  EXPECT_EQ(first_beyond_half(DType::F32, row, 7), -1);
  const uint16_t half[] = {0x7bff, 0x7c00};
  EXPECT_EQ(first_beyond_half(DType::F16, half, 2), -1);  // already half: nothing to refuse
}

}  // namespace
}  // namespace kvscope
