// The attention softmax (cpu::softmax_row, backend/cpu/softmax_row.cpp):
// kvscope's own exponential, so it is checked against the exact softmax in
// double, for the same bits on every instruction set the CPU has, and for
// the rules attention relies on (-inf is exactly 0, rows sum to 1).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "backend/cpu/cpu_ops.h"

namespace kvscope::cpu {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// Rows as attention makes them: scaled dot products of a few units, some
// far below the maximum, masked (-inf) runs at the end (causal) and
// scattered (sliding window), lengths around the 8-wide step.
std::vector<std::vector<float>> rows() {
  std::mt19937 g(11);
  std::vector<std::vector<float>> out;
  for (int n : {1, 2, 7, 8, 9, 15, 16, 17, 63, 64, 65, 576, 2049}) {
    for (float spread : {0.5f, 4.0f, 40.0f}) {
      std::normal_distribution<float> d(0.0f, spread);
      std::vector<float> r(n);
      for (auto& x : r) x = d(g);
      if (n > 4) {
        r[n - 1] = kNegInf;
        r[n / 3] = kNegInf;
      }
      out.push_back(r);
    }
  }
  return out;
}

TEST(SoftmaxRow, WithinAFewUlpOfTheExactSoftmax) {
  for (auto r : rows()) {
    // The reference takes the same float difference x - max as the row
    // does (as the softmax before this one did): what is checked is the
    // exponential and the normalisation, not that subtraction's rounding.
    float mx = kNegInf;
    for (float x : r) mx = std::max(mx, x);
    auto exp_of = [&](float x) { return x == kNegInf ? 0.0 : std::exp(double(x - mx)); };
    double sum = 0;
    for (float x : r) sum += exp_of(x);
    const auto in = r;
    softmax_row(r.data(), static_cast<int>(r.size()));
    double total = 0;
    for (std::size_t j = 0; j < r.size(); ++j) {
      const double exact = exp_of(in[j]) / sum;
      total += r[j];
      if (in[j] == kNegInf) {
        EXPECT_EQ(r[j], 0.0f);
      } else if (exact >= 1.2e-38) {  // normal floats: relative error of a few ulp
        EXPECT_NEAR(r[j], exact, 4e-7 * exact) << "n " << r.size() << " j " << j << " x " << in[j];
      } else {  // below the normal range the softmax may flush to 0
        EXPECT_LE(r[j], 1.2e-38f);
      }
    }
    EXPECT_NEAR(total, 1.0, 1e-6) << r.size();
  }
}

TEST(SoftmaxRow, EverySimdPathGivesTheSameBits) {
  const auto paths = supported_simd_paths();
  for (const auto& r : rows()) {
    std::vector<float> base = r;
    softmax_row(SimdPath::baseline, base.data(), static_cast<int>(base.size()));
    for (SimdPath p : paths) {
      std::vector<float> got = r;
      softmax_row(p, got.data(), static_cast<int>(got.size()));
      EXPECT_EQ(std::memcmp(got.data(), base.data(), base.size() * sizeof(float)), 0)
          << simd_path_name(p) << " n " << r.size();
    }
  }
}

TEST(SoftmaxRow, ExponentialAcrossItsRange) {
  // Two entries, 0 and t: the second is exp(t) / (1 + exp(t)); over the
  // whole range where it is a normal float, including exact powers of two
  // of e's exponent boundaries.
  for (double t = -87.0; t <= 0.0; t += 0.01171875) {
    float r[2] = {0.0f, static_cast<float>(t)};
    softmax_row(r, 2);
    const double e = std::exp(double(static_cast<float>(t)));
    EXPECT_NEAR(r[1], e / (1 + e), 4e-7 * e / (1 + e)) << t;
  }
  float big[3] = {0.0f, -88.0f, -200.0f};  // below e^-87.3: 0, not a subnormal
  softmax_row(big, 3);
  EXPECT_EQ(big[0], 1.0f);
  EXPECT_EQ(big[1], 0.0f);
  EXPECT_EQ(big[2], 0.0f);
}

}  // namespace
}  // namespace kvscope::cpu
