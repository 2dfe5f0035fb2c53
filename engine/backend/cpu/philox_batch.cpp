#include "backend/cpu/philox_batch.h"

#include "backend/cpu/simd_path.h"

// The AVX-512 and AVX2 copies give four and two times the 64-bit lanes for
// the rounds' multiplies; integer arithmetic only, so every copy gives the
// same words.

namespace kvscope::cpu {
namespace {

// Philox4x32-10 (Salmon et al., SC'11): ten rounds of two 32x32->64
// multiplies, the key bumped by the Weyl constants between rounds. The words
// live in 64-bit lanes (upper halves zero), so each round's two products are
// plain 32x32->64 multiplies of the low halves, which every x86 vector unit
// has (pmuludq).
struct Words {
  uint64_t x0, x1, x2, x3;
};

[[gnu::always_inline]] inline Words philox_rounds(uint64_t seed, uint64_t x0, uint64_t x1, uint64_t x2, uint64_t x3) {
  constexpr uint64_t kLow = 0xffffffffu;
  uint64_t k0 = static_cast<uint32_t>(seed), k1 = static_cast<uint32_t>(seed >> 32);
  for (int round = 0; round < 10; ++round) {
    const uint64_t p0 = uint64_t{0xD2511F53u} * (x0 & kLow);
    const uint64_t p1 = uint64_t{0xCD9E8D57u} * (x2 & kLow);
    x0 = ((p1 >> 32) ^ x1 ^ k0) & kLow;
    x1 = p1 & kLow;
    x2 = ((p0 >> 32) ^ x3 ^ k1) & kLow;
    x3 = p0 & kLow;
    k0 = (k0 + 0x9E3779B9u) & kLow;
    k1 = (k1 + 0xBB67AE85u) & kLow;
  }
  return {x0, x1, x2, x3};
}

[[gnu::always_inline]] inline void philox4_batch_body(uint64_t seed, uint32_t c0, const uint32_t* c1, uint32_t c2,
                                                     uint32_t c3, int n, uint32_t* w0, uint32_t* w1, uint32_t* w2,
                                                     uint32_t* w3) {
#pragma omp simd
  for (int i = 0; i < n; ++i) {
    const Words w = philox_rounds(seed, c0, c1[i], c2, c3);
    w0[i] = static_cast<uint32_t>(w.x0);
    w1[i] = static_cast<uint32_t>(w.x1);
    w2[i] = static_cast<uint32_t>(w.x2);
    w3[i] = static_cast<uint32_t>(w.x3);
  }
}

[[gnu::always_inline]] inline void philox4_word0_batch_body(uint64_t seed, uint32_t c0, uint32_t c1, const int32_t* c2,
                                                           uint32_t c3, int n, uint32_t* w0) {
#pragma omp simd
  for (int i = 0; i < n; ++i) w0[i] = static_cast<uint32_t>(philox_rounds(seed, c0, c1, static_cast<uint32_t>(c2[i]), c3).x0);
}

KVSCOPE_SIMD_VARIANTS(void, philox4_batch,
                      (uint64_t seed, uint32_t c0, const uint32_t* c1, uint32_t c2, uint32_t c3, int n, uint32_t* w0,
                       uint32_t* w1, uint32_t* w2, uint32_t* w3),
                      (seed, c0, c1, c2, c3, n, w0, w1, w2, w3))
KVSCOPE_SIMD_VARIANTS(void, philox4_word0_batch,
                      (uint64_t seed, uint32_t c0, uint32_t c1, const int32_t* c2, uint32_t c3, int n, uint32_t* w0),
                      (seed, c0, c1, c2, c3, n, w0))

}  // namespace

void philox4_batch(SimdPath path, uint64_t seed, uint32_t c0, const uint32_t* c1, uint32_t c2, uint32_t c3, int n,
                   uint32_t* w0, uint32_t* w1, uint32_t* w2, uint32_t* w3) {
  simd_pick(path, philox4_batch_avx512, philox4_batch_avx2, philox4_batch_baseline)(seed, c0, c1, c2, c3, n, w0, w1,
                                                                                      w2, w3);
}

void philox4_batch(uint64_t seed, uint32_t c0, const uint32_t* c1, uint32_t c2, uint32_t c3, int n, uint32_t* w0,
                   uint32_t* w1, uint32_t* w2, uint32_t* w3) {
  philox4_batch(simd_path(), seed, c0, c1, c2, c3, n, w0, w1, w2, w3);
}

void philox4_word0_batch(SimdPath path, uint64_t seed, uint32_t c0, uint32_t c1, const int32_t* c2, uint32_t c3,
                         int n, uint32_t* w0) {
  simd_pick(path, philox4_word0_batch_avx512, philox4_word0_batch_avx2, philox4_word0_batch_baseline)(seed, c0, c1, c2,
                                                                                                      c3, n, w0);
}

void philox4_word0_batch(uint64_t seed, uint32_t c0, uint32_t c1, const int32_t* c2, uint32_t c3, int n,
                         uint32_t* w0) {
  philox4_word0_batch(simd_path(), seed, c0, c1, c2, c3, n, w0);
}

}  // namespace kvscope::cpu
