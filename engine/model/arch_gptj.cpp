// GPT-J: LayerNorm (ln_1 only: attention and MLP both read it, in
// parallel), untied head with a bias, no attention biases. RoPE turns
// interleaved pairs (2i, 2i + 1) of the first rotary_dim dims of each head;
// the rows of q_proj and k_proj are reordered here so those pairs become
// (i, i + rotary_dim / 2), NeoX's layout, which every backend rotates. The
// same permutation of q and k leaves every q.k, so every attention weight,
// unchanged; only the order of the dims inside a cached key differs from
// transformers' (and no policy reads that order).
#include <string>

#include "common/error.h"
#include "model/architectures.h"

namespace kvscope {
namespace {

// Row order of q/k_proj that puts each head's interleaved rotary pairs into
// halves: new row i < rot/2 is old row 2i, new row rot/2 + i is old 2i + 1;
// the unrotated rows keep their place.
std::vector<int64_t> interleaved_to_halves(int64_t heads, int64_t head_dim, int64_t rot) {
  std::vector<int64_t> rows;
  for (int64_t h = 0; h < heads; ++h) {
    const int64_t base = h * head_dim;
    for (int64_t i = 0; i < rot / 2; ++i) rows.push_back(base + 2 * i);
    for (int64_t i = 0; i < rot / 2; ++i) rows.push_back(base + 2 * i + 1);
    for (int64_t i = rot; i < head_dim; ++i) rows.push_back(base + i);
  }
  return rows;
}

}  // namespace

ModelWeights map_gptj_weights(TensorPicker& pick, const ModelConfig& cfg) {
  pick.refuse_stored_mlkv();
  const std::string p = "transformer.";
  const int64_t d = cfg.hidden, ff = cfg.intermediate, V = cfg.vocab_size;
  const std::string dd = "n_embd=" + std::to_string(d);
  const std::string fs = dd + ", n_inner=" + std::to_string(ff);
  const auto to_halves = interleaved_to_halves(cfg.n_heads, cfg.head_dim, cfg.rotary_dims);
  ModelWeights w;
  w.tok_emb = pick.take(p + "wte.weight", {V, d}, "vocab_size, n_embd");
  for (int i = 0; i < cfg.n_layers; ++i) {
    const std::string l = p + "h." + std::to_string(i) + ".";
    LayerWeights L;
    L.attn_norm_w = pick.take(l + "ln_1.weight", {d}, dd);
    L.attn_norm_b = pick.take(l + "ln_1.bias", {d}, dd);
    L.mlp_norm_w = L.attn_norm_w;  // one norm feeds both branches
    L.mlp_norm_b = L.attn_norm_b;
    L.wq = take_rows(pick.take(l + "attn.q_proj.weight", {d, d}, dd), to_halves);
    L.wk = take_rows(pick.take(l + "attn.k_proj.weight", {d, d}, dd), to_halves);
    L.wv = pick.take(l + "attn.v_proj.weight", {d, d}, dd);
    L.wo = pick.take(l + "attn.out_proj.weight", {d, d}, dd);
    L.w_up = pick.take(l + "mlp.fc_in.weight", {ff, d}, fs);
    L.b_up = pick.take(l + "mlp.fc_in.bias", {ff}, fs);
    L.w_down = pick.take(l + "mlp.fc_out.weight", {d, ff}, fs);
    L.b_down = pick.take(l + "mlp.fc_out.bias", {d}, dd);
    w.layers.push_back(std::move(L));
  }
  w.final_norm_w = pick.take(p + "ln_f.weight", {d}, dd);
  w.final_norm_b = pick.take(p + "ln_f.bias", {d}, dd);
  w.lm_head = pick.take_head("lm_head.weight", w.tok_emb, "vocab_size, n_embd");
  w.lm_head_b = pick.take("lm_head.bias", {V}, "vocab_size");
  // Buffers older transformers versions saved with the weights.
  pick.check_all_used(
      [](const std::string& n) { return n.ends_with(".attn.bias") || n.ends_with(".attn.masked_bias"); });
  return w;
}

}  // namespace kvscope
