// MPT: no position table (ALiBi, in the attention), fused Wqkv ([q | k | v]
// rows) split at load, LayerNorms with a weight only, an MLP of up_proj and
// down_proj, no biases, tied head.
#include <string>

#include "common/error.h"
#include "model/architectures.h"

namespace kvscope {

ModelWeights map_mpt_weights(TensorPicker& pick, const ModelConfig& cfg) {
  pick.refuse_stored_mlkv();
  const std::string p = "transformer.";
  const int64_t d = cfg.hidden, ff = cfg.intermediate, V = cfg.vocab_size;
  const std::string dd = "d_model=" + std::to_string(d);
  ModelWeights w;
  w.tok_emb = pick.take(p + "wte.weight", {V, d}, "vocab_size, d_model");
  for (int i = 0; i < cfg.n_layers; ++i) {
    const std::string l = p + "blocks." + std::to_string(i) + ".";
    LayerWeights L;
    L.attn_norm_w = pick.take(l + "norm_1.weight", {d}, dd);
    const WeightTensor qkv = pick.take(l + "attn.Wqkv.weight", {3 * d, d}, dd);
    L.wq = take_row_range(qkv, 0, d);
    L.wk = take_row_range(qkv, d, d);
    L.wv = take_row_range(qkv, 2 * d, d);
    L.wo = pick.take(l + "attn.out_proj.weight", {d, d}, dd);
    L.mlp_norm_w = pick.take(l + "norm_2.weight", {d}, dd);
    L.w_up = pick.take(l + "ffn.up_proj.weight", {ff, d}, dd + " (the MLP is 4 x d_model)");
    L.w_down = pick.take(l + "ffn.down_proj.weight", {d, ff}, dd + " (the MLP is 4 x d_model)");
    w.layers.push_back(std::move(L));
  }
  w.final_norm_w = pick.take(p + "norm_f.weight", {d}, dd);
  w.lm_head = pick.take_head("lm_head.weight", w.tok_emb, "vocab_size, d_model");
  pick.check_all_used([](const std::string&) { return false; });
  return w;
}

}  // namespace kvscope
