// OPT: learned positions (a table of max_position_embeddings + 2 rows, read
// at position + 2), LayerNorm before each block or after each residual add,
// ReLU MLP, biases unless enable_bias is false, tied head, and for
// word_embed_proj_dim != hidden_size an embedding of that width with
// project_in / project_out around the decoder. Checkpoints saved from
// OPTForCausalLM name the decoder "model.decoder."; those saved from OPTModel
// (the original facebook/opt-* files) "decoder.".
#include <string>

#include "common/error.h"
#include "model/architectures.h"

namespace kvscope {
namespace {

WeightTensor filled(int64_t n, float v) { return WeightTensor::owned_f32(std::vector<float>(n, v), {n}); }

}  // namespace

ModelWeights map_opt_weights(TensorPicker& pick, const ModelConfig& cfg) {
  pick.refuse_stored_mlkv();
  const std::string p = pick.has("model.decoder.embed_tokens.weight") ? "model.decoder." : "decoder.";
  const int64_t d = cfg.hidden, ff = cfg.intermediate, V = cfg.vocab_size, e = cfg.embed_width();
  const std::string dd = "hidden_size=" + std::to_string(d);
  const std::string fs = dd + ", ffn_dim=" + std::to_string(ff);
  const bool bias = cfg.qkv_bias;
  // layer_norm_elementwise_affine false: the norms have no parameters, which
  // is the same as weight 1 and bias 0.
  const bool affine = cfg.norm_affine;
  auto norm = [&](const std::string& name, WeightTensor& wt, WeightTensor& bt) {
    if (affine) {
      wt = pick.take(name + ".weight", {d}, dd);
      bt = pick.take(name + ".bias", {d}, dd);
    } else {
      wt = filled(d, 1.f);
      bt = filled(d, 0.f);
    }
  };
  ModelWeights w;
  w.tok_emb = pick.take(p + "embed_tokens.weight", {V, e}, "vocab_size, word_embed_proj_dim");
  w.pos_emb = pick.take(p + "embed_positions.weight", {cfg.max_positions + cfg.position_offset, d},
                        "max_position_embeddings + 2, hidden_size");
  if (cfg.word_embed_dim > 0) {
    w.project_in = pick.take(p + "project_in.weight", {d, e}, "hidden_size, word_embed_proj_dim");
    w.project_out = pick.take(p + "project_out.weight", {e, d}, "word_embed_proj_dim, hidden_size");
  }
  for (int i = 0; i < cfg.n_layers; ++i) {
    const std::string l = p + "layers." + std::to_string(i) + ".";
    LayerWeights L;
    norm(l + "self_attn_layer_norm", L.attn_norm_w, L.attn_norm_b);
    L.wq = pick.take(l + "self_attn.q_proj.weight", {d, d}, dd);
    L.wk = pick.take(l + "self_attn.k_proj.weight", {d, d}, dd);
    L.wv = pick.take(l + "self_attn.v_proj.weight", {d, d}, dd);
    L.wo = pick.take(l + "self_attn.out_proj.weight", {d, d}, dd);
    if (bias) {
      L.bq = pick.take(l + "self_attn.q_proj.bias", {d}, dd);
      L.bk = pick.take(l + "self_attn.k_proj.bias", {d}, dd);
      L.bv = pick.take(l + "self_attn.v_proj.bias", {d}, dd);
      L.bo = pick.take(l + "self_attn.out_proj.bias", {d}, dd);
    }
    norm(l + "final_layer_norm", L.mlp_norm_w, L.mlp_norm_b);
    L.w_up = pick.take(l + "fc1.weight", {ff, d}, fs);
    L.w_down = pick.take(l + "fc2.weight", {d, ff}, fs);
    if (bias) {
      L.b_up = pick.take(l + "fc1.bias", {ff}, fs);
      L.b_down = pick.take(l + "fc2.bias", {d}, dd);
    }
    w.layers.push_back(std::move(L));
  }
  if (!cfg.post_norm) norm(p + "final_layer_norm", w.final_norm_w, w.final_norm_b);
  w.lm_head = pick.take_head("lm_head.weight", w.tok_emb, "vocab_size, word_embed_proj_dim");
  pick.check_all_used([](const std::string&) { return false; });
  return w;
}

}  // namespace kvscope
