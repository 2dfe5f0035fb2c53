// ModelConfig: everything the backends need to know about an architecture,
// as plain flags, so that no backend code branches on a model_type string.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "io/dtype.h"

namespace kvscope {

enum class Arch { GPT2, GPTNeoX, Llama, Gemma3, GPTJ, OPT, Phi3, MPT };
enum class NormKind { LayerNorm, RMSNorm };
enum class Activation { GeluTanh, GeluErf, Silu, Relu };
enum class RopeStyle { None, Half };  // Half = rotate_half pairs (i, i + rotary_dims/2), as NeoX and Llama

struct RopeScaling {
  enum class Type { None, Linear, Llama3 } type = Type::None;
  double factor = 1.0;
  double low_freq_factor = 1.0;
  double high_freq_factor = 4.0;
  int original_max_positions = 0;
};

struct ModelConfig {
  std::string model_type;  // as in config.json ("gpt2", "gpt_neox", "llama", "mistral", "qwen2", "opt", ...)
  Arch arch = Arch::Llama;

  int vocab_size = 0;
  int hidden = 0;
  int n_layers = 0;
  int n_heads = 0;
  int n_kv_heads = 0;   // KV heads per owning layer (g)
  int n_kv_layers = 0;  // layers that own KV (m); MLKV when < n_layers
  int head_dim = 0;
  int intermediate = 0;
  int max_positions = 0;
  int sliding_window = 0;  // 0: none (attention sees the whole cache)
  // Which layers slide (Gemma 3: five of every six); empty: every layer,
  // when sliding_window > 0. A sliding layer's query at position p sees the
  // keys at positions p - sliding_window < q <= p (transformers' mask).
  std::vector<uint8_t> sliding_layers;

  NormKind norm = NormKind::RMSNorm;
  double norm_eps = 1e-5;
  Activation act = Activation::Silu;
  bool gated_mlp = true;           // SwiGLU: down(act(gate(x)) * up(x))
  bool parallel_residual = false;  // x + attn(ln1(x)) + mlp(ln2(x))
  // OPT with do_layer_norm_before false (OPT-350m): each block's norm comes
  // after its residual add (x = ln1(x + attn(x)); x = ln2(x + mlp(x))), and
  // the model has no final norm.
  bool post_norm = false;
  // OPT's word_embed_proj_dim where it differs from hidden: the embedding and
  // the head are this wide, projected in to hidden and out of it (no bias);
  // 0: no projection.
  int word_embed_dim = 0;
  // OPT's layer_norm_elementwise_affine false: LayerNorms without weight and
  // bias (the mapping fills in 1 and 0).
  bool norm_affine = true;
  // MPT's attn_config.clip_qkv: q, k and v clamped to [-c, c] after their
  // projection; 0: none.
  float clip_qkv = 0.f;

  RopeStyle rope = RopeStyle::Half;
  int rotary_dims = 0;  // leading dims of each head that are rotated
  double rope_theta = 10000.0;
  RopeScaling rope_scaling;
  // Per-frequency divisors of the rotary frequencies (a GGUF's
  // rope_freqs.weight: llama.cpp's rendering of Llama 3's rope_scaling);
  // empty: none. rotary_dims / 2 of them.
  std::vector<float> rope_freq_factors;
  // Gemma 3: sliding layers rotate with their own base and no scaling
  // (transformers' rope_parameters["sliding_attention"]); 0: as the others.
  double rope_local_theta = 0.0;
  // ALiBi (MPT): no rotation; each head adds slope * (key position - query
  // position) to its attention logits. One slope per query head; empty: none.
  // What "position" means after eviction follows --positions (policies.md).
  std::vector<float> alibi_slopes;
  bool learned_positions = false;  // GPT-2's wpe
  int position_offset = 0;         // added to positions before the wpe lookup (OPT uses 2)

  bool qkv_bias = false;
  bool o_bias = false;
  bool mlp_bias = false;
  bool tied_embeddings = false;
  bool lm_head_bias = false;  // GPT-J's head adds a bias

  // Gemma 3's departures from Llama (all off elsewhere):
  double embed_scale = 1.0;         // the embedding is multiplied by float(embed_scale) (sqrt(hidden))
  bool qk_norm = false;             // RMSNorm over each head of q and k, before RoPE
  bool sandwich_norm = false;       // RMSNorm on the attention and MLP outputs before each residual add
  double query_pre_attn_scalar = 0; // attention scale = query_pre_attn_scalar^-0.5; 0: head_dim^-0.5
  double softmax_scale = 0;         // MPT: the attention scale itself (a Python float); 0: none

  DType dtype = DType::F32;  // dtype of the stored weights (for memory figures)
  std::vector<int> eos_ids;
  int bos_id = -1;

  int q_dim() const { return n_heads * head_dim; }
  // Width of the embedding rows and of the head's input (OPT's projection).
  int embed_width() const { return word_embed_dim > 0 ? word_embed_dim : hidden; }
  // The sliding window layer `layer` attends through (0: the whole cache).
  int window_of(int layer) const;
  // Whether `layer` rotates with rope_local_theta (a sliding layer of a
  // model that has a local base).
  bool uses_local_rope(int layer) const;
  // Whether every layer attends alike (same window, same RoPE): what
  // sharing KV across layers (MLKV) needs.
  bool layers_alike() const;
  // The factor q.k is multiplied by before the softmax, as the model's fp32
  // code rounds it.
  float attention_scale() const;
  int kv_dim() const { return n_kv_heads * head_dim; }
  // Layers that own KV, as in the MLKV code: [0] + [floor((i+1)L/m) for i < m-1].
  std::vector<int> owning_layers() const;
  // For each layer, the index (into owning_layers()) of the KV it reads.
  std::vector<int> kv_source() const;
  // KV bytes per token: 2 * m * g * d_head * bytes (MLKV paper, Table 1).
  int64_t kv_bytes_per_token(std::size_t bytes_per_element) const;
  int64_t parameter_count() const;
  std::string describe_arch() const;
};

const char* arch_name(Arch a);
// MPT's ALiBi slopes for `heads` query heads (transformers' build_mpt_alibi_tensor).
std::vector<float> mpt_alibi_slopes(int heads, double bias_max);
std::vector<std::string> supported_model_types();

}  // namespace kvscope
