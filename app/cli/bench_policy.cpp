#include "bench_policy.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <limits>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_common.h"
#include "common/error.h"
#include "common/counter_random.h"
#include "session/session.h"
#include "session_runner.h"

namespace kvscope::cli {
namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct Timing {
  double prefill_s = std::numeric_limits<double>::infinity();
  double decode_ms_per_token = std::numeric_limits<double>::infinity();
  int64_t kv_bytes = 0;
};

void keep_best(Timing& best, const Timing& t) {
  best.prefill_s = std::min(best.prefill_s, t.prefill_s);
  best.decode_ms_per_token = std::min(best.decode_ms_per_token, t.decode_ms_per_token);
  best.kv_bytes = t.kv_bytes;
}

// Full-cache decoding through the backend alone: what the policy run is
// compared with.
Timing time_backend(const ModelBundle& b, const std::vector<int>& prompt, const PolicyBenchArgs& a) {
  BackendOptions bo;
  bo.max_tokens = a.prompt_tokens + a.decode_tokens + 1;
  bo.weights = parse_weight_format(a.flags.weights);
  auto backend = make_backend(resolve_device(a.device, b.config()), b.config(), b.files.weights, bo);
  ForwardOptions fo;
  ForwardOutput out;
  Timing t;
  double t0 = now_s();
  backend->forward(prompt, fo, out);
  t.prefill_s = now_s() - t0;
  t0 = now_s();
  for (int s = 0; s < a.decode_tokens; ++s) {
    const int tok[1] = {static_cast<int>(std::max_element(out.logits.begin(), out.logits.end()) - out.logits.begin())};
    backend->forward(tok, fo, out);
  }
  t.decode_ms_per_token = 1e3 * (now_s() - t0) / a.decode_tokens;
  return t;
}

Timing time_session(const std::shared_ptr<const ModelBundle>& b, SessionConfig cfg) {
  Session s(b, std::move(cfg));
  Timing t;
  double t0 = now_s();
  s.prefill();
  t.prefill_s = now_s() - t0;
  t0 = now_s();
  while (s.step()) {
  }
  // Every step() feeds one token, the last one (which returns false) too.
  const int steps = static_cast<int>(s.generated().size());
  t.decode_ms_per_token = 1e3 * (now_s() - t0) / std::max(1, steps);
  t.kv_bytes = s.kv_bytes();
  return t;
}

}  // namespace

void run_policy_bench(const PolicyBenchArgs& a) {
  if (a.prompt_tokens < 1 || a.decode_tokens < 1) throw Error("bench", "", "--prompt-tokens and --decode-tokens must be >= 1");
  if (a.repeats < 1) throw Error("--repeats", "", "must be >= 1");
  auto bundle = bundle_for(a.model);
  const ModelConfig& mc = bundle->config();
  if (a.prompt_tokens + a.decode_tokens > mc.max_positions)
    throw Error("bench", "", "--prompt-tokens + --decode-tokens exceed the model's maximum positions (" +
                                 std::to_string(mc.max_positions) + ")");
  std::vector<int> prompt(a.prompt_tokens);
  for (int i = 0; i < a.prompt_tokens; ++i)
    prompt[i] = static_cast<int>(philox4(a.seed, i, 0, 0, 0).v[0] % static_cast<uint32_t>(mc.vocab_size));

  SessionConfig policy_cfg;
  policy_cfg.model = a.model;
  policy_cfg.device = a.device;
  policy_cfg.prompt_ids = prompt;
  policy_cfg.max_new_tokens = a.decode_tokens;
  policy_cfg.stop_at_eos = false;
  policy_cfg.seed = a.seed;
  apply_policy_flags(a.flags, policy_cfg);
  policy_cfg.recording.metrics = false;
  // Every layer recorded unless --record-layers names some (one layer
  // recorded is what the window usually shows).
  std::string recorded = "all layers recorded";
  if (a.flags.record_layers.empty()) {
    policy_cfg.recording.layers.clear();
    for (int l = 0; l < mc.n_layers; ++l) policy_cfg.recording.layers.push_back(l);
  } else {
    recorded = a.flags.record_layers.size() == 1 ? "layer" : "layers";
    for (int l : a.flags.record_layers) recorded += " " + std::to_string(l);
    recorded += " recorded";
  }
  policy_cfg.recording.memory_mb = 1e6;  // all of the chosen layers recorded, as the overhead target asks
  SessionConfig full_cfg = policy_cfg;
  full_cfg.policy = PolicyParams{};
  // The same policy run with the metrics on: its full-cache reference steps
  // together with it (Backend::forward_pair).
  SessionConfig metrics_cfg = policy_cfg;
  metrics_cfg.recording.metrics = true;

  Timing bare, full, pol, met;
  // Each repeat's three runs follow one another, so a drift of the machine
  // (seconds) hits them alike: the median over repeats of their ratios is
  // steadier than the ratio of the best times, which may come from
  // different moments.
  std::vector<double> rec_ratio, pol_ratio, met_ratio;
  for (int r = 0; r < a.repeats; ++r) {  // interleaved, so drift hits all four alike
    const Timing tb = time_backend(*bundle, prompt, a);
    const Timing tf = time_session(bundle, full_cfg);
    const Timing tp = time_session(bundle, policy_cfg);
    const Timing tm = time_session(bundle, metrics_cfg);
    keep_best(bare, tb);
    keep_best(full, tf);
    keep_best(pol, tp);
    keep_best(met, tm);
    rec_ratio.push_back(tf.decode_ms_per_token / tb.decode_ms_per_token);
    pol_ratio.push_back(tp.decode_ms_per_token / tb.decode_ms_per_token);
    met_ratio.push_back(tm.decode_ms_per_token / tp.decode_ms_per_token);
  }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  };
  const double rec_over = full.decode_ms_per_token / bare.decode_ms_per_token - 1;
  const double pol_over = pol.decode_ms_per_token / bare.decode_ms_per_token - 1;
  const double met_over = met.decode_ms_per_token / pol.decode_ms_per_token - 1;
  const double rec_paired = median(rec_ratio) - 1, pol_paired = median(pol_ratio) - 1;
  const double met_paired = median(met_ratio) - 1;
  const std::string policy_name = a.flags.policy + " " + a.flags.budget;
  if (a.json) {
    nlohmann::json j = {{"model", a.model.empty() ? default_model_dir().string() : a.model},
                        {"policy", a.flags.policy},
                        {"budget", a.flags.budget},
                        {"prompt_tokens", a.prompt_tokens},
                        {"decode_tokens", a.decode_tokens},
                        {"recorded_layers", policy_cfg.recording.layers},
                        {"backend_decode_ms_per_token", bare.decode_ms_per_token},
                        {"full_recorded_decode_ms_per_token", full.decode_ms_per_token},
                        {"policy_recorded_decode_ms_per_token", pol.decode_ms_per_token},
                        {"recorder_overhead", rec_over},
                        {"policy_and_recorder_overhead", pol_over},
                        {"recorder_overhead_paired_median", rec_paired},
                        {"policy_and_recorder_overhead_paired_median", pol_paired},
                        {"policy_metrics_decode_ms_per_token", met.decode_ms_per_token},
                        {"metrics_overhead", met_over},
                        {"metrics_overhead_paired_median", met_paired},
                        {"kv_bytes_full", full.kv_bytes},
                        {"kv_bytes_policy", pol.kv_bytes}};
    std::printf("%s\n", j.dump(2).c_str());
    return;
  }
  std::printf("%s, prompt %d tokens, %d decode steps, best of %d\n",
              a.model.empty() ? default_model_dir().string().c_str() : a.model.c_str(), a.prompt_tokens,
              a.decode_tokens, a.repeats);
  std::printf("  backend, full cache, nothing recorded   %8.3f ms/token\n", bare.decode_ms_per_token);
  std::printf("  session, full, %-24s %8.3f ms/token  (%+.1f%%)\n", recorded.c_str(), full.decode_ms_per_token,
              100 * rec_over);
  std::printf("  session, %-14s %-19s %8.3f ms/token  (%+.1f%%)  KV %lld of %lld bytes\n", policy_name.c_str(),
              recorded.c_str(), pol.decode_ms_per_token, 100 * pol_over, static_cast<long long>(pol.kv_bytes),
              static_cast<long long>(full.kv_bytes));
  std::printf("  the same with metrics on (reference paired) %8.3f ms/token  (%+.1f%% over metrics off)\n",
              met.decode_ms_per_token, 100 * met_over);
  std::printf("  median over repeats of each repeat's own ratio: full recorded %+.1f%%, policy %+.1f%%, metrics %+.1f%%\n",
              100 * rec_paired, 100 * pol_paired, 100 * met_paired);
}

}  // namespace kvscope::cli
