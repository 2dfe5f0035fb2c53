// kvscope's decode matrix-vector product (backend/cpu/matvec.h): the same
// bits on every instruction set the CPU has, a row alone or next to
// another, and in any band of features; and the value of the dot product
// to float rounding.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "backend/cpu/matvec.h"
#include "io/dtype.h"
#include "float_rows.h"

namespace kvscope::cpu {
namespace {

using testing_rows::randoms;
using testing_rows::same_bits;

// Widths around the 32-lane block (tails of every length class) and model
// sizes (576: SmolLM2, 1536: its MLP).
const int kWidths[] = {1, 7, 31, 32, 33, 63, 64, 100, 576, 1000, 1536};

TEST(Matvec, EveryInstructionSetGivesTheSameBits) {
  const int out = 37;
  for (int in : kWidths) {
    SCOPED_TRACE("in " + std::to_string(in));
    const auto w = randoms(size_t(out) * in, 1 + in), x = randoms(2 * size_t(in), 100 + in);
    std::vector<float> want;
    for (SimdPath p : supported_simd_paths()) {
      std::vector<float> y(2 * size_t(out));
      matvec_rows(p, x.data(), 2, in, w.data(), 0, out, y.data(), out);
      if (want.empty()) want = y;
      EXPECT_TRUE(same_bits(y, want)) << simd_path_name(p);
    }
  }
}

// Each lane's step is one fused multiply-add (matvec_target.h's mul_add):
// with a = 1 + 2^-12, a * a = 1 + 2^-11 + 2^-24 exactly, which rounded alone
// is a tie that goes to 1 + 2^-11. Lane 0 of a 17-wide row holds elements 0
// (1 x (-1 - 2^-11)) and 16 (a x a): fused, the sum keeps the 2^-24; a
// product rounded before its addition would give 0. On every path, for
// one input row and two.
TEST(Matvec, EveryPathFusesEachProductIntoItsSum) {
  const int in = 17, out = 3;
  const float a = 1.0f + std::ldexp(1.0f, -12);
  std::vector<float> w(size_t(out) * in, 0.0f), x(2 * size_t(in), 0.0f);
  for (int r = 0; r < out; ++r) {
    w[size_t(r) * in] = 1.0f;
    w[size_t(r) * in + 16] = a;
  }
  for (int i = 0; i < 2; ++i) {
    x[size_t(i) * in] = -1.0f - std::ldexp(1.0f, -11);
    x[size_t(i) * in + 16] = a;
  }
  for (SimdPath p : supported_simd_paths()) {
    for (int m : {1, 2}) {
      std::vector<float> y(size_t(m) * out, -1.0f);
      matvec_rows(p, x.data(), m, in, w.data(), 0, out, y.data(), out);
      for (float v : y) EXPECT_EQ(v, std::ldexp(1.0f, -24)) << simd_path_name(p) << ", " << m << " rows";
    }
  }
}

TEST(Matvec, ARowGivesTheSameBitsAloneOrPairedAndInAnyBand) {
  const int out = 150;
  for (int in : kWidths) {
    SCOPED_TRACE("in " + std::to_string(in));
    const auto w = randoms(size_t(out) * in, 7 + in), x = randoms(2 * size_t(in), 70 + in);
    std::vector<float> paired(2 * size_t(out)), alone0(out), alone1(out), banded(out);
    matvec_rows(x.data(), 2, in, w.data(), 0, out, paired.data(), out);
    matvec_rows(x.data(), 1, in, w.data(), 0, out, alone0.data(), out);
    matvec_rows(x.data() + in, 1, in, w.data(), 0, out, alone1.data(), out);
    for (int r0 = 0; r0 < out; r0 += 64)  // bands as linear() cuts them
      matvec_rows(x.data(), 1, in, w.data(), r0, std::min(out, r0 + 64), banded.data(), out);
    EXPECT_TRUE(same_bits(std::vector<float>(paired.begin(), paired.begin() + out), alone0));
    EXPECT_TRUE(same_bits(std::vector<float>(paired.begin() + out, paired.end()), alone1));
    EXPECT_TRUE(same_bits(banded, alone0));
  }
}

TEST(Matvec, EqualsTheDotProductToFloatRounding) {
  const int out = 64;
  for (int in : kWidths) {
    SCOPED_TRACE("in " + std::to_string(in));
    const auto w = randoms(size_t(out) * in, 11 + in), x = randoms(size_t(in), 110 + in);
    std::vector<float> y(out);
    matvec_rows(x.data(), 1, in, w.data(), 0, out, y.data(), out);
    for (int r = 0; r < out; ++r) {
      double exact = 0, magnitude = 0;
      for (int k = 0; k < in; ++k) {
        exact += double(w[size_t(r) * in + k]) * x[k];
        magnitude += std::abs(double(w[size_t(r) * in + k]) * x[k]);
      }
      // Pairwise-ish summation: error well under n * eps of the magnitudes.
      EXPECT_NEAR(y[r], exact, 1e-6 * magnitude + 1e-30) << "row " << r;
    }
  }
}

// --weights f16: half weights widened exactly and summed as fp32 ones, so
// every path gives the bits of the fp32 product on the rounded weights,
// subnormal, signed-zero and the largest halves included.
TEST(Matvec, HalfWeightsGiveTheBitsOfTheRoundedWeightsOnEveryPath) {
  const int out = 37;
  for (int in : kWidths) {
    SCOPED_TRACE("in " + std::to_string(in));
    auto w = randoms(size_t(out) * in, 3 + in);
    const auto x = randoms(2 * size_t(in), 300 + in);
    const float specials[] = {6.0e-8f, -6.0e-8f, 3.0e-5f, -0.0f, 65504.0f, -65504.0f, 1e-3f};
    for (std::size_t i = 0; i < std::size(specials) && i < w.size(); ++i) w[i * 5 % w.size()] = specials[i];
    std::vector<uint16_t> h(w.size());
    std::vector<float> rounded(w.size());
    for (std::size_t i = 0; i < w.size(); ++i) {
      h[i] = f32_to_f16(w[i]);
      rounded[i] = f16_to_f32(h[i]);
    }
    std::vector<float> want(2 * size_t(out));
    matvec_rows(x.data(), 2, in, rounded.data(), 0, out, want.data(), out);
    for (SimdPath p : supported_simd_paths()) {
      for (int m : {1, 2}) {
        std::vector<float> y(size_t(m) * out);
        matvec_rows_f16(p, x.data(), m, in, h.data(), 0, out, y.data(), out);
        EXPECT_TRUE(same_bits(y, std::vector<float>(want.begin(), want.begin() + size_t(m) * out)))
            << simd_path_name(p) << ", " << m << " rows";
      }
    }
  }
}

TEST(Matvec, WideningHalvesIsExactForEveryHalf) {
  std::vector<uint16_t> h(65536 + 5);  // every bit pattern, then a tail shorter than a vector
  for (std::size_t i = 0; i < h.size(); ++i) h[i] = static_cast<uint16_t>(i);
  std::vector<float> f(h.size());
  widen_halves(h.data(), int64_t(h.size()), f.data());
  for (std::size_t i = 0; i < h.size(); ++i) {
    const float want = f16_to_f32(h[i]);
    ASSERT_TRUE(std::memcmp(&f[i], &want, 4) == 0 || (std::isnan(want) && std::isnan(f[i]))) << "half " << h[i];
  }
}

}  // namespace
}  // namespace kvscope::cpu
