// MPT: no position table (ALiBi, in the attention), fused Wqkv ([q | k | v]
// rows) split at load, LayerNorms with a weight only, an MLP of up_proj and
// down_proj, no biases, tied head.
#include <numeric>
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
  std::vector<int64_t> rows[3];
  for (int part = 0; part < 3; ++part) {
    rows[part].resize(static_cast<std::size_t>(d));
    std::iota(rows[part].begin(), rows[part].end(), part * d);
  }
  for (int i = 0; i < cfg.n_layers; ++i) {
    const std::string l = p + "blocks." + std::to_string(i) + ".";
    LayerWeights L;
    L.attn_norm_w = pick.take(l + "norm_1.weight", {d}, dd);
    const WeightTensor qkv = pick.take(l + "attn.Wqkv.weight", {3 * d, d}, dd);
    L.wq = take_rows(qkv, rows[0]);
    L.wk = take_rows(qkv, rows[1]);
    L.wv = take_rows(qkv, rows[2]);
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
