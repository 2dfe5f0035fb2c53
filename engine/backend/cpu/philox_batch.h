// Philox4x32-10 over arrays of counters on the CPU: the same words as
// philox4() (common/counter_random.h), many counters per call so the rounds
// run in vector lanes. Keyformer's noise draws a block of four slots per
// counter for every head and step; the random policy draws one word per slot
// of the cache every step. The vector path (simd_path.h) changes speed, not
// words; the overloads taking one let the tests compare every path.
#pragma once

#include <cstdint>

#include "backend/cpu/simd_path.h"

namespace kvscope::cpu {

// Counters (c0, c1[i], c2, c3) under `seed` for i < n, as four word arrays.
void philox4_batch(uint64_t seed, uint32_t c0, const uint32_t* c1, uint32_t c2, uint32_t c3, int n, uint32_t* w0,
                   uint32_t* w1, uint32_t* w2, uint32_t* w3);
void philox4_batch(SimdPath path, uint64_t seed, uint32_t c0, const uint32_t* c1, uint32_t c2, uint32_t c3, int n,
                   uint32_t* w0, uint32_t* w1, uint32_t* w2, uint32_t* w3);

// Word 0 of counters (c0, c1, c2[i], c3) under `seed` for i < n (the third
// word varies: the random policy keys its draws by position there).
void philox4_word0_batch(uint64_t seed, uint32_t c0, uint32_t c1, const int32_t* c2, uint32_t c3, int n,
                         uint32_t* w0);
void philox4_word0_batch(SimdPath path, uint64_t seed, uint32_t c0, uint32_t c1, const int32_t* c2, uint32_t c3,
                         int n, uint32_t* w0);

}  // namespace kvscope::cpu
