// A decode step's attention for one KV head and the query heads that share
// it (three in SmolLM2): the scores of up to four query heads in one pass
// over the keys, then each head's weighted sum of the values, 64 sums at a
// time held in registers while the rows go by. They replace one OpenBLAS matrix-vector
// product per query head and pass (measured in bench/NOTES.md: at 2048
// tokens a SmolLM2 step 15.8 -> 12.6 ms).
//
// Sums are fixed whatever the instruction set or thread count: a score is
// summed in 16 lanes (lane t takes the elements i with i mod 16 == t) and
// combined by one fixed tree, as in matvec.h; an output element sums its
// rows in row order. No FMA contraction, so the baseline, AVX2 and AVX-512
// copies give the same bits.
#pragma once

#include <cstdint>

#include "backend/cpu/simd_path.h"

namespace kvscope::cpu {

// For g < G (any G) and rows j < len:
// scores[g * ld_scores + j] = scale * (q[g * ld_q ..] . K[j * hd ..]).
void decode_scores(SimdPath path, const float* K, int len, int hd, const float* q, int64_t ld_q, int G, float scale,
                   float* scores, int64_t ld_scores);
void decode_scores(const float* K, int len, int hd, const float* q, int64_t ld_q, int G, float scale, float* scores,
                   int64_t ld_scores);

// For g < G and d < hd: out[g * ld_out + d] = sum_j p[g * ld_p + j] * V[j * hd + d].
void decode_values(SimdPath path, const float* V, int len, int hd, const float* p, int64_t ld_p, int G, float* out,
                   int64_t ld_out);
void decode_values(const float* V, int len, int hd, const float* p, int64_t ld_p, int G, float* out, int64_t ld_out);

}  // namespace kvscope::cpu
