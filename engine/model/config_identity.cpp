#include "model/config_identity.h"

#include "common/aggregate_fields.h"

namespace kvscope {

// Written for these counts: a field added to ModelConfig or RopeScaling
// fails the build here until it is hashed below (or named as left out).
static_assert(aggregate_field_count<ModelConfig>() == 44, "ModelConfig changed: add the new field to the identity");
static_assert(aggregate_field_count<RopeScaling>() == 5, "RopeScaling changed: add the new field to the identity");

nlohmann::json model_config_identity(const ModelConfig& c) {
  // Left out: dtype, the stored weights' type, which only sizes memory
  // figures (the weights themselves are the model files' hashes), so a GGUF
  // file and the folder it was converted from hash alike.
  nlohmann::json j = {{"model_type", c.model_type},
                      {"arch", arch_name(c.arch)},
                      {"vocab_size", c.vocab_size},
                      {"hidden", c.hidden},
                      {"n_layers", c.n_layers},
                      {"n_heads", c.n_heads},
                      {"n_kv_heads", c.n_kv_heads},
                      {"n_kv_layers", c.n_kv_layers},
                      {"head_dim", c.head_dim},
                      {"intermediate", c.intermediate},
                      {"max_positions", c.max_positions},
                      {"sliding_window", c.sliding_window},
                      {"sliding_layers", c.sliding_layers},
                      {"norm", c.norm == NormKind::LayerNorm ? "layernorm" : "rmsnorm"},
                      {"norm_eps", c.norm_eps},
                      {"act", int(c.act)},
                      {"gated_mlp", c.gated_mlp},
                      {"parallel_residual", c.parallel_residual},
                      {"rope", int(c.rope)},
                      {"rotary_dims", c.rotary_dims},
                      {"rope_theta", c.rope_theta},
                      {"rope_scaling",
                       {{"type", int(c.rope_scaling.type)},
                        {"factor", c.rope_scaling.factor},
                        {"low_freq_factor", c.rope_scaling.low_freq_factor},
                        {"high_freq_factor", c.rope_scaling.high_freq_factor},
                        {"original_max_positions", c.rope_scaling.original_max_positions}}},
                      {"rope_local_theta", c.rope_local_theta},
                      {"learned_positions", c.learned_positions},
                      {"position_offset", c.position_offset},
                      {"qkv_bias", c.qkv_bias},
                      {"o_bias", c.o_bias},
                      {"mlp_bias", c.mlp_bias},
                      {"tied_embeddings", c.tied_embeddings},
                      {"embed_scale", c.embed_scale},
                      {"qk_norm", c.qk_norm},
                      {"sandwich_norm", c.sandwich_norm},
                      {"query_pre_attn_scalar", c.query_pre_attn_scalar},
                      {"eos_ids", c.eos_ids},
                      {"bos_id", c.bos_id}};
  // The fields of architectures added later, each only where it is not its
  // default, so the hashes of models that do not use them stay as they were.
  const ModelConfig defaults;
  if (!c.rope_freq_factors.empty()) j["rope_freq_factors"] = c.rope_freq_factors;
  if (c.post_norm != defaults.post_norm) j["post_norm"] = c.post_norm;
  if (c.word_embed_dim != defaults.word_embed_dim) j["word_embed_dim"] = c.word_embed_dim;
  if (c.norm_affine != defaults.norm_affine) j["norm_affine"] = c.norm_affine;
  if (c.clip_qkv != defaults.clip_qkv) j["clip_qkv"] = c.clip_qkv;
  if (!c.alibi_slopes.empty()) j["alibi_slopes"] = c.alibi_slopes;
  if (c.lm_head_bias != defaults.lm_head_bias) j["lm_head_bias"] = c.lm_head_bias;
  if (c.softmax_scale != defaults.softmax_scale) j["softmax_scale"] = c.softmax_scale;
  return j;
}

}  // namespace kvscope
