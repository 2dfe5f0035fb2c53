// kvscope-cli score MODEL --text-file F: teacher-forced NLL and perplexity.
#include <cstdio>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli_common.h"
#include "common/error.h"
#include "session/generator.h"

namespace kvscope::cli {
namespace {

struct ScoreArgs {
  std::string model, text_file, device = "cpu";
  bool json = false;
};

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path, "", "cannot open --text-file");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void run_score(const ScoreArgs& a) {
  const Device dev = resolve_device(a.device);
  const ModelBundle b = load_bundle(a.model);
  const auto ids = encode_prompt(b, read_text(a.text_file), 0, a.text_file);
  if (ids.size() < 2) throw Error(a.text_file, "", "needs at least two tokens to score");
  BackendOptions bo;
  bo.max_tokens = static_cast<int>(ids.size());
  auto backend = make_backend(dev, b.config(), b.files.weights, bo);
  const auto r = score_tokens(*backend, ids);
  if (a.json) {
    nlohmann::json j = {{"tokens", ids.size()}, {"scored", r.scored}, {"mean_nll", r.mean_nll},
                        {"perplexity", r.perplexity}, {"nll", r.nll}, {"device", backend->name()}};
    std::printf("%s\n", j.dump(2).c_str());
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
  add_device_opt(*cmd, args->device);
  cmd->callback([args] { run_score(*args); });
}

}  // namespace kvscope::cli
