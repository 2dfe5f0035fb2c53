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

}  // namespace kvscope::testing_rows
