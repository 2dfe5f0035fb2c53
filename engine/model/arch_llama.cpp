// Llama, Mistral, Qwen2, Qwen3: RMSNorm, SwiGLU, RoPE, GQA, optional q/k/v
// (and o, MLP) biases, tied or untied head; Qwen3's RMSNorm over each head
// of q and k (plain weights, unlike Gemma 3's 1 + w). MLKV checkpoints (num_key_value_layers
// < num_hidden_layers) store k/v projections only in the owning layers.
#include <algorithm>
#include <string>

#include "model/architectures.h"

namespace kvscope {

ModelWeights map_llama_weights(TensorPicker& pick, const ModelConfig& cfg) {
  const std::string p = "model.";
  const int64_t d = cfg.hidden, ff = cfg.intermediate, V = cfg.vocab_size;
  const int64_t q = cfg.q_dim(), kv = cfg.kv_dim();
  const std::string dd = "hidden_size=" + std::to_string(d);
  const std::string qs = "num_attention_heads x head_dim=" + std::to_string(q) + ", " + dd;
  const std::string ks = "num_key_value_heads x head_dim=" + std::to_string(kv) + ", " + dd;
  const auto owners = cfg.owning_layers();
  ModelWeights w;
  w.tok_emb = pick.take(p + "embed_tokens.weight", {V, d}, "vocab_size, hidden_size");
  for (int i = 0; i < cfg.n_layers; ++i) {
    const std::string l = p + "layers." + std::to_string(i) + ".";
    const bool owns_kv = std::find(owners.begin(), owners.end(), i) != owners.end();
    LayerWeights L;
    L.attn_norm_w = pick.take(l + "input_layernorm.weight", {d}, dd);
    L.wq = pick.take(l + "self_attn.q_proj.weight", {q, d}, qs);
    if (cfg.qkv_bias) L.bq = pick.take(l + "self_attn.q_proj.bias", {q}, qs);
    if (owns_kv) {
      L.wk = pick.take(l + "self_attn.k_proj.weight", {kv, d}, ks);
      L.wv = pick.take(l + "self_attn.v_proj.weight", {kv, d}, ks);
      if (cfg.qkv_bias) {
        L.bk = pick.take(l + "self_attn.k_proj.bias", {kv}, ks);
        L.bv = pick.take(l + "self_attn.v_proj.bias", {kv}, ks);
      }
    }
    L.wo = pick.take(l + "self_attn.o_proj.weight", {d, q}, qs);
    if (cfg.o_bias) L.bo = pick.take(l + "self_attn.o_proj.bias", {d}, dd);
    if (cfg.qk_norm) {
      const std::string hs = "head_dim=" + std::to_string(cfg.head_dim);
      L.q_norm_w = pick.take(l + "self_attn.q_norm.weight", {cfg.head_dim}, hs);
      if (owns_kv) L.k_norm_w = pick.take(l + "self_attn.k_norm.weight", {cfg.head_dim}, hs);
    }
    L.mlp_norm_w = pick.take(l + "post_attention_layernorm.weight", {d}, dd);
    const std::string fs = dd + ", intermediate_size=" + std::to_string(ff);
    L.w_gate = pick.take(l + "mlp.gate_proj.weight", {ff, d}, fs);
    L.w_up = pick.take(l + "mlp.up_proj.weight", {ff, d}, fs);
    L.w_down = pick.take(l + "mlp.down_proj.weight", {d, ff}, fs);
    if (cfg.mlp_bias) {
      L.b_gate = pick.take(l + "mlp.gate_proj.bias", {ff}, fs);
      L.b_up = pick.take(l + "mlp.up_proj.bias", {ff}, fs);
      L.b_down = pick.take(l + "mlp.down_proj.bias", {d}, fs);
    }
    w.layers.push_back(std::move(L));
  }
  w.final_norm_w = pick.take(p + "norm.weight", {d}, dd);
  w.lm_head = pick.take_head("lm_head.weight", w.tok_emb, "vocab_size, hidden_size");
  pick.check_all_used([](const std::string& n) { return n.ends_with(".rotary_emb.inv_freq"); });
  return w;
}

}  // namespace kvscope
