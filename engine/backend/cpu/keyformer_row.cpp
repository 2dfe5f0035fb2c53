#include "backend/cpu/keyformer_row.h"

#include <algorithm>
#include <limits>

#include "backend/cpu/philox_batch.h"
#include "backend/cpu/simd_path.h"
#include "common/float_math.h"

// The AVX-512 and AVX2 copies (backend/cpu/simd_path.h) give four and two
// times the lanes for the log/exp arithmetic. The values are the same in
// all: every operation is IEEE-rounded, nothing is contracted into FMA, and
// the softmax's max and sum run in fixed lanes.

namespace kvscope::cpu {

namespace {

// Loops below run over whole groups of kGroup slots (the widest vector), the
// rows padded with slots that contribute nothing, so no scalar remainder
// loop runs the log/log/exp chain one slot at a time.
constexpr int kGroup = 16;
int padded(int n) { return (n + kGroup - 1) / kGroup * kGroup; }

// z = exp(z - max z) in place over n = padded(len) entries, returning
// 1 / sum, so softmax(z) = z * the result; -inf entries (the masked slots and
// the padding) give 0. The max and the sum are taken in
// kGroup fixed lanes and the lanes combined in a fixed order, so the result
// is the same whichever vector width runs it.
[[gnu::always_inline]] inline float exp_in_place(float* z, int n) {
  float lane_max[kGroup];
  std::fill(lane_max, lane_max + kGroup, -std::numeric_limits<float>::infinity());
  for (int g0 = 0; g0 < n; g0 += kGroup)
#pragma omp simd
    for (int t = 0; t < kGroup; ++t) lane_max[t] = z[g0 + t] > lane_max[t] ? z[g0 + t] : lane_max[t];
  float mx = lane_max[0];
  for (int t = 1; t < kGroup; ++t) mx = lane_max[t] > mx ? lane_max[t] : mx;
  double lane_sum[kGroup] = {};
  for (int g0 = 0; g0 < n; g0 += kGroup)
#pragma omp simd
    for (int t = 0; t < kGroup; ++t) {
      const float e = fm::exp_nonpos(z[g0 + t] - mx);
      z[g0 + t] = e;
      lane_sum[t] += e;
    }
  double sum = 0;
  for (int t = 0; t < kGroup; ++t) sum += lane_sum[t];
  return static_cast<float>(1.0 / sum);
}

// Gumbel noise draws for a row: block pos / 4 of each slot, word pos % 4
// (keyformer_noise_block and keyformer_noise_from). Slots hold ascending
// positions, so a block's slots are neighbours and each block is drawn
// once. Afterwards slot j's word is draws[word_at[j]].
[[gnu::always_inline]] inline void gumbel_draws(const SlotStatRule& rule, uint32_t qpos, uint32_t layer, uint32_t head,
                                                const int* pos, int len, KeyformerRowScratch& s) {
  const int stride = padded(len);  // room for the draws of up to len blocks, in whole groups
  s.block.resize(stride + 1);
  s.word_at.assign(stride, 0);  // padding slots read word 0
  s.draws.resize(4 * static_cast<std::size_t>(stride));
  auto block_of = [&](int j) { return keyformer_noise_block(NoiseKind::Gumbel, static_cast<uint32_t>(pos[j])); };
  // Slot j's word: word pos % 4 of its block's draw, block number bi.
  auto word_index = [&](int j, int bi) { return (pos[j] & 3) * stride + bi; };
  const uint32_t first = block_of(0), last = block_of(len - 1);
  int nb = 0;
  if (last - first < static_cast<uint32_t>(len)) {
    // A dense cache (a prefill, a budget not far below the context): draw
    // every block of the span, empty ones too, and skip finding the
    // distinct ones.
    nb = static_cast<int>(last - first) + 1;
    for (int i = 0; i < padded(nb); ++i) s.block[i] = first + static_cast<uint32_t>(i);
    for (int j = 0; j < len; ++j) s.word_at[j] = word_index(j, static_cast<int>(block_of(j) - first));
  } else {
    uint32_t prev = ~0u;  // no block: positions are below 2^31, so blocks below 2^29
    for (int j = 0; j < len; ++j) {  // branch-free: a slot starts a block or joins the last one
      const uint32_t b = block_of(j);
      s.block[nb] = b;
      nb += b != prev;
      s.word_at[j] = word_index(j, nb - 1);
      prev = b;
    }
    std::fill(s.block.begin() + nb, s.block.begin() + padded(nb), 0u);  // drawn, never read
  }
  const int nb_padded = padded(nb);
  // The counter of keyformer_noise_draw(): (qpos, block, layer:head, stream).
  uint32_t* d = s.draws.data();
  philox4_batch(rule.seed, qpos, s.block.data(), (layer << 16) | (head & 0xffffu),
                static_cast<uint32_t>(RandomStream::PolicyNoise), nb_padded, d, d + stride, d + 2 * stride,
                d + 3 * stride);
}

[[gnu::always_inline]] inline float keyformer_exp_row_body(const SlotStatRule& rule, uint32_t qpos, uint32_t layer,
                                                          uint32_t head, const int* pos, const float* logits, int len,
                                                          KeyformerRowScratch& scratch) {
  if (len <= 0) return 0.0f;
  const float tau = rule.tau;
  const int n = padded(len);
  scratch.z.resize(n);
  float* z = scratch.z.data();
  std::copy(logits, logits + len, z);
  std::fill(z + len, z + n, -std::numeric_limits<float>::infinity());  // padding: weight 0
  if (rule.noise == NoiseKind::Gumbel) {
    gumbel_draws(rule, qpos, layer, head, pos, len, scratch);
    const uint32_t* d = scratch.draws.data();
    const int32_t* word_at = scratch.word_at.data();
    for (int g0 = 0; g0 < n; g0 += kGroup) {
#pragma omp simd
      for (int t = 0; t < kGroup; ++t) {
        const int j = g0 + t;
        const uint32_t w = d[word_at[j]];
        // uniform_open01 and -log(-log u), as keyformer_noise_from computes them.
        const float u = (static_cast<float>(static_cast<int32_t>(w >> 9)) + 0.5f) * (1.0f / 8388608.0f);
        const float g = -fm::log_pos(-fm::log_pos(u));
        z[j] = (z[j] + g) / tau;
      }
    }
  } else if (rule.noise == NoiseKind::Gaussian) {
    // Box-Muller needs a cosine as well; the paper's ablation, kept scalar.
    uint32_t cached = 0;
    r123::Philox4x32::ctr_type draw{};
    for (int j = 0; j < len; ++j) {
      const uint32_t kpos = static_cast<uint32_t>(pos[j]);
      const uint32_t block = keyformer_noise_block(rule.noise, kpos);
      if (j == 0 || block != cached) {
        draw = keyformer_noise_draw(rule.seed, qpos, layer, head, block);
        cached = block;
      }
      z[j] = (z[j] + keyformer_noise_from(rule.noise, draw, kpos)) / tau;
    }
  } else {
    const float c = keyformer_noise(rule.noise, 0, 0, 0, 0, 0);
    for (int j = 0; j < len; ++j) z[j] = (z[j] + c) / tau;
  }
  return exp_in_place(z, n);
}

KVSCOPE_SIMD_VARIANTS(float, keyformer_exp_row,
                      (const SlotStatRule& rule, uint32_t qpos, uint32_t layer, uint32_t head, const int* pos,
                       const float* logits, int len, KeyformerRowScratch& scratch),
                      (rule, qpos, layer, head, pos, logits, len, scratch))

}  // namespace

float keyformer_exp_row(SimdPath path, const SlotStatRule& rule, uint32_t qpos, uint32_t layer, uint32_t head,
                        const int* pos, const float* logits, int len, KeyformerRowScratch& scratch) {
  return simd_pick(path, keyformer_exp_row_avx512, keyformer_exp_row_avx2, keyformer_exp_row_baseline)(
      rule, qpos, layer, head, pos, logits, len, scratch);
}

float keyformer_exp_row(const SlotStatRule& rule, uint32_t qpos, uint32_t layer, uint32_t head, const int* pos,
                        const float* logits, int len, KeyformerRowScratch& scratch) {
  return keyformer_exp_row(simd_path(), rule, qpos, layer, head, pos, logits, len, scratch);
}

void keyformer_score_row(const SlotStatRule& rule, uint32_t qpos, uint32_t layer, uint32_t head, const int* pos,
                         const float* logits, int len, float* out, KeyformerRowScratch& scratch) {
  const float inv = keyformer_exp_row(rule, qpos, layer, head, pos, logits, len, scratch);
  const float* e = scratch.z.data();
  for (int j = 0; j < len; ++j) out[j] = e[j] * inv;
}

}  // namespace kvscope::cpu
