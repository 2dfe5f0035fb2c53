// Helpers of the CPU kernel tests: reproducible random rows and a bitwise
// comparison.
#pragma once

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

namespace kvscope::testing_rows {

// n draws of N(0, 1), the same for the same seed.
inline std::vector<float> randoms(std::size_t n, uint32_t seed) {
  std::mt19937 g(seed);
  std::normal_distribution<float> d(0.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = d(g);
  return v;
}

inline bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

// The same bits, except that a NaN matches any NaN: where a NaN meets a
// NaN, or a fused form computes one, IEEE 754 and the compilers leave the
// sign and payload of the NaN that comes out to the instruction (clang
// builds the AVX2 copy's fused Q4_K step so that a NaN scale comes out with
// its sign flipped; GCC does not).
inline bool same_bits_or_both_nan(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    uint32_t x, y;
    std::memcpy(&x, &a[i], 4);
    std::memcpy(&y, &b[i], 4);
    if (x != y && !(a[i] != a[i] && b[i] != b[i])) return false;
  }
  return true;
}

}  // namespace kvscope::testing_rows
