// The one interface every compute backend implements (the CPU reference and
// CUDA). A backend owns the KV cache of one sequence and runs the model over
// new tokens; the session decides what to feed and what to evict.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "backend/sampler.h"
#include "backend/slot_stats.h"
#include "kv/kv_book.h"
#include "model/config.h"
#include "model/weights.h"

namespace kvscope {

// One layer's attention for the tokens of one forward call. For query head h
// and query i (0..n_queries-1) the row covers the slots of the KV segment h
// reads, after this call's tokens were appended: row_len[h] entries, the
// same order as KvBook::positions(segment). Causally masked entries have
// probability 0 and logit -infinity.
struct AttentionRows {
  int layer = -1;
  int n_queries = 0;
  std::vector<int> row_len;     // [heads]
  std::vector<int64_t> offset;  // [heads]: start of head h's n_queries x row_len[h] block
  std::vector<float> probs;     // post-softmax
  std::vector<float> logits;    // pre-softmax: q.k times the model's attention scale (ModelConfig::attention_scale), masked; empty unless capture_logits

  const float* prob_row(int head, int query) const { return probs.data() + offset[head] + int64_t(query) * row_len[head]; }
  const float* logit_row(int head, int query) const { return logits.data() + offset[head] + int64_t(query) * row_len[head]; }
};

struct ForwardOptions {
  std::vector<int> capture_layers;  // layers whose attention rows to return
  bool capture_last_query_only = false;  // rows of the last token only (a prefill's n x n is large)
  bool capture_logits = true;  // pre-softmax rows too (backend parity tests); sessions need only probs
  bool all_logits = false;          // logits of every input token (teacher forcing), not only the last
  // False: logits stay where they were computed (sample() still works), so a
  // GPU decode step copies nothing but the sampled token.
  bool logits_to_host = true;
  // The per-slot statistic to accumulate during this call's attention.
  SlotStatRule stats;
  // Work of the caller's to run once per call when every layer is done (its
  // attention captures and the slot statistics final) and before forward()
  // returns: a session chooses, records and evicts here. The CPU backend
  // runs it alongside its output head, on another thread where one is free,
  // so it may read kv(), slot_stats() and the captures and call retain(),
  // but not read the logits or call anything else on the backend.
  std::function<void()> alongside_head;
};

struct ForwardOutput {
  int n_logits = 0;            // rows in `logits`
  std::vector<float> logits;   // [n_logits, vocab]
  std::vector<AttentionRows> attention;  // one per captured layer, in capture_layers order
};

// Where rotary keys sit after eviction (docs/policies.md, "Positions after eviction").
enum class PositionMode { Original, Compacted };

// How the CPU backend stores the matrices of the linear layers: fp32 (the
// reference, what the goldens check) or IEEE half (half the bytes a decode
// step reads; computed in fp32 on the widened weights). The CUDA backend
// always keeps 16-bit weights (cuda_ops.h, weight_type_for) and ignores it.
enum class WeightFormat { F32, F16 };
WeightFormat parse_weight_format(const std::string& s);  // "f32" | "f16"; throws naming --weights

// Whether the CUDA backend computes this model (Gemma 3's norms, GeGLU,
// per-layer windows and RoPE bases have no kernels yet); `why` says what
// it lacks. Host-only: no device is needed to ask. (Inline: the CUDA
// library asks it too, and it sits below this one.)
inline bool cuda_supports(const ModelConfig& cfg, std::string* why) {
  const bool missing = cfg.arch == Arch::Gemma3 || cfg.qk_norm || cfg.sandwich_norm || cfg.embed_scale != 1.0 ||
                       !cfg.sliding_layers.empty() || cfg.rope_local_theta > 0 || cfg.query_pre_attn_scalar > 0 ||
                       (cfg.gated_mlp && cfg.act != Activation::Silu);
  if (missing && why)
    *why = cfg.model_type + " runs on the CPU backend only for now (its q/k and output norms, GeGLU, per-layer "
                            "windows and RoPE bases have no CUDA kernels yet); use --device cpu";
  return !missing;
}
const char* weight_format_name(WeightFormat f);

struct BackendOptions {
  int max_tokens = 0;  // KV capacity per segment (prompt + new tokens)
  PositionMode positions = PositionMode::Original;
  WeightFormat weights = WeightFormat::F32;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;  // "cpu", "cuda: NVIDIA H100 80GB HBM3"
  virtual const ModelConfig& config() const = 0;

  // Runs `tokens` as the next positions of the sequence: each token's K/V is
  // appended to its segments, token i attends to the cached slots and to new
  // tokens 0..i. Throws kvscope::Error when the cache or the model's
  // positions would overflow.
  virtual void forward(std::span<const int> tokens, const ForwardOptions& opt, ForwardOutput& out) = 0;

  // The same tokens through this run and `other` (a run of the same model
  // with its own cache: the metrics' full-cache reference), as if by
  // forward() on each. Either way, `opt.alongside_head` runs when both
  // runs' layers are done, so it may read `other_out`'s captures too. A
  // backend that can, steps both together so the weights are read once;
  // this one runs `other` first and then this run.
  virtual void forward_pair(std::span<const int> tokens, const ForwardOptions& opt, ForwardOutput& out,
                            Backend& other, const ForwardOptions& other_opt, ForwardOutput& other_out) {
    other.forward(tokens, other_opt, other_out);
    forward(tokens, opt, out);
  }

  // Samples the next token from the last token's logits of the latest
  // forward(), with the rule of backend/sampler.h (on the device for CUDA).
  virtual int sample(const SamplingParams& p, uint64_t step) = 0;

  // Eviction: segment `seg` keeps only `keep` (ascending slot indices), in
  // order. In Compacted mode the kept keys are re-rotated to their new slots.
  // Calls for different segments may run at the same time (a session evicts
  // from every segment at once); nothing else may run beside them.
  virtual void retain(int seg, std::span<const int> keep) = 0;

  // Forgets the sequence (capacity and weights stay).
  virtual void reset() = 0;

  // A backend of the same kind sharing these weights, with an empty cache
  // (the shadow full-cache run).
  virtual std::unique_ptr<Backend> spawn(const BackendOptions& opt) const = 0;
  // A backend of the same kind sharing these weights, holding a copy of
  // this one's cache, positions and statistics (a session's fork): fed the
  // same tokens, both compute the same bits. Pending work is finished first,
  // hence not const. sample() needs a forward() on the copy first.
  virtual std::unique_ptr<Backend> clone() = 0;

  const KvBook& kv() const { return book_; }
  // Per-slot statistic of each segment (same order as kv().positions(seg)),
  // as accumulated by the SlotStatRules of the forward calls so far; slots
  // that never had a rule applied hold 0. Kept in step with retain().
  const std::vector<float>& slot_stats(int seg) const { return stats_[seg]; }
  // Zeroes every statistic (a policy switch that changes what S means).
  void clear_slot_stats() {
    for (auto& s : stats_) std::fill(s.begin(), s.end(), 0.0f);
    on_stats_cleared();
  }
  int tokens_seen() const { return seen_; }  // next absolute position
  const BackendOptions& options() const { return opts_; }
  // Bytes of one cached K or V element in this backend (4 on the CPU, 2 in fp16/bf16).
  virtual int kv_element_bytes() const = 0;

 protected:
  // For backends that keep a device copy of the statistics.
  virtual void on_stats_cleared() {}
  // Host-side bookkeeping shared by every backend's retain().
  void compact_stats(int seg, std::span<const int> keep) {
    auto& s = stats_[seg];
    for (std::size_t i = 0; i < keep.size(); ++i) s[i] = s[keep[i]];
    s.resize(keep.size());
  }

  KvBook book_;
  std::vector<std::vector<float>> stats_;  // [segment][slot]
  int seen_ = 0;
  BackendOptions opts_;
};

enum class Device { Cpu, Cuda };

// Whether this build has the CUDA backend and a GPU is visible; `why` says
// what is missing when not.
bool cuda_available(std::string* why);

// Creates a backend on `device` for a model. Throws kvscope::Error when the
// device is not available ("--device cuda: no CUDA device: ...").
std::unique_ptr<Backend> make_backend(Device device, const ModelConfig& cfg, const ModelWeights& weights,
                                      const BackendOptions& opt);

}  // namespace kvscope
