// GPT-NeoX (Pythia): LayerNorm, exact gelu, partial rotary, parallel
// residual on or off, untied head. query_key_value is fused per head as
// [heads][q, k, v][head_dim] and split into Q, K and V at load.
#include <string>

#include "common/error.h"
#include "model/architectures.h"

namespace kvscope {

ModelWeights map_gpt_neox_weights(TensorPicker& pick, const ModelConfig& cfg) {
  pick.refuse_stored_mlkv();
  const std::string p = "gpt_neox.";
  const int64_t d = cfg.hidden, ff = cfg.intermediate, V = cfg.vocab_size, H = cfg.n_heads, hd = cfg.head_dim;
  const std::string dd = "hidden_size=" + std::to_string(d);
  ModelWeights w;
  w.tok_emb = pick.take(p + "embed_in.weight", {V, d}, "vocab_size, hidden_size");
  for (int i = 0; i < cfg.n_layers; ++i) {
    const std::string l = p + "layers." + std::to_string(i) + ".";
    LayerWeights L;
    L.attn_norm_w = pick.take(l + "input_layernorm.weight", {d}, dd);
    L.attn_norm_b = pick.take(l + "input_layernorm.bias", {d}, dd);
    const WeightTensor qkv = pick.take(l + "attention.query_key_value.weight", {3 * d, d}, dd);
    std::vector<int64_t> rows[3];
    for (int64_t h = 0; h < H; ++h)
      for (int part = 0; part < 3; ++part)
        for (int64_t r = 0; r < hd; ++r) rows[part].push_back(h * 3 * hd + part * hd + r);
    L.wq = take_rows(qkv, rows[0]);
    L.wk = take_rows(qkv, rows[1]);
    L.wv = take_rows(qkv, rows[2]);
    if (cfg.qkv_bias) {
      const WeightTensor qkv_b = pick.take(l + "attention.query_key_value.bias", {3 * d}, dd);
      L.bq = take_rows(qkv_b, rows[0]);
      L.bk = take_rows(qkv_b, rows[1]);
      L.bv = take_rows(qkv_b, rows[2]);
    }
    L.wo = pick.take(l + "attention.dense.weight", {d, d}, dd);
    if (cfg.o_bias) L.bo = pick.take(l + "attention.dense.bias", {d}, dd);
    L.mlp_norm_w = pick.take(l + "post_attention_layernorm.weight", {d}, dd);
    L.mlp_norm_b = pick.take(l + "post_attention_layernorm.bias", {d}, dd);
    const std::string fs = dd + ", intermediate_size=" + std::to_string(ff);
    L.w_up = pick.take(l + "mlp.dense_h_to_4h.weight", {ff, d}, fs);
    L.b_up = pick.take(l + "mlp.dense_h_to_4h.bias", {ff}, fs);
    L.w_down = pick.take(l + "mlp.dense_4h_to_h.weight", {d, ff}, fs);
    L.b_down = pick.take(l + "mlp.dense_4h_to_h.bias", {d}, fs);
    w.layers.push_back(std::move(L));
  }
  w.final_norm_w = pick.take(p + "final_layer_norm.weight", {d}, dd);
  w.final_norm_b = pick.take(p + "final_layer_norm.bias", {d}, dd);
  w.lm_head = pick.take_head("embed_out.weight", w.tok_emb, "vocab_size, hidden_size");
  pick.check_all_used([](const std::string& n) {
    return n.ends_with(".attention.bias") || n.ends_with(".attention.masked_bias") ||
           n.ends_with(".rotary_emb.inv_freq");
  });
  return w;
}

}  // namespace kvscope
