// Per-slot statistics that eviction policies rank slots by, accumulated by
// the backend inside its attention step (docs/policies.md): for every KV segment,
//   S = decay * S + f,
// where f is each reader's post-softmax attention (H2O, TOVA, A2SF, ideal) or
// a Gumbel softmax of its pre-softmax logits (Keyformer), combined over the
// query heads that read the segment (mean, or max). Prefill rows are applied
// in order, so S[j] = sum_i decay^(n-1-i) f_i[j] for a fresh cache. Which
// slots to drop is the policies' business; this is only arithmetic.
#pragma once

#include <cmath>
#include <cstdint>

#include "common/counter_random.h"
#include "common/float_math.h"

namespace kvscope {

// KeyNorm and KeyDiff score slots from the cache's keys alone, Cur and
// LagKv from its keys and values (cache_scores.h), Leverage from its keys
// before RoPE (leverage_scores.h), Expected from its keys and values and the
// moments of the queries so far (expected_attention.h), after each call;
// the others accumulate inside attention.
enum class StatSource { None, Attention, GumbelSoftmax, KeyNorm, KeyDiff, Cur, LagKv, Leverage, Expected };
// How CUR combines its key and value leverages (kvpress's leverage_type).
enum class CurLeverage { KvProduct, Key, Value, KvAverage };
enum class NoiseKind { Gumbel, Gaussian, Constant, None };
enum class ReaderReduce { Mean, Max };

struct SlotStatRule {
  StatSource source = StatSource::None;
  float decay = 1.0f;  // 1: accumulate (H2O, Keyformer); 0: current row only (TOVA); alpha (A2SF)
  ReaderReduce reduce = ReaderReduce::Mean;
  NoiseKind noise = NoiseKind::Gumbel;  // GumbelSoftmax only
  float tau = 1.0f;                     // GumbelSoftmax temperature of this forward call
  uint64_t seed = 0;
  // Only the last `last_rows` query rows of a call count (0: all): SnapKV's
  // observation window scores the prompt from its last queries alone. A
  // decode call has one row, which always counts.
  int last_rows = 0;
  // Cur: the local window in slots (0: none) and the leverage (CurLeverage).
  // LagKv: the lag and the sinks its partitions start after.
  // Expected: the future positions F, the sinks (left out of the queries'
  // moments and of the softmax) and the terms left out (expected_attention.h).
  int span = 0;
  int variant = 0;
  int sinks = 0;

  bool active() const { return source != StatSource::None; }
  // Scored after each call from what the cache holds, not inside attention.
  bool from_cache() const {
    return source == StatSource::KeyNorm || source == StatSource::KeyDiff || source == StatSource::Cur ||
           source == StatSource::LagKv || source == StatSource::Leverage || source == StatSource::Expected;
  }
};

// Scores from the keys of one segment (kvpress's KnormPress and
// KeyDiffPress), recomputed for every slot after each call, the same
// sums in the same order on every backend:
//   norm_j = sqrt(sum_d k_jd^2)
//   KeyNorm: S_j = -norm_j (a small key is an important one)
//   KeyDiff: anchor_d = (sum_j k_jd / max(norm_j, 1e-12)) / len,
//            S_j = -(k_j . anchor) / max(norm_j |anchor|, 1e-8)
//            (keys unlike the mean direction are kept)
constexpr float kKeyNormEps = 1e-12f;
constexpr float kKeyCosEps = 1e-8f;

// Keyformer's noise for one (query position, layer, head, key position),
// drawn from the seeded Philox stream so CPU, CUDA and replays agree:
// gumbel = -log(-log u); gaussian N(0.5772, 1.2825); constant 0.5772. The
// logs are fm::log_pos, which the CPU's vectorised row also uses, so every
// backend draws the same values.
// One Philox call gives four words: Gumbel noise of key position p uses word
// p % 4 of block p / 4, Gaussian noise (two words) words 2(p % 2), 2(p % 2)+1
// of block p / 2, so neighbouring positions share a call. The value is still
// a function of (seed, qpos, layer, head, kpos) alone, whatever the caller
// computes before it.
KVSCOPE_HD uint32_t keyformer_noise_block(NoiseKind kind, uint32_t kpos) {
  return kind == NoiseKind::Gaussian ? kpos >> 1 : kpos >> 2;
}

KVSCOPE_HD r123::Philox4x32::ctr_type keyformer_noise_draw(uint64_t seed, uint32_t qpos, uint32_t layer, uint32_t head,
                                                           uint32_t block) {
  return philox4(seed, qpos, block, (layer << 16) | (head & 0xffffu), static_cast<uint32_t>(RandomStream::PolicyNoise));
}

// The noise of key position kpos from its block's draw (Gumbel or Gaussian).
KVSCOPE_HD float keyformer_noise_from(NoiseKind kind, const r123::Philox4x32::ctr_type& r, uint32_t kpos) {
  if (kind == NoiseKind::Gumbel) return -fm::log_pos(-fm::log_pos(uniform_open01(r.v[kpos & 3u])));
  const uint32_t w = 2u * (kpos & 1u);
  const float u1 = uniform_open01(r.v[w]), u2 = uniform_open01(r.v[w + 1]);  // Box-Muller
  const float z = sqrtf(-2.0f * fm::log_pos(u1)) * cosf(6.283185307179586f * u2);
  return 0.5772f + 1.2825f * z;
}

KVSCOPE_HD float keyformer_noise(NoiseKind kind, uint64_t seed, uint32_t qpos, uint32_t layer, uint32_t head,
                                 uint32_t kpos) {
  if (kind == NoiseKind::None) return 0.0f;
  if (kind == NoiseKind::Constant) return 0.5772f;
  return keyformer_noise_from(kind, keyformer_noise_draw(seed, qpos, layer, head, keyformer_noise_block(kind, kpos)),
                              kpos);
}

}  // namespace kvscope
