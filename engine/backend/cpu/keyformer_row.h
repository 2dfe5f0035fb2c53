// Keyformer's score row on the CPU: G = softmax((x + noise) / tau) over one
// query's pre-softmax logits x, with the noise of keyformer_noise() for
// every slot's absolute position. It runs for every head, layer and step,
// over the whole cache, so it is written for SIMD: the Philox draws of the
// row's distinct noise blocks in one vectorisable batch, then log, log, exp
// and the sums as straight loops (common/float_math.h). The noise equals
// keyformer_noise() bit for bit; the softmax sums in 16 fixed lanes, so the
// row is the same bits whichever instruction set runs it (an SSE2, an AVX2,
// an AVX-512 and an unoptimised build agree on every bit).
#pragma once

#include <cstdint>
#include <vector>

#include "backend/cpu/simd_path.h"
#include "backend/slot_stats.h"

namespace kvscope::cpu {

struct KeyformerRowScratch {
  std::vector<uint32_t> block;       // the row's distinct noise blocks
  std::vector<uint32_t> draws;       // [4][padded len]: the four words of each block's draw
  std::vector<int32_t> word_at;      // [slot]: index of its word in `draws`
  std::vector<float> z;              // the row, padded to whole vector groups
};

// `logits` and `out` hold `len` floats (may alias); `pos` the slots'
// absolute positions, ascending; -inf logits (masked) give 0.
void keyformer_score_row(const SlotStatRule& rule, uint32_t qpos, uint32_t layer, uint32_t head, const int* pos,
                         const float* logits, int len, float* out, KeyformerRowScratch& scratch);

// The same row before its normalisation: leaves e_j = exp(z_j - max z) in
// scratch.z[0, len) and returns 1 / sum e, so G_j = scratch.z[j] * result,
// bit for bit what keyformer_score_row writes. The backend multiplies while
// it accumulates, rather than in a pass of its own (the rows run for every
// head and step).
float keyformer_exp_row(const SlotStatRule& rule, uint32_t qpos, uint32_t layer, uint32_t head, const int* pos,
                        const float* logits, int len, KeyformerRowScratch& scratch);
// The same on a chosen vector path (tests compare the paths).
float keyformer_exp_row(SimdPath path, const SlotStatRule& rule, uint32_t qpos, uint32_t layer, uint32_t head,
                        const int* pos, const float* logits, int len, KeyformerRowScratch& scratch);

}  // namespace kvscope::cpu
