#include "session/memory_forecast.h"

#include <algorithm>
#include <cstdint>

#include "backend/cpu/cpu_backend.h"
#include "bundle/model_bundle.h"
#include "common/error.h"
#include "io/host_memory.h"
#include "kv/kv_layout.h"
#include "kv/sharing.h"
#include "session/recorder.h"
#include "session/session.h"
#include "session/session_file.h"

namespace kvscope {
namespace {

std::string count(int n, const char* one, const char* many) { return std::to_string(n) + " " + (n == 1 ? one : many); }

// Masks, scores and KV caches: what a run of `planned_new` tokens holds
// whatever it records of the attention.
struct FixedBytes {
  std::size_t masks = 0, scores = 0, kv = 0;
  std::size_t total() const { return masks + scores + kv; }
};

FixedBytes fixed_bytes(int segments, int prompt_len, int planned_new, const std::vector<ModelConfig>& host_kv) {
  const std::size_t rows = 1 + std::size_t(planned_new), positions = std::size_t(prompt_len) + planned_new;
  FixedBytes f;
  f.masks = rows * segments * positions;
  f.scores = f.masks * sizeof(float);
  for (const ModelConfig& c : host_kv) f.kv += host_kv_cache_bytes(c, static_cast<int>(positions) + 1);
  return f;
}

// The most new tokens whose fixed bytes fit `room` (-1 when not even the prompt does).
int most_new_tokens_within(double room, int segments, int prompt_len, int planned_new,
                           const std::vector<ModelConfig>& host_kv) {
  int lo = -1, hi = planned_new;  // fixed_bytes grows with the tokens: bisect
  while (lo < hi) {
    const int mid = lo + (hi - lo + 1) / 2;
    if (double(fixed_bytes(segments, prompt_len, mid, host_kv).total()) <= room) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

}  // namespace

std::size_t host_kv_cache_bytes(const ModelConfig& cfg, int max_tokens) {
  const KvLayout layout = KvLayout::from_config(cfg);
  return 2 * std::size_t(layout.n_segments()) * std::size_t(CpuBackend::region_rows(max_tokens, cfg.head_dim)) *
         cfg.head_dim * sizeof(float);
}

std::vector<ModelConfig> host_kv_configs(bool on_host, const ModelConfig& cfg, const ModelConfig& native,
                                         bool metrics) {
  if (!on_host) return {};
  std::vector<ModelConfig> out{cfg};
  if (metrics) {
    out.push_back(cfg);
    if (native.n_kv_heads != cfg.n_kv_heads || native.n_kv_layers != cfg.n_kv_layers) out.push_back(native);
  }
  return out;
}

std::string MemoryForecast::summary() const {
  std::string s = "recorder " + format_bytes(double(recorder())) + " (attention of " +
                  count(static_cast<int>(layers.size()), "layer", "layers") + " x " +
                  count(static_cast<int>(heads.size()), "head", "heads") + " " + format_bytes(double(attention)) +
                  ", masks and scores " + format_bytes(double(masks + scores)) + ")";
  if (kv_caches > 0)
    s += " + KV caches " + std::to_string(kv_caches) + " x " + format_bytes(double(kv_cache) / kv_caches) + " = " +
         format_bytes(double(total()));
  return s + "; " + format_bytes(available) + " available";
}

void check_host_kv_fits(const ModelConfig& cfg, int prompt_len, int planned_new, const std::string& steps_field) {
  const double available = available_memory_bytes(), room = MemoryForecast::kFraction * available;
  const std::vector<ModelConfig> host_kv = {cfg};
  const FixedBytes need = fixed_bytes(0, prompt_len, planned_new, host_kv);  // no segments recorded: the KV alone
  if (double(need.total()) <= room) return;
  const std::string what = "KV cache of " + count(prompt_len + planned_new, "position", "positions") + " needs " +
                           format_bytes(double(need.kv)) + "; " + format_bytes(available) + " is available";
  const int most = most_new_tokens_within(room, 0, prompt_len, planned_new, host_kv);
  if (most < 0) throw Error::setting("prompt", "the " + what + ", not enough even for the prompt: shorten it");
  throw Error::setting(steps_field, "the " + what + ": at most " + std::to_string(most) + " new tokens fit");
}

MemoryForecast plan_recording(const ModelConfig& cfg, int prompt_len, int planned_new, const RecordingConfig& rec,
                              const std::vector<ModelConfig>& host_kv, const std::string& steps_field) {
  const KvLayout layout = KvLayout::from_config(cfg);
  MemoryForecast f;
  f.rows = 1 + planned_new;
  f.positions = prompt_len + planned_new;
  f.n_layers = cfg.n_layers;
  f.n_heads = cfg.n_heads;
  f.segments = layout.n_segments();
  f.kv_caches = static_cast<int>(host_kv.size());
  f.available = available_memory_bytes();
  const double room = MemoryForecast::kFraction * f.available;

  auto check = [&](const std::vector<int>& list, const char* field, int n, const char* what) {
    for (int v : list)
      if (v < 0 || v >= n)
        throw Error::setting(field, "unknown " + std::string(what) + " " + std::to_string(v) + " (the model has " +
                                        what + "s 0.." + std::to_string(n - 1) + ")");
  };
  check(rec.layers, "recording.layers", cfg.n_layers, "layer");
  check(rec.heads, "recording.heads", cfg.n_heads, "head");
  f.heads = rec.heads;
  if (f.heads.empty())
    for (int h = 0; h < cfg.n_heads; ++h) f.heads.push_back(h);
  std::sort(f.heads.begin(), f.heads.end());
  f.heads.erase(std::unique(f.heads.begin(), f.heads.end()), f.heads.end());

  const FixedBytes fixed = fixed_bytes(f.segments, prompt_len, planned_new, host_kv);
  f.masks = fixed.masks;
  f.scores = fixed.scores;
  f.kv_cache = fixed.kv;
  const std::string avail = format_bytes(f.available);
  if (double(fixed.total()) > room) {
    const int most = most_new_tokens_within(room, f.segments, prompt_len, planned_new, host_kv);
    const std::string what = "masks and policy scores of " + count(f.segments, "KV segment", "KV segments") + " over " +
                             count(f.rows, "step", "steps") + " x " + count(f.positions, "position", "positions") +
                             " need " + format_bytes(double(f.masks + f.scores)) +
                             (f.kv_caches > 0 ? ", the KV caches " + format_bytes(double(f.kv_cache)) : std::string()) +
                             "; " + avail + " is available";
    if (most < 0) throw Error::setting("prompt", "the " + what + ", not enough even for the prompt: shorten it");
    throw Error::setting(steps_field,
                         "the " + what + ": at most " + std::to_string(most) +
                             (steps_field == "max_new_tokens" ? " new tokens fit" : " tokens of the continuation fit"));
  }

  const std::size_t per_layer = Recorder::layer_bytes(f.rows, static_cast<int>(f.heads.size()), f.positions);
  const double attention_room = room - double(fixed.total());
  if (!rec.layers.empty()) {
    f.layers = rec.layers;
    std::sort(f.layers.begin(), f.layers.end());
    f.layers.erase(std::unique(f.layers.begin(), f.layers.end()), f.layers.end());
    f.attention = per_layer * f.layers.size();
    if (double(f.attention) > attention_room) {
      const int most = static_cast<int>(attention_room / double(std::max<std::size_t>(per_layer, 1)));
      const bool heads_asked = !rec.heads.empty();
      throw Error::setting("recording.layers",
                           "the attention of " + count(static_cast<int>(f.layers.size()), "layer", "layers") + " x " +
                               count(static_cast<int>(f.heads.size()), "head", "heads") + " over " +
                               count(f.rows, "step", "steps") + " x " + count(f.positions, "position", "positions") +
                               " needs " + format_bytes(double(f.attention)) + " beside " +
                               format_bytes(double(fixed.total())) + " of masks, scores and KV caches; " + avail +
                               " is available: " +
                               (most > 0 ? "at most " + count(most, "layer", "layers") + " of " +
                                               count(static_cast<int>(f.heads.size()), "head", "heads") + " fit"
                                         : std::string("not one layer of ") +
                                               count(static_cast<int>(f.heads.size()), "head", "heads") + " fits") +
                               (heads_asked ? "" : " (fewer heads make room for more layers)"));
    }
    return f;
  }
  // All layers when they fit the budget, else evenly spaced ones that do (at
  // least one, as long as the memory holds it; none when it does not: every
  // layer is then replayed on demand, and the replay says what fits).
  const double budget = std::min(rec.memory_mb * 1024.0 * 1024.0, attention_room);
  int fit = static_cast<int>(std::min<double>(budget / double(std::max<std::size_t>(per_layer, 1)), cfg.n_layers));
  if (fit == 0 && double(per_layer) <= attention_room) fit = 1;
  const int L = cfg.n_layers;
  f.layers_limited_by_machine = fit < L && attention_room < rec.memory_mb * 1024.0 * 1024.0;
  for (int i = 0; i < fit; ++i) f.layers.push_back(fit == 1 ? 0 : static_cast<int>(int64_t(i) * (L - 1) / (fit - 1)));
  f.attention = per_layer * f.layers.size();
  return f;
}

MemoryForecast forecast_session_memory(const ModelBundle& bundle, const SessionConfig& cfg) {
  const RunTokens run = plan_run_tokens(bundle, cfg);
  ModelConfig used = bundle.config();
  const int prompt_len = static_cast<int>(run.prompt.size());
  const auto [m, g] = check_sharing(used, cfg.sharing);
  used.n_kv_layers = m;
  used.n_kv_heads = g;
  const bool on_host = resolve_device(cfg.device, used) == Device::Cpu;
  return plan_recording(used, prompt_len, run.planned_new, cfg.recording,
                        host_kv_configs(on_host, used, bundle.config(), cfg.recording.metrics), run.steps_field);
}

}  // namespace kvscope
