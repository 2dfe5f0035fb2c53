#include "model/rope.h"

#include <cmath>

namespace kvscope {

namespace {

std::vector<float> unscaled_inv_freq(int dim, double theta) {
  std::vector<float> inv;
  const float base = static_cast<float>(theta);
  for (int i = 0; i < dim; i += 2) inv.push_back(1.0f / std::pow(base, static_cast<float>(i) / static_cast<float>(dim)));
  return inv;
}

}  // namespace

std::vector<float> rope_inv_freq_local(const ModelConfig& cfg) {
  if (cfg.rope == RopeStyle::None || cfg.rotary_dims == 0 || cfg.rope_local_theta <= 0) return {};
  return unscaled_inv_freq(cfg.rotary_dims, cfg.rope_local_theta);
}

std::vector<float> rope_inv_freq(const ModelConfig& cfg) {
  std::vector<float> inv;
  if (cfg.rope == RopeStyle::None || cfg.rotary_dims == 0) return inv;
  inv = unscaled_inv_freq(cfg.rotary_dims, cfg.rope_theta);
  // llama.cpp divides each pair's angle by its factor (ggml_rope_ext's
  // freq_factors); dividing the frequency in fp32 is the same up to rounding.
  if (!cfg.rope_freq_factors.empty())
    for (std::size_t i = 0; i < inv.size() && i < cfg.rope_freq_factors.size(); ++i)
      inv[i] = inv[i] / cfg.rope_freq_factors[i];
  const auto& s = cfg.rope_scaling;
  if (s.type == RopeScaling::Type::Linear) {
    for (auto& f : inv) f = static_cast<float>(f / s.factor);
  } else if (s.type == RopeScaling::Type::Llama3) {
    // Long wavelengths are divided by `factor`, short ones kept, the band in
    // between interpolated (Llama 3.1's rope_scaling).
    const double old_ctx = s.original_max_positions;
    const double low_wavelen = old_ctx / s.low_freq_factor;
    const double high_wavelen = old_ctx / s.high_freq_factor;
    for (auto& f : inv) {
      const double wavelen = 2 * M_PI / f;
      if (wavelen > low_wavelen) {
        f = static_cast<float>(f / s.factor);
      } else if (wavelen >= high_wavelen) {
        const double smooth = (old_ctx / wavelen - s.low_freq_factor) / (s.high_freq_factor - s.low_freq_factor);
        f = static_cast<float>((1 - smooth) * f / s.factor + smooth * f);
      }
    }
  }
  return inv;
}

void rope_rotate(float* x, const std::vector<float>& inv_freq, float pos) {
  const int half = static_cast<int>(inv_freq.size());
  for (int i = 0; i < half; ++i) {
    const float angle = pos * inv_freq[i];
    const float c = std::cos(angle), s = std::sin(angle);
    const float x1 = x[i], x2 = x[i + half];
    x[i] = x1 * c - x2 * s;
    x[i + half] = x2 * c + x1 * s;
  }
}

}  // namespace kvscope
