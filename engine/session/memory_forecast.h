// What a session will hold in memory, known before it runs, and the
// choice of what the recorder keeps. At 8B scale (32 layers x 32 heads) the
// recorder's attention rows grow as steps x positions into gigabytes, and
// its masks and policy scores (every KV segment, every step, every
// position) follow; a run that cannot hold them is refused before anything
// is computed, naming the setting that makes it fit.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "model/config.h"
#include "session/session_config.h"

namespace kvscope {

struct ModelBundle;

struct MemoryForecast {
  int rows = 0;       // 1 + planned new tokens
  int positions = 0;  // prompt + planned new tokens
  int n_layers = 0, n_heads = 0, segments = 0;
  std::vector<int> layers;    // layers whose attention is recorded
  std::vector<int> heads;     // query heads recorded in each of them
  std::size_t attention = 0;  // [rows][layers][heads][positions] floats
  std::size_t masks = 0;      // [rows][segments][positions] bytes
  std::size_t scores = 0;     // [rows][segments][positions] floats
  std::size_t kv_cache = 0;   // host KV caches: the run's, and the metrics' reference runs
  int kv_caches = 0;          // how many (0 when the KV lives on a GPU)
  double available = 0;       // bytes a new allocation could get when planned (io/host_memory.h)
  // Layers chosen by the plan (none named) and fewer than all: true when
  // the memory left beside the masks, scores and KV caches limited them,
  // false when recording.memory_mb did.
  bool layers_limited_by_machine = false;

  std::size_t recorder() const { return attention + masks + scores; }
  std::size_t total() const { return recorder() + kv_cache; }
  bool fits() const { return double(total()) <= kFraction * available; }
  // One line: "recorder 1.2 GiB (attention of 4 layers x 32 heads 1.0 GiB,
  // masks and scores 200.0 MiB) + KV caches 2 x 64.0 MiB = 1.3 GiB; 20.0 GiB available".
  std::string summary() const;

  // The share of the available memory a session may plan to take: the
  // rest is for the weights' working pages, the page cache and the window.
  static constexpr double kFraction = 0.9;
};

// The recording of a run on `cfg` (the layout in use, after any sharing
// conversion): the layers asked for, else every layer that fits
// rec.memory_mb and the memory available (evenly spaced; the others are
// replayed on demand), and the heads asked for, else every head. Throws
// Error::setting naming the field to change (max_new_tokens or the
// continuation, prompt, recording.layers, recording.heads), with what would fit, when the
// recorder and the host KV caches would take more than kFraction of the
// available memory. `host_kv`: the configs of the KV caches the run holds
// in host memory (none on a GPU; the metrics' reference runs add theirs).
// `steps_field`: the setting that fixes the number of new tokens
// (RunTokens::steps_field), named when there are too many.
MemoryForecast plan_recording(const ModelConfig& cfg, int prompt_len, int planned_new, const RecordingConfig& rec,
                              const std::vector<ModelConfig>& host_kv,
                              const std::string& steps_field = "max_new_tokens");

// The configs of the host KV caches a session holds: none on a GPU, else
// the run's (`cfg`, the layout in use) and, with metrics, the shadow
// full-cache run's (same layout) and the native run's (`native`, when the
// sharing conversion changed the layout).
std::vector<ModelConfig> host_kv_configs(bool on_host, const ModelConfig& cfg, const ModelConfig& native, bool metrics);

// Bytes of one host KV cache of `cfg` holding `max_tokens` (the CPU
// backend's K and V regions, slack rows included).
std::size_t host_kv_cache_bytes(const ModelConfig& cfg, int max_tokens);

// A run without a recorder (`generate` without a policy or an export): its
// one host KV cache against kFraction of the memory available. Throws
// Error::setting(steps_field) with the most new tokens that fit, or
// ("prompt") when not even the prompt does.
void check_host_kv_fits(const ModelConfig& cfg, int prompt_len, int planned_new,
                        const std::string& steps_field = "max_new_tokens");

// The forecast for a session not yet opened (the window shows it next to
// the number of new tokens): the plan a Session of `cfg` would make, with
// the prompt tokenized. Throws the Error a Session would, "does not fit" included.
MemoryForecast forecast_session_memory(const ModelBundle& bundle, const SessionConfig& cfg);

}  // namespace kvscope
