// The stepper: one prompt run through a backend under an eviction policy,
// one token at a time (attend, then evict), with a shadow full-cache run on
// the same tokens for the metrics and a recorder keeping what the window
// and the exports show. The CLI and the app drive the same calls.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "backend/backend.h"
#include "bundle/model_bundle.h"
#include "policy/policy.h"
#include "policy/selection.h"
#include "session/memory_forecast.h"
#include "session/recorder.h"
#include "session/session_config.h"

namespace kvscope {

// A run's tokens before it starts: the prompt's, the teacher-forced
// continuation's (empty when sampling) and how many new tokens it plans.
// Throws kvscope::Error for an empty prompt, an id outside the vocabulary
// or more tokens than the model's positions.
struct RunTokens {
  std::vector<int> prompt, continuation;
  int planned_new = 0;
  // The setting that fixes planned_new: max_new_tokens, or the
  // teacher-forced continuation (continuation, continuation_ids).
  std::string steps_field = "max_new_tokens";
};
RunTokens plan_run_tokens(const ModelBundle& bundle, const SessionConfig& cfg);

class Session {
 public:
  // Tokenizes, converts the sharing layout, resolves the policy and builds
  // the backends. Throws kvscope::Error for bad settings (unknown layer,
  // budget larger than the context, ...).
  Session(std::shared_ptr<const ModelBundle> bundle, SessionConfig cfg);

  // Runs the prompt (one-shot or streaming) and records row 0.
  void prefill();

  // A one-shot prefill in two halves, for callers that run many policies on
  // one prompt (evaluations, sweeps). The prompt's forward pass depends on
  // the policy only through the statistic it accumulates (its SlotStatRule
  // at step 0): window, sinks, random and the full cache accumulate none,
  // H2O and every budget of it the same sum. run_prompt_forward() runs that
  // pass alone and leaves this session waiting before it chooses; a second
  // session whose can_share_prefill() says yes takes that state with
  // prefill_from() and then chooses, records and evicts row 0 as its own
  // prefill() would: the same run, bit for bit, without the prompt's cost.
  void run_prompt_forward();
  bool prompt_forward_pending() const { return prompt_forward_pending_; }
  bool can_share_prefill(const Session& waiting) const;
  // Throws kvscope::Error when !can_share_prefill(waiting). `waiting` is
  // not changed (a GPU backend finishes its pending work before the copy).
  void prefill_from(Session& waiting);
  // Feeds the next token and evicts; false once the run is complete (the
  // token limit, the end of the continuation, or EOS).
  bool step();
  void run_to_end();
  bool started() const { return row_ >= 0; }
  bool finished() const { return finished_; }

  // New policy parameters from the next step on ("from now on"). A change
  // of policy kind starts its statistic afresh; a change of alpha, budget or
  // window keeps the accumulated one.
  void set_policy(const PolicyParams& p);

  const SessionConfig& config() const { return cfg_; }
  const ModelConfig& model_config() const { return model_cfg_; }
  // The memory the run was planned with: what the recorder keeps and holds.
  const MemoryForecast& memory_forecast() const { return forecast_; }
  const ModelBundle& bundle() const { return *bundle_; }
  const Backend& backend() const { return *backend_; }
  const Policy& policy() const { return *policy_; }
  const Recorder& recorder() const { return recorder_; }
  const std::vector<int>& tokens() const { return tokens_; }  // prompt, then what was fed so far
  int prompt_length() const { return prompt_len_; }
  int planned_new_tokens() const { return planned_new_; }
  int current_row() const { return row_; }
  std::string text_of(int position) const;
  // KV bytes of the policy cache now and of a full cache of the same tokens.
  int64_t kv_bytes() const;
  int64_t kv_bytes_full() const;
  // A full cache of the same tokens in the checkpoint's own layout, before
  // any sharing conversion.
  int64_t kv_bytes_native() const;
  // Generated (or teacher-forced) token ids after the prompt.
  std::vector<int> generated() const { return {tokens_.begin() + prompt_len_, tokens_.end()}; }

  // Attention rows of `layer` for every recorded row: from the recorder, or
  // by replaying this session (bit-identical) with that layer recorded.
  // [rows][heads][positions].
  std::vector<float> layer_attention(int layer) const;

  // A snapshot of this session at its current row that goes on by itself:
  // caches, slot statistics, the policy, the recorder, the metrics run and
  // the sampler's position (draws are keyed by seed and step, so nothing
  // else holds random state). Continued with the same settings it
  // reproduces this session bit for bit; after set_policy() it is the "what
  // if" branch the window compares. Not const: a GPU backend finishes its
  // pending work before it is copied.
  std::unique_ptr<Session> fork();

  // This session's settings run again from the prompt up to `row` (its
  // policy changes up to that row kept, later ones dropped): the state it
  // had then, bit for bit, ready to go on differently. `progress(row)` is
  // called after each step; returning false cancels (nullptr is returned).
  std::unique_ptr<Session> replay_to(int row, const std::function<bool(int)>& progress = {}) const;

 private:
  struct ForkTag {};
  Session(Session& from, ForkTag);
  void build();  // the constructor's work; its errors are renamed for a session file
  void finish_prefill();  // row 0's choice, record and eviction after the prompt's forward pass
  SlotStatRule prefill_stat_rule() const;
  std::shared_ptr<const PreparedWeights> prepared_weights(Device device, WeightFormat format) const;
  ForwardOptions forward_options(bool capture, std::function<void()> alongside_head) const;
  ForwardOptions shadow_options() const;
  void run_forward(std::span<const int> toks, bool capture, std::function<void()> alongside_head = {});
  void run_shadow_forward(std::span<const int> toks);
  void shadow_the_prompt(std::span<const int> prompt);
  void run_native_forward(std::span<const int> toks);
  // A step's bookkeeping after its forward pass: choose, record, measure
  // (before eviction, against the shadow run), evict, add the metrics row.
  void evict_and_record(int row);
  void choose_and_record(int row);
  void evict();
  StepMetrics step_identity(int row) const;
  StepMetrics step_metrics(int row) const;
  // The two halves of the metrics: what the captured rows say (before the
  // step's eviction) and what the logits say (after the output head).
  void attention_metrics(StepMetrics& m) const;
  void logits_metrics(StepMetrics& m) const;
  void add_metrics(StepMetrics m);
  // The norms of this forward call's last logits (policy run, full-cache
  // run, native model), computed once for the KL, the NLLs and the argmax.
  void normalize_logits();
  void choose_next_token();
  std::vector<int> capture_layers() const;

  std::shared_ptr<const ModelBundle> bundle_;
  SessionConfig cfg_;
  ModelConfig model_cfg_;
  ModelWeights weights_;
  std::unique_ptr<Backend> backend_, shadow_;
  // The checkpoint's own model with a full cache, for the metrics against
  // the native model; only under a sharing conversion (else the shadow is it).
  std::unique_ptr<Backend> native_;
  std::unique_ptr<Policy> policy_;
  Recorder recorder_;
  SlotChoice choice_;            // this step's choice, its storage reused every step
  SelectionScratch selection_scratch_;
  std::vector<int> tokens_, continuation_;
  int prompt_len_ = 0, planned_new_ = 0, row_ = -1;
  std::optional<int> next_token_;
  bool finished_ = false;
  bool prompt_forward_pending_ = false;  // run_prompt_forward() done, row 0 not chosen yet
  bool metrics_ = false;
  MemoryForecast forecast_;
  ForwardOutput out_, shadow_out_, native_out_;
  LogitsNorm norm_, shadow_norm_, native_norm_;
  // Last logits of each run (the native model's: the shadow's without a conversion).
  const float* policy_logits() const;
  const float* shadow_logits() const;
  const float* native_logits() const;
  const LogitsNorm& native_norm() const { return native_ ? native_norm_ : shadow_norm_; }
};

}  // namespace kvscope
