// The model's weights on the device, uploaded once and shared (read-only) by
// every CudaBackend spawned from it: linear weights in fp16 (bf16 for BF16
// checkpoints) with rows padded to 16 bytes, norms and biases in fp32, and
// the rotary frequency table. Q|K|V and gate|up are stored as one matrix
// each, so a layer runs one projection for each.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "backend/cuda/cuda_ops.h"
#include "kv/kv_layout.h"
#include "model/config.h"
#include "model/weights.h"

namespace kvscope {

struct CudaModel {
  struct Layer {
    const float* attn_norm_w = nullptr;
    const float* attn_norm_b = nullptr;  // null: RMSNorm / no bias
    const float* mlp_norm_w = nullptr;
    const float* mlp_norm_b = nullptr;
    cuda::DeviceLinear qkv;      // rows: q (q_dim), then k and v (kv_dim each) when the layer owns KV
    cuda::DeviceLinear o;
    cuda::DeviceLinear gate_up;  // rows: gate then up (ff each) when gated, else up alone
    cuda::DeviceLinear down;
    bool owns_kv = false;
    const float* q_norm_w = nullptr;  // Qwen3's RMSNorm over each head of q and k; null: none
    const float* k_norm_w = nullptr;
  };

  ModelConfig cfg;
  KvLayout layout;
  cuda::WType wtype = cuda::WType::F16;
  int device = 0;
  std::string device_name;
  int64_t weight_bytes = 0;  // device bytes of the arena

  const void* tok_emb = nullptr;  // [vocab][emb_ld]: cfg.embed_width() wide
  const void* pos_emb = nullptr;  // [positions][pos_ld]: hidden wide, or null
  int64_t emb_ld = 0, pos_ld = 0;
  // OPT's narrower embedding (word_embed_proj_dim): embedding -> hidden
  // before the first layer, hidden -> embedding before the head; else empty.
  cuda::DeviceLinear project_in, project_out;
  const float* final_norm_w = nullptr;
  const float* final_norm_b = nullptr;
  cuda::DeviceLinear lm_head;  // may share tok_emb's rows (tied)
  std::vector<Layer> layers;
  std::vector<float> inv_freq_host;  // rope_inv_freq(cfg)
  const float* inv_freq = nullptr;
  const float* alibi_slopes = nullptr;  // [heads] (MPT); null: no ALiBi

  // Throws kvscope::Error("cuda", "memory", "needs X GB, Y GB free ...")
  // when the weights do not fit.
  static std::shared_ptr<const CudaModel> create(const ModelConfig& cfg, const ModelWeights& w);

 private:
  cuda::DeviceBuffer arena_;  // every tensor above lives here
};

}  // namespace kvscope
