#include "model/config.h"

#include <cmath>

namespace kvscope {

std::vector<int> ModelConfig::owning_layers() const {
  std::vector<int> owners{0};
  for (int i = 0; i + 1 < n_kv_layers; ++i) owners.push_back(static_cast<int>((static_cast<int64_t>(i + 1) * n_layers) / n_kv_layers));
  return owners;
}

std::vector<int> ModelConfig::kv_source() const {
  const auto owners = owning_layers();
  std::vector<int> src(n_layers, 0);
  for (int l = 0; l < n_layers; ++l) {
    for (int i = 0; i < static_cast<int>(owners.size()); ++i)
      if (owners[i] <= l) src[l] = i;  // nearest owning layer at or below l
  }
  return src;
}

int ModelConfig::window_of(int layer) const {
  if (sliding_window <= 0) return 0;
  if (sliding_layers.empty()) return sliding_window;
  return sliding_layers.at(static_cast<std::size_t>(layer)) ? sliding_window : 0;
}

bool ModelConfig::uses_local_rope(int layer) const { return rope_local_theta > 0 && window_of(layer) > 0; }

bool ModelConfig::layers_alike() const {
  for (int l = 1; l < n_layers; ++l)
    if (window_of(l) != window_of(0) || uses_local_rope(l) != uses_local_rope(0)) return false;
  return true;
}

float ModelConfig::attention_scale() const {
  // transformers: query_pre_attn_scalar ** -0.5 (a Python float) times an
  // fp32 tensor, i.e. the scale rounded to fp32; otherwise 1/sqrt(head_dim)
  // in fp32 as every backend computed it before.
  if (query_pre_attn_scalar > 0) return static_cast<float>(std::pow(query_pre_attn_scalar, -0.5));
  if (softmax_scale > 0) return static_cast<float>(softmax_scale);
  return 1.0f / std::sqrt(static_cast<float>(head_dim));
}

int64_t ModelConfig::kv_bytes_per_token(std::size_t bytes_per_element) const {
  return 2LL * n_kv_layers * n_kv_heads * head_dim * static_cast<int64_t>(bytes_per_element);
}

int64_t ModelConfig::parameter_count() const {
  const int64_t d = hidden, q = q_dim(), kv = kv_dim(), ff = intermediate;
  int64_t per_layer = d * q + d * q;  // q and o projections
  if (qkv_bias) per_layer += q;
  if (o_bias) per_layer += d;
  per_layer += (gated_mlp ? 3 : 2) * d * ff;
  if (mlp_bias) per_layer += (gated_mlp ? 2 : 1) * ff + d;
  // GPT-J's one norm feeds both branches.
  per_layer += (norm == NormKind::LayerNorm ? 2 : 1) * (arch == Arch::GPTJ ? 1 : 2) * d;
  if (sandwich_norm) per_layer += 2 * d;
  if (qk_norm) per_layer += 2 * head_dim;
  int64_t total = per_layer * n_layers;
  total += static_cast<int64_t>(n_kv_layers) * (2 * d * kv + (qkv_bias ? 2 * kv : 0));
  const int64_t e = embed_width();
  total += static_cast<int64_t>(vocab_size) * e;  // embedding
  if (!tied_embeddings) total += static_cast<int64_t>(vocab_size) * e;
  if (lm_head_bias) total += vocab_size;
  if (word_embed_dim > 0) total += 2 * d * e;  // OPT's project_in and project_out
  if (learned_positions) total += static_cast<int64_t>(max_positions + position_offset) * d;
  if (!post_norm) total += (norm == NormKind::LayerNorm ? 2 : 1) * d;
  return total;
}

// MPT's ALiBi slopes as transformers' build_mpt_alibi_tensor forms them in
// fp32: for P, the head count rounded up to a power of two, slope k is
// 1 / 2^(k * bias_max / P) (k = 1..P); for fewer heads than P the odd-k
// slopes come first, then the even ones, cut to the head count.
std::vector<float> mpt_alibi_slopes(int heads, double bias_max) {
  int p = 1;
  while (p < heads) p *= 2;
  const float step = static_cast<float>(bias_max / p);
  std::vector<float> all(p);
  for (int k = 1; k <= p; ++k) all[k - 1] = 1.0f / std::pow(2.0f, static_cast<float>(k) * step);
  if (p == heads) return all;
  std::vector<float> out;
  for (int i = 1; i < p; i += 2) out.push_back(all[i]);
  for (int i = 0; i < p; i += 2) out.push_back(all[i]);
  out.resize(heads);
  return out;
}

const char* arch_name(Arch a) {
  switch (a) {
    case Arch::GPT2: return "gpt2";
    case Arch::GPTNeoX: return "gpt_neox";
    case Arch::Llama: return "llama";
    case Arch::Gemma3: return "gemma3";
    case Arch::GPTJ: return "gptj";
    case Arch::OPT: return "opt";
    case Arch::Phi3: return "phi3";
    case Arch::MPT: return "mpt";
  }
  return "?";
}

std::string ModelConfig::describe_arch() const {
  std::string s = model_type;
  if (n_kv_layers < n_layers) s += " (MLKV: " + std::to_string(n_kv_layers) + " KV layers)";
  if (n_kv_heads == 1 && n_heads > 1) s += " (MQA)";
  else if (n_kv_heads < n_heads) s += " (GQA " + std::to_string(n_heads / n_kv_heads) + ":1)";
  if (!sliding_layers.empty() && sliding_window > 0) {
    int sliding = 0;
    for (uint8_t v : sliding_layers) sliding += v ? 1 : 0;
    s += " (" + std::to_string(sliding) + " of " + std::to_string(n_layers) + " layers sliding, window " +
         std::to_string(sliding_window) + ")";
  }
  return s;
}

std::vector<std::string> supported_model_types() {
  return {"gemma3_text", "gpt2", "gpt_neox", "gptj", "llama", "mistral", "mpt", "opt", "phi3", "qwen2", "qwen3"};
}

}  // namespace kvscope
