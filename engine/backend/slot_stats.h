// Per-slot statistics that eviction policies rank slots by, accumulated by
// the backend inside its attention step (POLICIES.md): for every KV segment,
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

namespace kvscope {

enum class StatSource { None, Attention, GumbelSoftmax };
enum class NoiseKind { Gumbel, Gaussian, Constant, None };
enum class ReaderReduce { Mean, Max };

struct SlotStatRule {
  StatSource source = StatSource::None;
  float decay = 1.0f;  // 1: accumulate (H2O, Keyformer); 0: current row only (TOVA); alpha (A2SF)
  ReaderReduce reduce = ReaderReduce::Mean;
  NoiseKind noise = NoiseKind::Gumbel;  // GumbelSoftmax only
  float tau = 1.0f;                     // GumbelSoftmax temperature of this forward call
  uint64_t seed = 0;

  bool active() const { return source != StatSource::None; }
};

// Keyformer's noise for one (query position, layer, head, key position),
// drawn from the seeded Philox stream so CPU, CUDA and replays agree:
// gumbel = -log(-log u); gaussian N(0.5772, 1.2825); constant 0.5772.
KVSCOPE_HD float keyformer_noise(NoiseKind kind, uint64_t seed, uint32_t qpos, uint32_t layer, uint32_t head,
                                 uint32_t kpos) {
  if (kind == NoiseKind::None) return 0.0f;
  if (kind == NoiseKind::Constant) return 0.5772f;
  const auto r = philox4(seed, qpos, kpos, (layer << 16) | (head & 0xffffu),
                         static_cast<uint32_t>(RandomStream::PolicyNoise));
  const float u1 = uniform_open01(r.v[0]);
  if (kind == NoiseKind::Gumbel) return -logf(-logf(u1));
  const float u2 = uniform_open01(r.v[1]);  // Box-Muller
  const float z = sqrtf(-2.0f * logf(u1)) * cosf(6.283185307179586f * u2);
  return 0.5772f + 1.2825f * z;
}

}  // namespace kvscope
