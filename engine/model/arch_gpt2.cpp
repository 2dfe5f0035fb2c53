// GPT-2 (and Cerebras-GPT): learned positions, LayerNorm, gelu_new, tied
// head. Its Conv1D layers store weights as [in, out]: transposed at load, and
// the fused c_attn is split into Q, K and V.
#include <string>

#include "model/architectures.h"

namespace kvscope {

ModelWeights map_gpt2_weights(TensorPicker& pick, const ModelConfig& cfg) {
  // Checkpoints saved from GPT2LMHeadModel prefix names with "transformer.";
  // the original OpenAI conversions do not.
  const std::string p = pick.has("transformer.wte.weight") ? "transformer." : "";
  const int64_t d = cfg.hidden, ff = cfg.intermediate, V = cfg.vocab_size, P = cfg.max_positions;
  const std::string dd = "n_embd=" + std::to_string(d);
  ModelWeights w;
  w.tok_emb = pick.take(p + "wte.weight", {V, d}, "vocab_size, n_embd");
  w.pos_emb = pick.take(p + "wpe.weight", {P, d}, "n_positions, n_embd");
  for (int i = 0; i < cfg.n_layers; ++i) {
    const std::string l = p + "h." + std::to_string(i) + ".";
    LayerWeights L;
    L.attn_norm_w = pick.take(l + "ln_1.weight", {d}, dd);
    L.attn_norm_b = pick.take(l + "ln_1.bias", {d}, dd);
    const WeightTensor qkv = transpose_2d(pick.take(l + "attn.c_attn.weight", {d, 3 * d}, dd));
    const WeightTensor qkv_b = pick.take(l + "attn.c_attn.bias", {3 * d}, dd);
    L.wq = take_row_range(qkv, 0, d);
    L.wk = take_row_range(qkv, d, d);
    L.wv = take_row_range(qkv, 2 * d, d);
    L.bq = take_row_range(qkv_b, 0, d);
    L.bk = take_row_range(qkv_b, d, d);
    L.bv = take_row_range(qkv_b, 2 * d, d);
    L.wo = transpose_2d(pick.take(l + "attn.c_proj.weight", {d, d}, dd));
    L.bo = pick.take(l + "attn.c_proj.bias", {d}, dd);
    L.mlp_norm_w = pick.take(l + "ln_2.weight", {d}, dd);
    L.mlp_norm_b = pick.take(l + "ln_2.bias", {d}, dd);
    L.w_up = transpose_2d(pick.take(l + "mlp.c_fc.weight", {d, ff}, dd + ", n_inner=" + std::to_string(ff)));
    L.b_up = pick.take(l + "mlp.c_fc.bias", {ff}, "n_inner=" + std::to_string(ff));
    L.w_down = transpose_2d(pick.take(l + "mlp.c_proj.weight", {ff, d}, dd + ", n_inner=" + std::to_string(ff)));
    L.b_down = pick.take(l + "mlp.c_proj.bias", {d}, dd);
    w.layers.push_back(std::move(L));
  }
  w.final_norm_w = pick.take(p + "ln_f.weight", {d}, dd);
  w.final_norm_b = pick.take(p + "ln_f.bias", {d}, dd);
  w.lm_head = pick.take_head("lm_head.weight", w.tok_emb, "vocab_size, n_embd");
  // Causal-mask buffers older transformers versions saved with the weights.
  pick.check_all_used([](const std::string& n) {
    return n.ends_with(".attn.bias") || n.ends_with(".attn.masked_bias");
  });
  return w;
}

}  // namespace kvscope
