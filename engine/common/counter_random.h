// Counter-based random numbers (Philox4x32-10 from Random123), the same on
// the host and in CUDA kernels: a draw depends only on (seed, counter), so a
// replay, a CPU run and a GPU run all see identical numbers.
#pragma once

#include <cstdint>

#include <Random123/philox.h>

#ifdef __CUDACC__
#define KVSCOPE_HD __host__ __device__ __forceinline__
#else
#define KVSCOPE_HD inline
#endif

namespace kvscope {

// Stream tags keep the users of one seed apart (the counter's second word).
enum class RandomStream : uint32_t {
  Sampling = 0x53414d50u,   // token sampling: counter (step, tag, 0, 0)
  PolicyNoise = 0x4e4f4953u,  // Keyformer noise
  EvictRandom = 0x52414e44u,  // the random policy
  Weights = 0x57454947u,      // random weights of benchmark shapes
};

// Four 32-bit words for counter c = (c0, c1, c2, c3) under key `seed`.
KVSCOPE_HD r123::Philox4x32::ctr_type philox4(uint64_t seed, uint32_t c0, uint32_t c1, uint32_t c2,
                                               uint32_t c3) {
  r123::Philox4x32 rng;
  r123::Philox4x32::ctr_type ctr = {{c0, c1, c2, c3}};
  r123::Philox4x32::key_type key = {{static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)}};
  return rng(ctr, key);
}

// A uniform float in [0, 1) from the top 24 bits of a word (exact in fp32).
KVSCOPE_HD float uniform01(uint32_t x) { return static_cast<float>(x >> 8) * (1.0f / 16777216.0f); }
// A uniform float in (0, 1), never 0 or 1, so -log(-log u) is finite: the
// midpoints (k + 1/2) / 2^23 of the top 23 bits. All are exact in fp32; with
// 24 bits the top one, 2^24 - 1/2, would round to 2^24 and give u = 1.
KVSCOPE_HD float uniform_open01(uint32_t x) {
  return (static_cast<float>(x >> 9) + 0.5f) * (1.0f / 8388608.0f);
}

}  // namespace kvscope
