#include "model/shapes.h"

#include <algorithm>
#include <cmath>

#include "common/error.h"

namespace kvscope {

std::vector<std::string> known_shapes() {
  return {"gpt2",       "pythia-160m", "pythia-410m", "qwen2-0.5b", "llama-3.2-1b", "llama-2-7b",
          "llama-3-8b", "opt-125m",    "opt-6.7b",    "gpt-j-6b",   "phi-3-mini",   "mpt-7b"};
}

ModelConfig shape_config(const std::string& name) {
  ModelConfig c;
  c.dtype = DType::F16;
  if (name == "gpt2") {
    c.model_type = "gpt2"; c.arch = Arch::GPT2;
    c.vocab_size = 50257; c.hidden = 768; c.n_layers = 12; c.n_heads = 12; c.n_kv_heads = 12;
    c.intermediate = 3072; c.max_positions = 1024;
    c.norm = NormKind::LayerNorm; c.act = Activation::GeluTanh; c.gated_mlp = false; c.rope = RopeStyle::None;
    c.learned_positions = true; c.qkv_bias = c.o_bias = c.mlp_bias = true; c.tied_embeddings = true;
  } else if (name == "pythia-160m" || name == "pythia-410m") {
    const bool big = name == "pythia-410m";
    c.model_type = "gpt_neox"; c.arch = Arch::GPTNeoX;
    c.vocab_size = 50304; c.hidden = big ? 1024 : 768; c.n_layers = big ? 24 : 12;
    c.n_heads = big ? 16 : 12; c.n_kv_heads = c.n_heads; c.intermediate = 4 * c.hidden; c.max_positions = 2048;
    c.norm = NormKind::LayerNorm; c.act = Activation::GeluErf; c.gated_mlp = false; c.parallel_residual = true;
    c.rope = RopeStyle::Half; c.qkv_bias = c.o_bias = c.mlp_bias = true; c.tied_embeddings = false;
  } else if (name == "qwen2-0.5b") {
    c.model_type = "qwen2"; c.arch = Arch::Llama;
    c.vocab_size = 151936; c.hidden = 896; c.n_layers = 24; c.n_heads = 14; c.n_kv_heads = 2; c.head_dim = 64;
    c.intermediate = 4864; c.max_positions = 32768; c.rope_theta = 1000000.0; c.norm_eps = 1e-6;
    c.qkv_bias = true; c.tied_embeddings = true; c.dtype = DType::BF16;
  } else if (name == "llama-3.2-1b") {
    c.model_type = "llama"; c.arch = Arch::Llama;
    c.vocab_size = 128256; c.hidden = 2048; c.n_layers = 16; c.n_heads = 32; c.n_kv_heads = 8; c.head_dim = 64;
    c.intermediate = 8192; c.max_positions = 131072; c.rope_theta = 500000.0; c.norm_eps = 1e-5;
    c.rope_scaling = {RopeScaling::Type::Llama3, 32.0, 1.0, 4.0, 8192};
    c.tied_embeddings = true; c.dtype = DType::BF16;
  } else if (name == "llama-2-7b") {
    c.model_type = "llama"; c.arch = Arch::Llama;
    c.vocab_size = 32000; c.hidden = 4096; c.n_layers = 32; c.n_heads = 32; c.n_kv_heads = 32;
    c.intermediate = 11008; c.max_positions = 4096; c.norm_eps = 1e-5;
  } else if (name == "llama-3-8b") {
    c.model_type = "llama"; c.arch = Arch::Llama;
    c.vocab_size = 128256; c.hidden = 4096; c.n_layers = 32; c.n_heads = 32; c.n_kv_heads = 8;
    c.intermediate = 14336; c.max_positions = 8192; c.rope_theta = 500000.0; c.norm_eps = 1e-5; c.dtype = DType::BF16;
  } else if (name == "opt-125m" || name == "opt-6.7b") {
    const bool big = name == "opt-6.7b";
    c.model_type = "opt";
    c.arch = Arch::OPT;
    c.vocab_size = 50272;
    c.hidden = big ? 4096 : 768;
    c.n_layers = big ? 32 : 12;
    c.n_heads = big ? 32 : 12;
    c.n_kv_heads = c.n_heads;
    c.intermediate = 4 * c.hidden;
    c.max_positions = 2048;
    c.norm = NormKind::LayerNorm;
    c.act = Activation::Relu;
    c.gated_mlp = false;
    c.rope = RopeStyle::None;
    c.learned_positions = true;
    c.position_offset = 2;
    c.qkv_bias = c.o_bias = c.mlp_bias = true;
    c.tied_embeddings = true;
  } else if (name == "gpt-j-6b") {
    c.model_type = "gptj";
    c.arch = Arch::GPTJ;
    c.vocab_size = 50400;
    c.hidden = 4096;
    c.n_layers = 28;
    c.n_heads = 16;
    c.n_kv_heads = 16;
    c.intermediate = 16384;
    c.max_positions = 2048;
    c.norm = NormKind::LayerNorm;
    c.act = Activation::GeluTanh;
    c.gated_mlp = false;
    c.parallel_residual = true;
    c.rope = RopeStyle::Half;
    c.rotary_dims = 64;
    c.mlp_bias = true;
    c.lm_head_bias = true;
  } else if (name == "mpt-7b") {
    c.model_type = "mpt";
    c.arch = Arch::MPT;
    c.vocab_size = 50432;
    c.hidden = 4096;
    c.n_layers = 32;
    c.n_heads = 32;
    c.n_kv_heads = 32;
    c.intermediate = 16384;
    c.max_positions = 2048;
    c.norm = NormKind::LayerNorm;
    c.act = Activation::GeluErf;
    c.gated_mlp = false;
    c.rope = RopeStyle::None;
    c.tied_embeddings = true;
    c.alibi_slopes = mpt_alibi_slopes(32, 8.0);
    c.dtype = DType::BF16;
  } else if (name == "phi-3-mini") {
    c.model_type = "phi3";
    c.arch = Arch::Phi3;
    c.vocab_size = 32064;
    c.hidden = 3072;
    c.n_layers = 32;
    c.n_heads = 32;
    c.n_kv_heads = 32;
    c.intermediate = 8192;
    c.max_positions = 4096;
    c.sliding_window = 2047;
    c.dtype = DType::BF16;
  } else {
    std::string list;
    for (const auto& s : known_shapes()) list += (list.empty() ? "" : ", ") + s;
    throw Error::setting("shape", "unknown shape '" + name + "' (known: " + list + ")");
  }
  if (c.head_dim == 0) c.head_dim = c.hidden / c.n_heads;
  c.n_kv_layers = c.n_layers;
  if (c.rotary_dims == 0)
    c.rotary_dims = c.rope == RopeStyle::None ? 0 : (c.arch == Arch::GPTNeoX ? c.head_dim / 4 : c.head_dim);
  return c;
}

ModelWeights random_weights(const ModelConfig& c, uint64_t seed) {
  uint32_t id = 0;
  const float s = 0.02f * std::sqrt(3.0f);  // uniform with standard deviation 0.02
  auto mat = [&](int64_t r, int64_t k) { return WeightTensor::random_uniform({r, k}, seed, id++, s); };
  auto vec = [&](int64_t n) { return WeightTensor::random_uniform({n}, seed, id++, s); };
  auto ones = [&](int64_t n) { return WeightTensor::random_uniform({n}, seed, id++, 0.f, 1.f); };
  const int64_t d = c.hidden, ff = c.intermediate;
  const bool ln = c.norm == NormKind::LayerNorm;
  ModelWeights w;
  w.tok_emb = mat(c.vocab_size, d);
  if (c.learned_positions) w.pos_emb = mat(c.max_positions + c.position_offset, d);
  const auto owners = c.owning_layers();
  for (int l = 0; l < c.n_layers; ++l) {
    const bool owns = std::find(owners.begin(), owners.end(), l) != owners.end();
    LayerWeights L;
    L.attn_norm_w = ones(d);
    if (ln) L.attn_norm_b = vec(d);
    L.wq = mat(c.q_dim(), d);
    if (c.qkv_bias) L.bq = vec(c.q_dim());
    if (owns) {
      L.wk = mat(c.kv_dim(), d);
      L.wv = mat(c.kv_dim(), d);
      if (c.qkv_bias) {
        L.bk = vec(c.kv_dim());
        L.bv = vec(c.kv_dim());
      }
    }
    L.wo = mat(d, c.q_dim());
    if (c.o_bias) L.bo = vec(d);
    if (c.arch == Arch::GPTJ) {  // one norm feeds both branches
      L.mlp_norm_w = L.attn_norm_w;
      L.mlp_norm_b = L.attn_norm_b;
    } else {
      L.mlp_norm_w = ones(d);
      if (ln) L.mlp_norm_b = vec(d);
    }
    L.w_up = mat(ff, d);
    if (c.gated_mlp) L.w_gate = mat(ff, d);
    L.w_down = mat(d, ff);
    if (c.mlp_bias) {
      L.b_up = vec(ff);
      if (c.gated_mlp) L.b_gate = vec(ff);
      L.b_down = vec(d);
    }
    w.layers.push_back(std::move(L));
  }
  if (!c.post_norm) {  // a post-norm model (OPT-350m) has no final norm
    w.final_norm_w = ones(d);
    if (ln) w.final_norm_b = vec(d);
  }
  w.lm_head = c.tied_embeddings ? w.tok_emb : mat(c.vocab_size, d);
  if (c.lm_head_bias) w.lm_head_b = vec(c.vocab_size);
  return w;
}

}  // namespace kvscope
