// Model weights after the architecture mapping and load-time fix-ups, in one
// canonical layout every backend reads: linear weights are [out, in] row-major
// (PyTorch's nn.Linear), K/V are split from Q, and missing parts are empty.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "io/dtype.h"
#include "io/ggml_type.h"

namespace kvscope {

// One tensor: a view into a mapped checkpoint, a buffer a fix-up produced, or
// a deterministic random fill (benchmark shapes) that each backend generates
// where it lives, so a 7B shape never needs host memory.
struct WeightTensor {
  std::vector<int64_t> shape;
  DType dtype = DType::F32;
  // Set when `data` holds a GGUF file's blocks of this type (a matrix whose
  // rows are whole blocks: quantized, F16 or BF16); `dtype` is then F32,
  // what they dequantize to, bit for bit as gguf-py does (io/gguf_dequant.h).
  std::optional<GgmlType> blocks;
  const std::byte* data = nullptr;
  std::shared_ptr<const void> keepalive;  // the mapping or the owned buffer
  bool random = false;                    // uniform in [-scale, scale] from Philox(seed, id)
  uint64_t random_seed = 0;
  uint32_t random_id = 0;
  float random_scale = 0.f;
  float random_offset = 0.f;              // added to every element (norm weights use 1)

  bool empty() const { return shape.empty(); }
  int64_t numel() const;
  int64_t rows() const { return shape.empty() ? 0 : shape[0]; }
  int64_t cols() const { return shape.size() < 2 ? 1 : shape[1]; }
  // Bytes of one row as stored (blocks, or cols x the dtype's size).
  std::size_t row_bytes() const;
  // Bytes of the whole tensor as stored; 0 for a random fill.
  std::size_t stored_bytes() const;
  std::string shape_string() const;
  // All elements as float (converted or generated).
  void to_f32(float* dst) const;
  std::vector<float> to_f32() const;

  static WeightTensor owned_f32(std::vector<float> values, std::vector<int64_t> shape);
  static WeightTensor random_uniform(std::vector<int64_t> shape, uint64_t seed, uint32_t id, float scale,
                                     float offset = 0.f);
};

// Element i of a random tensor; the CUDA backend's generator matches it.
float random_weight_value(uint64_t seed, uint32_t id, int64_t i, float scale, float offset);

struct LayerWeights {
  WeightTensor attn_norm_w, attn_norm_b;  // b empty for RMSNorm
  WeightTensor wq, bq;                    // [heads*hd, d], [heads*hd]
  WeightTensor wk, bk, wv, bv;            // [kv_heads*hd, d]; empty in MLKV layers that own no KV
  WeightTensor wo, bo;                    // [d, heads*hd]
  WeightTensor mlp_norm_w, mlp_norm_b;    // unused (empty) never: every supported arch has two norms
  WeightTensor w_up, b_up;                // [ff, d]
  WeightTensor w_gate, b_gate;            // [ff, d]; empty unless gated (SwiGLU)
  WeightTensor w_down, b_down;            // [d, ff]
  // Gemma 3 only (empty elsewhere): RMSNorm weights over one head of q and
  // of k [head_dim], and over the attention and MLP outputs [d]. Gemma's
  // (1 + w) is folded in at load, so every norm weight here multiplies.
  WeightTensor q_norm_w, k_norm_w;
  WeightTensor post_attn_norm_w, post_mlp_norm_w;
};

struct ModelWeights {
  WeightTensor tok_emb;  // [vocab, d]
  WeightTensor pos_emb;  // [positions, d] (learned positions only)
  std::vector<LayerWeights> layers;
  WeightTensor final_norm_w, final_norm_b;  // both empty where the model has none (OPT's post-norm)
  WeightTensor lm_head;  // [vocab, d]; shares tok_emb's data when tied
  WeightTensor lm_head_b;  // [vocab] (GPT-J); empty elsewhere
  // OPT's projections when word_embed_proj_dim != hidden (e = that width;
  // tok_emb and lm_head are then [vocab, e]); empty elsewhere.
  WeightTensor project_in;   // [d, e]
  WeightTensor project_out;  // [e, d]
  // Parameters stored (a tied head counted once).
  int64_t numel() const;
  // Their bytes as stored (GGUF blocks at their size), the same way.
  std::size_t stored_bytes() const;
  // Parameters by how they are stored, the same way: a GGUF block type
  // ("Q4_K"), or the dtype of values held as such ("F32", "BF16"; a GGUF
  // norm dequantized on load is "F32"); "random" for a --shape fill.
  std::map<std::string, int64_t> parameters_by_storage() const;
};

}  // namespace kvscope
