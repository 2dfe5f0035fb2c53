// Gemma 3 (text): Llama's layout plus RMSNorm over each head of q and k,
// a norm on the attention and MLP outputs before each residual add (four
// norms a layer), and RMSNorm weights that multiply as (1 + w). transformers
// computes that sum in fp32 at every call; it is done here once, in fp32, so
// the product is the same. Projections may carry biases (attention_bias).
#include <string>

#include "common/error.h"
#include "model/architectures.h"

namespace kvscope {
namespace {

// Gemma3RMSNorm's weight: output * (1.0 + w), folded in at load.
WeightTensor unit_offset_norm(TensorPicker& pick, const std::string& name, int64_t n, const std::string& why) {
  const WeightTensor t = pick.take(name, {n}, why);
  std::vector<float> v = t.to_f32();
  for (float& x : v) x = 1.0f + x;
  return WeightTensor::owned_f32(std::move(v), {n});
}

}  // namespace

ModelWeights map_gemma3_weights(TensorPicker& pick, const ModelConfig& cfg) {
  if (cfg.n_kv_layers != cfg.n_layers)
    throw Error(pick.source(), "num_key_value_layers",
                "stored MLKV layouts are read for llama-family checkpoints; Gemma 3's layers differ too much to share KV");
  const std::string p = "model.";
  const int64_t d = cfg.hidden, ff = cfg.intermediate, V = cfg.vocab_size, hd = cfg.head_dim;
  const int64_t q = cfg.q_dim(), kv = cfg.kv_dim();
  const std::string dd = "hidden_size=" + std::to_string(d);
  const std::string hs = "head_dim=" + std::to_string(hd);
  const std::string qs = "num_attention_heads x head_dim=" + std::to_string(q) + ", " + dd;
  const std::string ks = "num_key_value_heads x head_dim=" + std::to_string(kv) + ", " + dd;
  const std::string fs = dd + ", intermediate_size=" + std::to_string(ff);
  ModelWeights w;
  w.tok_emb = pick.take(p + "embed_tokens.weight", {V, d}, "vocab_size, hidden_size");
  for (int i = 0; i < cfg.n_layers; ++i) {
    const std::string l = p + "layers." + std::to_string(i) + ".";
    LayerWeights L;
    L.attn_norm_w = unit_offset_norm(pick, l + "input_layernorm.weight", d, dd);
    L.wq = pick.take(l + "self_attn.q_proj.weight", {q, d}, qs);
    L.wk = pick.take(l + "self_attn.k_proj.weight", {kv, d}, ks);
    L.wv = pick.take(l + "self_attn.v_proj.weight", {kv, d}, ks);
    L.wo = pick.take(l + "self_attn.o_proj.weight", {d, q}, qs);
    if (cfg.qkv_bias) {
      L.bq = pick.take(l + "self_attn.q_proj.bias", {q}, qs);
      L.bk = pick.take(l + "self_attn.k_proj.bias", {kv}, ks);
      L.bv = pick.take(l + "self_attn.v_proj.bias", {kv}, ks);
    }
    if (cfg.o_bias) L.bo = pick.take(l + "self_attn.o_proj.bias", {d}, dd);
    L.q_norm_w = unit_offset_norm(pick, l + "self_attn.q_norm.weight", hd, hs);
    L.k_norm_w = unit_offset_norm(pick, l + "self_attn.k_norm.weight", hd, hs);
    // Gemma's post_attention_layernorm normalises the attention output (in
    // Llama the same name is the MLP's input norm); pre_feedforward is that.
    L.post_attn_norm_w = unit_offset_norm(pick, l + "post_attention_layernorm.weight", d, dd);
    L.mlp_norm_w = unit_offset_norm(pick, l + "pre_feedforward_layernorm.weight", d, dd);
    L.post_mlp_norm_w = unit_offset_norm(pick, l + "post_feedforward_layernorm.weight", d, dd);
    L.w_gate = pick.take(l + "mlp.gate_proj.weight", {ff, d}, fs);
    L.w_up = pick.take(l + "mlp.up_proj.weight", {ff, d}, fs);
    L.w_down = pick.take(l + "mlp.down_proj.weight", {d, ff}, fs);
    w.layers.push_back(std::move(L));
  }
  w.final_norm_w = unit_offset_norm(pick, p + "norm.weight", d, dd);
  w.lm_head = pick.take_head("lm_head.weight", w.tok_emb, "vocab_size, hidden_size");
  pick.check_all_used([](const std::string& n) { return n.ends_with("_inv_freq"); });
  return w;
}

}  // namespace kvscope
