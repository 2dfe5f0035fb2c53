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

}  // namespace
}  // namespace kvscope
