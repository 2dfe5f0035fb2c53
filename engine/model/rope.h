// Rotary position embedding frequencies, computed the way Hugging Face does
// (fp32 inv_freq = 1 / theta^(2i/d), then linear or llama3 scaling), so every
// backend rotates by the same angles.
#pragma once

#include <vector>

#include "model/config.h"

namespace kvscope {

// rotary_dims / 2 inverse frequencies (empty without RoPE).
std::vector<float> rope_inv_freq(const ModelConfig& cfg);
// Those of the sliding layers of a model with a local base (Gemma 3:
// rope_local_theta, no scaling); empty when the model has none.
std::vector<float> rope_inv_freq_local(const ModelConfig& cfg);

// Rotates the first 2 * inv_freq.size() dims of one head vector `x` (pairs
// i and i + half, "rotate_half") by angle = pos * inv_freq[i]. Angles are
// formed in fp32 like HF's (inv_freq * position in float).
void rope_rotate(float* x, const std::vector<float>& inv_freq, float pos);

}  // namespace kvscope
