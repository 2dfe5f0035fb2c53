// The CUDA backend: the same Backend as the CPU reference, on one GPU.
//
// Weights and the KV cache are 16-bit (fp16, or bf16 for BF16 checkpoints);
// the residual stream, norms, softmax and every accumulation are fp32 (the
// norms' statistics double, like the CPU). Decode runs custom kernels only
// (a bandwidth-bound GEMV per projection); prefill uses cuBLAS.
//
// Everything a decode step needs is allocated when the backend is built. A
// step is: one host->device copy (token ids, segment lengths, pending
// evictions), the kernels, and the copies the caller asked for (the sampled
// token; logits when ForwardOptions::logits_to_host; captures; slot
// statistics when a rule is active).
//
// This header is included from plain C++ files: no CUDA types appear here.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "backend/backend.h"

namespace kvscope {

struct CudaModel;

// Whether a usable GPU is visible; `why` says what is missing when not
// ("cudaGetDeviceCount: no CUDA-capable device is detected").
bool cuda_device_available(std::string* why);

// Uploads the weights and creates a backend. Throws kvscope::Error
// ("cuda: memory: needs X GB, Y GB free") when they do not fit.
std::unique_ptr<Backend> make_cuda_backend(const ModelConfig& cfg, const ModelWeights& weights,
                                           const BackendOptions& opt);

// Device memory bandwidth in GB/s (1e9 bytes): the best of a few
// device-to-device copies of ~1 GiB, counting bytes read plus written.
double cuda_measure_bandwidth_gbs();

// The weights on the device, shared by every backend spawned from them.
std::shared_ptr<const CudaModel> make_cuda_model(const ModelConfig& cfg, const ModelWeights& weights);

class CudaBackend final : public Backend {
 public:
  CudaBackend(std::shared_ptr<const CudaModel> model, const BackendOptions& opt);
  ~CudaBackend() override;
  CudaBackend(const CudaBackend&) = delete;
  CudaBackend& operator=(const CudaBackend&) = delete;

  std::string name() const override;  // "cuda: NVIDIA H100 80GB HBM3"
  const ModelConfig& config() const override;
  std::unique_ptr<Backend> spawn(const BackendOptions& opt) const override;
  std::unique_ptr<Backend> clone() override;
  int kv_element_bytes() const override { return 2; }

  // For tests: a cached key / value row converted to float (applies pending
  // evictions first), and the device bytes this backend allocated.
  std::vector<float> read_key(int seg, int slot);
  std::vector<float> read_value(int seg, int slot);
  int64_t device_bytes() const;

 private:
  void do_forward(std::span<const int> tokens, const ForwardOptions& opt, ForwardOutput& out) override;
  void check_backend_limits(int n) const override;
  bool has_last_logits() const override;
  int do_sample(const SamplingParams& p, uint64_t step) override;
  void do_retain(int seg, std::span<const int> keep, int old_len) override;
  void do_reset() override;
  void on_stats_cleared() override;

  struct State;
  void push_state(std::span<const int> tokens, const std::vector<float>& row_weights);
  void ensure_workspace(int rows, int logit_rows, int64_t capture_floats, const SlotStatRule& rule);
  std::vector<float> read_row(const void* base, int seg, int slot);
  void leverage_scores_on_host();
  std::vector<float> read_segment(const void* base, int seg);
  void compute_value_weights(const std::vector<ValueWeightJob>& jobs) override;

  std::shared_ptr<const CudaModel> model_;
  std::unique_ptr<State> s_;
};

}  // namespace kvscope
