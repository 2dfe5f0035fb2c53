// The one interface every compute backend implements (the CPU reference and
// CUDA). A backend owns the KV cache of one sequence and runs the model over
// new tokens; the session decides what to feed and what to evict.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "backend/expected_attention.h"
#include "backend/sampler.h"
#include "backend/slot_stats.h"
#include "backend/weight_format.h"
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
  // CriticalKV: bring value_weights() up to date for every slot (the new
  // ones, or all after a call without it) before alongside_head runs.
  bool value_weights = false;
  // Work of the caller's to run once per call when every layer is done (its
  // attention captures and the slot statistics final) and before forward()
  // returns: a session chooses, records and evicts here. The CPU backend
  // runs it alongside its output head, on another thread where one is free,
  // so it may read kv(), slot_stats() and the captures and call retain(),
  // but not read the logits or call anything else on the backend.
  std::function<void()> alongside_head;
  // Called on the calling thread after each layer of the call (`layer`
  // done). It may throw to abandon the call, which leaves the backend
  // unusable: a session's prompt pass checks for Ctrl-C here, so a long
  // prompt stops within one layer instead of after the whole pass.
  std::function<void(int layer)> between_layers;
};

struct ForwardOutput {
  int n_logits = 0;            // rows in `logits`
  std::vector<float> logits;   // [n_logits, vocab]
  std::vector<AttentionRows> attention;  // one per captured layer, in capture_layers order
};

// Where rotary keys sit after eviction (docs/policies.md, "Positions after eviction").
enum class PositionMode { Original, Compacted };

// Whether the CUDA backend computes this model (Gemma 3's norms, GeGLU,
// per-layer windows and RoPE bases have no kernels yet); `why` says what
// it lacks. Host-only: no device is needed to ask. (Inline: the CUDA
// library asks it too, and it sits below this one.)
inline bool cuda_supports(const ModelConfig& cfg, std::string* why) {
  // (Qwen3's q/k norms alone have their kernel: cuda::rms_norm_heads.)
  const bool missing = cfg.arch == Arch::Gemma3 || cfg.sandwich_norm || cfg.embed_scale != 1.0 ||
                       !cfg.sliding_layers.empty() || cfg.rope_local_theta > 0 || cfg.query_pre_attn_scalar > 0 ||
                       (cfg.gated_mlp && cfg.act != Activation::Silu);
  if (missing && why)
    *why = cfg.model_type +
           " runs on the CPU backend only for now (its output norms, GeGLU, per-layer "
           "windows and RoPE bases have no CUDA kernels yet); use --device cpu";
  return !missing;
}

struct BackendOptions {
  int max_tokens = 0;  // KV capacity per segment (prompt + new tokens)
  PositionMode positions = PositionMode::Original;
  WeightFormat weights = kDefaultWeightFormat;
};

// The base class holds what every backend does the same way around its
// kernels: the checks of a call, the KV book (the positions a call appends,
// the slots retain() keeps), the slot statistics' host copy and decay
// weights, and the shapes of the attention captures. A backend implements
// the do_* hooks and sees the call only after the checks passed, so the CPU
// reference and CUDA refuse the same calls with the same messages and keep
// the same book by construction.
class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;  // "cpu", "cuda: NVIDIA H100 80GB HBM3"
  virtual const ModelConfig& config() const = 0;

  // Runs `tokens` as the next positions of the sequence: each token's K/V is
  // appended to its segments, token i attends to the cached slots and to new
  // tokens 0..i. Throws kvscope::Error, before anything changes, when the
  // call is empty, a token id is outside the vocabulary, or the cache or the
  // model's positions would overflow.
  void forward(std::span<const int> tokens, const ForwardOptions& opt, ForwardOutput& out) {
    check_forward(tokens);
    place_captures(opt);
    do_forward(tokens, opt, out);
  }

  // The same tokens through this run and `other` (a run of the same model
  // with its own cache: the metrics' full-cache reference), as if by
  // forward() on each; both are checked before either runs. Either way,
  // `opt.alongside_head` runs when both runs' layers are done, so it may
  // read `other_out`'s captures too. A backend that can, steps both
  // together so the weights are read once (do_forward_pair).
  void forward_pair(std::span<const int> tokens, const ForwardOptions& opt, ForwardOutput& out, Backend& other,
                    const ForwardOptions& other_opt, ForwardOutput& other_out) {
    check_forward(tokens);
    other.check_forward(tokens);
    place_captures(opt);
    other.place_captures(other_opt);
    do_forward_pair(tokens, opt, out, other, other_opt, other_out);
  }

  // Samples the next token from the last token's logits of the latest
  // forward(), with the rule of backend/sampler.h (on the device for CUDA).
  int sample(const SamplingParams& p, uint64_t step);

  // Eviction: segment `seg` keeps only `keep` (ascending slot indices), in
  // order. In Compacted mode the kept keys are re-rotated to their new slots.
  // The list is checked before anything changes. Calls for different
  // segments may run at the same time (a session evicts from every segment
  // at once); nothing else may run beside them.
  void retain(int seg, std::span<const int> keep);

  // Forgets the sequence (capacity and weights stay).
  void reset();

  // A backend of the same kind sharing these weights, with an empty cache
  // (the shadow full-cache run).
  virtual std::unique_ptr<Backend> spawn(const BackendOptions& opt) const = 0;
  // A backend of the same kind sharing these weights, holding a copy of
  // this one's cache, positions and statistics (a session's fork): fed the
  // same tokens, both compute the same bits. Pending work is finished first,
  // hence not const. sample() needs a forward() on the copy first.
  virtual std::unique_ptr<Backend> clone() = 0;
  // The full-cache twin of this run while nothing has been evicted yet (a
  // session's shadow after a one-shot prompt): a clone() in Original
  // positions. Until a slot leaves, compacted and original positions are
  // the same numbers, and the statistics change no K, V or logits, so the
  // twin holds the bits a spawn() fed the same tokens would, without
  // computing the prompt again. Throws kvscope::Error unless
  // holds_every_token().
  std::unique_ptr<Backend> clone_as_full_cache();
  // Whether every segment still holds every token fed so far (nothing
  // evicted, by a policy or by a sliding window).
  bool holds_every_token() const;

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
  // CriticalKV's weight of each slot of segment seg: the mean over the
  // query heads reading its KV head (in the layer that owns it) of the L1
  // norm of v W_o[q], the slot's value through query head q's block of the
  // output projection (no bias). Complete after a forward() with
  // ForwardOptions::value_weights; kept in step with retain().
  const std::vector<float>& value_weights(int seg) const { return value_weights_[seg]; }
  int tokens_seen() const { return seen_; }  // next absolute position
  const BackendOptions& options() const { return opts_; }
  // Bytes of one cached K or V element in this backend (4 on the CPU, 2 in fp16/bf16).
  virtual int kv_element_bytes() const = 0;

 protected:
  // Checks the options (throws kvscope::Error) and sets up an empty book
  // and statistics for the model's KV layout.
  Backend(const ModelConfig& cfg, const BackendOptions& opt);
  Backend(const Backend&) = default;  // CpuBackend::clone copies the whole backend
  Backend& operator=(const Backend&) = delete;

  // ---- What a backend implements ----------------------------------------
  // forward() after its checks passed. Calls begin_forward() once, before
  // its first kernel, and runs opt.alongside_head once its layers are done.
  virtual void do_forward(std::span<const int> tokens, const ForwardOptions& opt, ForwardOutput& out) = 0;
  // forward_pair() after both runs' checks passed; by default `other` runs
  // first and then this run, each through forward().
  virtual void do_forward_pair(std::span<const int> tokens, const ForwardOptions& opt, ForwardOutput& out,
                               Backend& other, const ForwardOptions& other_opt, ForwardOutput& other_out) {
    other.forward(tokens, other_opt, other_out);
    forward(tokens, opt, out);
  }
  // Limits of this backend's own on a call of n more tokens, checked after
  // the model's and the cache's and before the token ids.
  virtual void check_backend_limits(int n) const {}
  // Whether a forward() left logits to sample from.
  virtual bool has_last_logits() const = 0;
  virtual int do_sample(const SamplingParams& p, uint64_t step) = 0;
  // retain() after the book and the statistics kept `keep` of segment
  // `seg`, which held `old_len` slots: the backend moves its rows (and in
  // Compacted mode re-rotates its keys; kv().rope_positions(seg) still
  // holds the rotations they have, the book moves to the new slots after).
  virtual void do_retain(int seg, std::span<const int> keep, int old_len) = 0;
  // reset() after the book and the statistics were cleared.
  virtual void do_reset() = 0;
  // For backends that keep a device copy of the statistics.
  virtual void on_stats_cleared() {}

  // ---- What the base keeps for a backend ---------------------------------
  // The floats this call's captures will hold, asked before begin_forward()
  // (a backend that sizes buffers for them before the book changes).
  int64_t capture_floats(const ForwardOptions& opt, int n) const;
  // Starts a call of n tokens: appends their positions to the book (the
  // rotation of each token in each segment: its slot in Compacted mode, its
  // position otherwise), gives the statistics a 0 for each new slot, works
  // out the decay weights of opt.stats and shapes the captures in `out`
  // (each listed layer once, in the order first listed, into the storage
  // of the caller's previous call). Returns the first new position.
  int begin_forward(int n, const ForwardOptions& opt, ForwardOutput& out);
  // The rotation new token i of this call got in segment seg.
  int new_rope_pos(int i, int seg) const { return new_rope_pos_[std::size_t(i) * book_.layout().n_segments() + seg]; }
  // Where this call's capture of `layer` goes in ForwardOutput::attention;
  // -1 when it is not captured.
  int capture_place(int layer) const { return capture_place_[layer]; }
  // The decay of this call's statistic: new row i (of n) enters with weight
  // decay^(n-1-i), and what the slots held before is carried with decay^n
  // (slot_stats.h). Empty / 1 when no rule is active.
  const std::vector<float>& stat_row_weights() const { return row_weight_; }
  float stat_carry() const { return carry_; }
  // Query heads, over all layers, that read segment seg (the mean's divisor).
  int readers(int seg) const { return readers_[seg]; }
  // Takes `from`'s sequence: its book, statistics and position (a clone).
  void copy_sequence(const Backend& from) {
    book_ = from.book_;
    stats_ = from.stats_;
    value_weights_ = from.value_weights_;
    query_moments_ = from.query_moments_;
    seen_ = from.seen_;
  }

  std::vector<std::vector<float>> stats_;  // [segment][slot]: the backend writes the values it computes
  std::vector<std::vector<float>> value_weights_;  // [segment][slot], or shorter: not computed past its end

  // ExpectedAttention's moments of the pre-RoPE queries: each backend adds
  // its calls' queries (past rule.sinks) in forward() when the rule's
  // source is StatSource::Expected; empty otherwise. A policy switched to
  // mid-run starts from the queries of the switch on.
  QueryMoments query_moments_;
  // expected_attention_scores of segment seg into its statistics, from its
  // `keys` and `values` (len rows each; the CPU's cache or CUDA's copy) and
  // the moments of every query head that reads it. inv_freq_of(layer): the
  // RoPE of a layer's queries.
  void expected_scores(int seg, const float* keys, const float* values, const SlotStatRule& rule,
                       const std::function<const std::vector<float>&(int)>& inv_freq_of);

  // Work for compute_value_weights: slots [first, first + count) of segment
  // seg, written to value_weights_[seg] (already sized).
  struct ValueWeightJob {
    int seg = 0, first = 0, count = 0;
  };
  // value_weights() of the slots that lack one, once every layer is done.
  void update_value_weights();
  virtual void compute_value_weights(const std::vector<ValueWeightJob>& jobs) = 0;

 private:
  void check_forward(std::span<const int> tokens) const;
  void place_captures(const ForwardOptions& opt);

  KvBook book_;
  int seen_ = 0;
  BackendOptions opts_;
  std::vector<int> readers_;        // [segment]
  std::vector<int> new_rope_pos_;   // [token][segment] of the current call
  std::vector<int> capture_place_;  // [layer] of the current call
  int n_captures_ = 0;
  std::vector<float> row_weight_;  // [query row] of the current call
  float carry_ = 1.0f;
};

enum class Device { Cpu, Cuda };

// Whether this build has the CUDA backend and a GPU is visible; `why` says
// what is missing when not.
bool cuda_available(std::string* why);

// What a backend on `device` calls itself (Backend::name()), without
// making one: "cpu", "cpu, f16 weights", "cuda: NVIDIA H100 80GB HBM3".
std::string backend_label(Device device, WeightFormat weights);

// A model's weights in the form a backend computes with (the CPU's f32 or
// f16 copy of every tensor), built once and shared by every backend made
// from it: building it is a pass over all the weights (about a second for
// a 135M-parameter GGUF), which sweeps, evaluations and replays would
// otherwise pay for every run (see Session's use of ModelBundle::prepared).
struct PreparedWeights {
  virtual ~PreparedWeights() = default;
};

// nullptr where the device prepares nothing ahead (CUDA uploads the
// weights per backend).
std::shared_ptr<const PreparedWeights> prepare_weights(Device device, const ModelConfig& cfg,
                                                       const ModelWeights& weights, WeightFormat format);

// Creates a backend on `device` for a model. Throws kvscope::Error when the
// device is not available (field "device": "no CUDA device: ...").
// `prepared`: prepare_weights() of the same device, config, weights and
// opt.weights, or nullptr to prepare them here.
std::unique_ptr<Backend> make_backend(Device device, const ModelConfig& cfg, const ModelWeights& weights,
                                      const BackendOptions& opt,
                                      std::shared_ptr<const PreparedWeights> prepared = nullptr);

}  // namespace kvscope
