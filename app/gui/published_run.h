// What the worker thread hands the UI about one session (A, or the fork B):
// an immutable snapshot taken after a step. The UI never calls into a
// Session that the worker may be stepping; it reads this struct, and the
// recorder's fixed-size arrays (masks, scores, attention) for rows below
// `rows` only — those rows are written once and never again, and the
// arrays are allocated whole when the session is built, so reading them
// while the worker writes later rows is safe. Everything that grows
// (tokens, metrics, events) is copied here instead.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "session/session.h"

namespace kvscope::gui {

struct PublishedRun {
  // Keeps the session (and so its recorder) alive while the UI draws it,
  // even after the worker replaced it. Read-only from the UI thread:
  // recorder() arrays for rows < `rows`, and the constant parts
  // (model_config(), recorder().layout(), bundle()).
  std::shared_ptr<const Session> session;
  uint64_t generation = 0;  // bumps whenever `session` is a new object (reset, replay, open, fork)
  int rows = 0;             // recorded rows the UI may read: 0 .. rows-1
  bool finished = false;

  SessionConfig config;  // as in effect now (policy_changes included)
  std::string policy_label;           // "h2o k=49 w=24 s=0 kv_head" (policy_summary), "full cache"
  std::vector<int> tokens;            // prompt, then every token fed so far
  std::vector<std::string> token_text;  // the text of each position (tokens.size())
  int prompt_length = 0;
  int positions = 0;                  // recorder columns (prompt + planned new tokens)
  std::vector<StepMetrics> metrics;   // one per recorded row
  std::vector<EvictionEvent> events;  // every eviction so far
  int64_t kv_bytes = 0, kv_bytes_full = 0, kv_bytes_native = 0;
  int kv_element_bytes = 4;           // bytes of one cached K or V element (the backend's: fp32 CPU, fp16 CUDA)
  double last_step_ms = 0;            // wall time of the last step (prefill for row 0)
  std::string device;                 // "CPU (2 threads)", "CUDA: NVIDIA H100"
  // Layers recorded with every head (Recorder::records_layer): views of other
  // layers ask the worker for a replay (EngineWorker::fill_layer).
  std::vector<int> recorded_layers;
  int informative_layer = 0, informative_head = 0;  // reports/informative_head.h, after prefill
};

}  // namespace kvscope::gui
