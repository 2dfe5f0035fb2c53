// kvscope-cli score MODEL --text-file F: teacher-forced NLL and perplexity.
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli_common.h"
#include "common/error.h"
#include "cli_policy.h"
#include "session/generator.h"
#include "session/session.h"
#include "reports/exporter.h"
#include "session_runner.h"
#include "io/json_file.h"

namespace kvscope::cli {
namespace {

struct ScoreArgs {
  std::string model, text_file, device = "cpu";
  bool json = false;
  int prompt_tokens = -1;
  uint64_t seed = 0;
  PolicyFlags flags;
};

// With a policy the text is split: the first --prompt-tokens tokens are the
// prompt (prefilled, then evicted to the budget), the rest is fed one token
// at a time under the policy and scored (teacher forcing).
void run_score_session(const ScoreArgs& a) {
  std::unique_ptr<OpenOutput> out;  // held to the end: the lock, the staging folder
  if (!a.flags.export_dir.empty()) out = open_export_dir(a.flags.export_dir);
  const std::string text = read_text_file(a.text_file, "--text-file");
  SessionConfig cfg;
  cfg.model = absolute_model_path(a.model);
  auto bundle = bundle_for(cfg.model);
  const auto ids = encode_prompt(*bundle, text, 0, a.text_file);
  if (ids.size() < 2) throw Error(a.text_file, "", "needs at least two tokens to score");
  const int n = static_cast<int>(ids.size());
  const int split = a.prompt_tokens >= 0 ? a.prompt_tokens : n / 2;
  if (split < 1 || split >= n)
    throw Error("--prompt-tokens", "", "must be between 1 and " + std::to_string(n - 1) + " for this text");
  cfg.device = a.device;
  cfg.seed = a.seed;
  cfg.prompt_ids.assign(ids.begin(), ids.begin() + split);
  cfg.continuation_ids.assign(ids.begin() + split, ids.end());
  apply_policy_flags(a.flags, cfg);
  resolve_device(a.device);
  auto sp = make_flag_session(bundle, cfg);
  Session& s = *sp;
  note_recording(s, "--record-mb");
  s.run_to_end();
  double nll = 0, nll_full = 0;
  int scored = 0;
  std::vector<double> nlls, nlls_full;  // per scored token, in order
  for (const auto& m : s.recorder().metrics())
    if (!std::isnan(m.nll)) {
      nll += m.nll;
      nll_full += m.nll_full;
      nlls.push_back(m.nll);
      nlls_full.push_back(m.nll_full);
      ++scored;
    }
  const double mean = nll / scored, mean_full = nll_full / scored;
  if (a.json) {
    nlohmann::json j = {{"tokens", n}, {"prompt_tokens", split}, {"scored", scored}, {"mean_nll", mean},
                        {"perplexity", std::exp(mean)}, {"nll", nlls}, {"policy", a.flags.policy},
                        {"device", s.backend().name()}};
    if (cfg.recording.metrics) {
      j["mean_nll_full"] = mean_full;
      j["perplexity_full"] = std::exp(mean_full);
      j["nll_full"] = nlls_full;
    }
    std::printf("%s\n", json_text(j).c_str());
  } else {
    std::printf("tokens      %d (prompt %d, %d scored under %s)\nmean NLL    %.6f nats\nperplexity  %.4f\n", n, split,
                scored, a.flags.policy.c_str(), mean, std::exp(mean));
    if (cfg.recording.metrics)
      std::printf("full cache  mean NLL %.6f, perplexity %.4f\n", mean_full, std::exp(mean_full));
  }
  std::fprintf(stderr, "%s\n", session_summary(s).c_str());
  if (out) {
    const auto files = export_session(s, *out->folder);
    std::fprintf(stderr, "exported %zu files to %s\n", files.size(), a.flags.export_dir.c_str());
  }
}

void run_score(const ScoreArgs& a) {
  if (a.flags.needs_session() || a.prompt_tokens >= 0) return run_score_session(a);
  resolve_device(a.device);  // a missing GPU is named before the model loads
  const ModelBundle b = load_bundle(a.model);
  const Device dev = resolve_device(a.device, b.config());
  const auto ids = encode_prompt(b, read_text_file(a.text_file, "--text-file"), 0, a.text_file);
  if (ids.size() < 2) throw Error(a.text_file, "", "needs at least two tokens to score");
  BackendOptions bo;
  bo.max_tokens = static_cast<int>(ids.size());
  bo.weights = parse_weight_format(a.flags.weights);
  auto backend = make_backend(dev, b.config(), b.files.weights, bo);
  const auto r = score_tokens(*backend, ids);
  if (a.json) {
    nlohmann::json j = {{"tokens", ids.size()}, {"scored", r.scored}, {"mean_nll", r.mean_nll},
                        {"perplexity", r.perplexity}, {"nll", r.nll}, {"device", backend->name()}};
    std::printf("%s\n", json_text(j).c_str());
    return;
  }
  std::printf("tokens      %zu (%d scored)\nmean NLL    %.6f nats\nperplexity  %.4f\n", ids.size(), r.scored,
              r.mean_nll, r.perplexity);
}

}  // namespace

void register_score(CLI::App& app) {
  auto args = std::make_shared<ScoreArgs>();
  auto* cmd = app.add_subcommand("score", "Mean NLL and perplexity of a text (teacher forcing)");
  add_model_arg(*cmd, args->model);
  cmd->add_option("--text-file", args->text_file, "UTF-8 text file to score")->required();
  cmd->add_flag("--json", args->json, "Print JSON (with the per-token NLL)");
  cmd->add_option("--prompt-tokens", args->prompt_tokens,
                  "With a policy: tokens prefilled as the prompt before scoring the rest (default: half)");
  cmd->add_option("--seed", args->seed, "Seed of the random draws (Keyformer noise, random policy)")->default_val(0);
  add_device_opt(*cmd, args->device);
  add_policy_flags(*cmd, args->flags);
  cmd->callback([args] { run_score(*args); });
}

}  // namespace kvscope::cli
