// Helpers shared by the CUDA test files: the skip when no GPU is visible,
// error measures, and random host data.
#pragma once

#ifdef KVSCOPE_HAVE_CUDA

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "backend/cuda/cuda_backend.h"
#include "backend/cuda/cuda_ops.h"
#include "test_util.h"

// Every CUDA test starts with this: with no usable GPU it skips, saying why.
#define KVSCOPE_REQUIRE_CUDA()                                              \
  do {                                                                      \
    std::string why_;                                                       \
    if (!::kvscope::cuda_device_available(&why_))                           \
      GTEST_SKIP() << "no CUDA device: " << why_;                           \
  } while (0)

namespace kvscope::test {

// Normalised mean squared error: sum (a - b)^2 / sum b^2 (b the reference).
inline double nmse(std::span<const float> a, std::span<const float> b) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < b.size(); ++i) {
    const double d = double(a[i]) - double(b[i]);
    num += d * d;
    den += double(b[i]) * double(b[i]);
  }
  return den > 0 ? num / den : num;
}

inline std::vector<float> random_floats(std::size_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = u(rng);
  return v;
}

// 16-bit device values of `v` (rounded as the device stores them) and the
// floats they stand for.
inline std::vector<uint16_t> to_device_bits(cuda::WType t, const std::vector<float>& v) {
  std::vector<uint16_t> b(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) b[i] = cuda::to_bits(t, v[i]);
  return b;
}
inline std::vector<float> rounded(cuda::WType t, std::vector<float> v) {
  for (auto& x : v) x = cuda::round_to(t, x);
  return v;
}

// Relative spacing of the 16-bit format: fp16 keeps 11 significant bits, bf16 8.
inline double ulp_rel(cuda::WType t) { return t == cuda::WType::F16 ? std::ldexp(1.0, -10) : std::ldexp(1.0, -7); }

}  // namespace kvscope::test

#endif  // KVSCOPE_HAVE_CUDA
