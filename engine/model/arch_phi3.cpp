// Phi-3: Llama's layers with q, k and v fused in qkv_proj ([q | k | v] rows)
// and gate and up in gate_up_proj ([gate | up] rows), split at load; no
// biases.
#include <string>

#include "common/error.h"
#include "model/architectures.h"

namespace kvscope {

ModelWeights map_phi3_weights(TensorPicker& pick, const ModelConfig& cfg) {
  pick.refuse_stored_mlkv();
  const std::string p = "model.";
  const int64_t d = cfg.hidden, ff = cfg.intermediate, V = cfg.vocab_size;
  const int64_t q = cfg.q_dim(), kv = cfg.kv_dim();
  const std::string dd = "hidden_size=" + std::to_string(d);
  const std::string qkvs =
      "(num_attention_heads + 2 x num_key_value_heads) x head_dim=" + std::to_string(q + 2 * kv) + ", " + dd;
  const std::string fs = "2 x intermediate_size=" + std::to_string(2 * ff) + ", " + dd;
  ModelWeights w;
  w.tok_emb = pick.take(p + "embed_tokens.weight", {V, d}, "vocab_size, hidden_size");
  for (int i = 0; i < cfg.n_layers; ++i) {
    const std::string l = p + "layers." + std::to_string(i) + ".";
    LayerWeights L;
    L.attn_norm_w = pick.take(l + "input_layernorm.weight", {d}, dd);
    const WeightTensor qkv = pick.take(l + "self_attn.qkv_proj.weight", {q + 2 * kv, d}, qkvs);
    L.wq = take_row_range(qkv, 0, q);
    L.wk = take_row_range(qkv, q, kv);
    L.wv = take_row_range(qkv, q + kv, kv);
    L.wo = pick.take(l + "self_attn.o_proj.weight", {d, q}, "hidden_size, num_attention_heads x head_dim");
    L.mlp_norm_w = pick.take(l + "post_attention_layernorm.weight", {d}, dd);
    const WeightTensor gate_up = pick.take(l + "mlp.gate_up_proj.weight", {2 * ff, d}, fs);
    L.w_gate = take_row_range(gate_up, 0, ff);
    L.w_up = take_row_range(gate_up, ff, ff);
    L.w_down = pick.take(l + "mlp.down_proj.weight", {d, ff}, dd + ", intermediate_size=" + std::to_string(ff));
    w.layers.push_back(std::move(L));
  }
  w.final_norm_w = pick.take(p + "norm.weight", {d}, dd);
  w.lm_head = pick.take_head("lm_head.weight", w.tok_emb, "vocab_size, hidden_size");
  pick.check_all_used([](const std::string& n) { return n.ends_with(".rotary_emb.inv_freq"); });
  return w;
}

}  // namespace kvscope
