// kvscope-cli eval MODEL --dataset F.jsonl: perplexity and answer accuracy
// on a held-out set, under any policy and sharing layout.
#include <cstdio>
#include <optional>

#include <nlohmann/json.hpp>

#include "cli_common.h"
#include "cli_policy.h"
#include "common/error.h"
#include "progress_bar.h"
#include "reports/evaluation.h"
#include "reports/provenance.h"
#include "session_runner.h"
#include "io/json_file.h"

namespace kvscope::cli {
namespace {

struct EvalArgs {
  std::string model, dataset, device = "cpu";
  std::optional<int> limit;  // not given: every item
  uint64_t seed = 0;
  bool json = false;
  PolicyFlags flags;
};

void run_eval(const EvalArgs& a) {
  if (a.limit && *a.limit < 1)
    throw Error("--limit", "", "must be at least 1, got " + std::to_string(*a.limit) + " (leave it out to use every item)");
  auto items = load_eval_set(a.dataset);
  if (a.limit && *a.limit < static_cast<int>(items.size())) items.resize(*a.limit);
  SessionConfig cfg;
  cfg.model = absolute_model_path(a.model);
  cfg.device = a.device;
  cfg.seed = a.seed;
  apply_policy_flags(a.flags, cfg);
  cfg.recording.metrics = cfg.recording.metrics && a.flags.policy != "full";
  resolve_device(a.device);
  auto bundle = bundle_for(cfg.model);
  ProgressBar bar("eval " + std::filesystem::path(a.dataset).filename().string(), static_cast<int>(items.size()));
  const auto r = evaluate(bundle, cfg, items, [&](int done) { bar.update(done); });
  bar.finish();
  nlohmann::json j = {{"dataset", a.dataset},
                      {"items", r.items},
                      {"scored", r.scored},
                      {"accuracy", r.accuracy()},
                      {"answer_mean_nll", r.mean_answer_nll()},
                      {"answer_item_mean_nll", r.mean_item_answer_nll()},
                      {"policy", a.flags.policy},
                      {"budget", a.flags.text("budget")},
                      {"sharing", a.flags.sharing},
                      {"kv_bytes_mean", r.kv_bytes / r.items},
                      {"kv_bytes_full_mean", r.kv_bytes_full / r.items}};
  if (r.text_tokens) j["perplexity"] = r.perplexity();
  if (r.metric_items) {
    j["kl_mean"] = r.kl / r.metric_items;
    j["attention_recall_mean"] = r.recall / r.metric_items;
    j["ideal_similarity_mean"] = r.similarity / r.metric_items;
  }
  if (a.json) {
    // What made the numbers: the build, the command, the model's files and
    // the dataset's, the policy as set.
    nlohmann::json dataset = input_file_json(a.dataset);
    dataset["items"] = r.items;
    j["provenance"] =
        to_json(model_provenance(*bundle, cfg, {{"settings", policy_to_json(cfg.policy)}, {"dataset", dataset}}));
    std::printf("%s\n", json_text(j).c_str());
    return;
  }
  std::printf("dataset     %s (%d items, %d with answers)\n", a.dataset.c_str(), r.items, r.scored);
  std::printf("policy      %s, budget %s, sharing %s\n", a.flags.policy.c_str(), a.flags.text("budget").c_str(),
              a.flags.sharing.c_str());
  if (r.scored)
    std::printf(
        "accuracy    %.1f%% (%d/%d)\nanswer NLL  %.4f nats/token over all answer tokens; %.4f as the mean of "
        "the items' means (a sweep's answer_nll)\n",
        100 * r.accuracy(), r.correct, r.scored, r.mean_answer_nll(), r.mean_item_answer_nll());
  if (r.text_tokens) std::printf("perplexity  %.4f (prompt + answer, %d tokens)\n", r.perplexity(), r.text_tokens);
  std::printf("KV cache    %.1f KiB of %.1f KiB on average\n", r.kv_bytes / r.items / 1024, r.kv_bytes_full / r.items / 1024);
}

}  // namespace

void register_eval(CLI::App& app) {
  auto args = std::make_shared<EvalArgs>();
  auto* cmd = app.add_subcommand("eval", "Answer accuracy and perplexity on a held-out set (JSON lines)");
  add_model_arg(*cmd, args->model);
  cmd->add_option("--dataset", args->dataset, "JSON lines of {\"prompt\": ..., \"answer\": ...}")->required();
  cmd->add_option("--limit", args->limit, "Use only the first N items");
  cmd->add_option("--seed", args->seed, "Seed of the random draws")->default_val(0);
  cmd->add_flag("--json", args->json, "Print JSON");
  add_device_opt(*cmd, args->device);
  add_policy_flags(*cmd, args->flags, false);
  cmd->callback([args] { run_eval(*args); });
}

}  // namespace kvscope::cli
