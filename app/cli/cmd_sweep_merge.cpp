// kvscope-cli sweep-merge OUT SHARD_DIR...: the shards of one sweep
// (`sweep ... --shard i/n --out SHARD_DIR`, each DIR/sweep_shard.json) into
// the files one `sweep ... --out OUT` writes, byte for byte: the same
// cells, their rows in the same order, the same summary and plots, the
// same provenance. Refused before anything is written: shards of another
// sweep (settings, kvscope version or model differ), a shard given twice,
// a missing shard (named, with the command that computes it) or unit.
#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

#include "cli_common.h"
#include "common/error.h"
#include "reports/provenance.h"
#include "session/session_config.h"
#include "shard_plan.h"
#include "sweep_output.h"
#include "sweep_results.h"
#include "sweep_shard.h"

namespace kvscope::cli {
namespace {

struct MergeArgs {
  std::string out;
  std::vector<std::string> shards;
};

// What makes two shards' numbers comparable besides their settings: the
// same kvscope and the same model (every file's hash and the configuration).
std::string build_and_model(const Provenance& p) {
  std::string s = p.version + " " + p.commit + " " + p.config_sha256;
  for (const auto& f : p.model_files) s += " " + f.name + ":" + f.sha256;
  return s;
}

// The settings key in which two identities differ (for the message).
std::string differing_setting(const nlohmann::json& a, const nlohmann::json& b) {
  for (const auto& [k, v] : a.items())
    if (!b.contains(k) || b.at(k) != v) return k;
  for (const auto& [k, v] : b.items())
    if (!a.contains(k)) return k;
  return "";
}

void run_merge(const MergeArgs& a) {
  if (a.shards.empty()) throw Error("sweep-merge", "", "no shard folders given");
  check_output_dir(a.out, "OUT");
  std::vector<ShardResult> shards;
  std::vector<std::filesystem::path> files;
  for (const auto& dir : a.shards) {
    files.push_back(std::filesystem::path(dir) / kShardFileName);
    shards.push_back(read_shard_file(files.back()));
  }
  const ShardResult& first = shards.front();
  const int count = first.shard.count;
  std::map<int, std::size_t> seen;  // shard index -> which argument
  for (std::size_t s = 0; s < shards.size(); ++s) {
    const ShardResult& r = shards[s];
    const std::string file = files[s].string();
    if (r.identity != first.identity)
      throw Error(file, "identity",
                  "belongs to another sweep than " + files[0].string() + " (its " +
                      differing_setting(first.identity, r.identity) + " differ)");
    if (build_and_model(r.provenance) != build_and_model(first.provenance))
      throw Error(file, "provenance",
                  "was computed by another kvscope build or from another model than " + files[0].string() + " (" +
                      r.provenance.version + " " + r.provenance.commit + ", model " + r.provenance.model + " against " +
                      first.provenance.version + " " + first.provenance.commit + ", model " + first.provenance.model +
                      ")");
    if (r.provenance.command_line != first.provenance.command_line)
      throw Error(file, "provenance",
                  "was run by another command than " + files[0].string() + " ('" + r.provenance.command_line +
                      "' against '" + first.provenance.command_line + "')");
    if (r.shard.count != count)
      throw Error(file, "shard",
                  "is shard " + r.shard.text() + ", of another split than " + files[0].string() + " (" +
                      first.shard.text() + ")");
    if (const auto it = seen.find(r.shard.index); it != seen.end())
      throw Error(file, "shard", "is shard " + r.shard.text() + " again (also " + files[it->second].string() + ")");
    seen[r.shard.index] = s;
  }
  if (static_cast<int>(seen.size()) != count) {
    std::string missing, example;
    for (int i = 0; i < count; ++i)
      if (!seen.count(i)) {
        missing += (missing.empty() ? "" : ", ") + std::to_string(i);
        if (example.empty()) example = std::to_string(i) + "/" + std::to_string(count);
      }
    throw Error("sweep-merge", "",
                "shard" + std::string(count - seen.size() > 1 ? "s " : " ") + missing + " of " + std::to_string(count) +
                    " missing; compute each with: " + first.provenance.command_line + " --shard " + example +
                    " --out DIR");
  }

  // The sweep's axes, from its settings.
  const auto policies = split_list(first.identity.at("policies").get<std::string>());
  const auto budgets = split_list(first.identity.at("budgets").get<std::string>());
  const int n_items = std::max(1, first.identity.at("items").get<int>());
  std::vector<PolicyKind> kinds;
  std::vector<Amount> amounts;
  for (const auto& p : policies) kinds.push_back(parse_policy(p));
  for (const auto& b : budgets) amounts.push_back(Amount::parse(b, "budgets"));
  // Every (policy, item) unit exactly once.
  std::map<std::pair<std::string, int>, std::size_t> owner;
  for (std::size_t s = 0; s < shards.size(); ++s)
    for (const auto& u : shards[s].units) {
      const auto key = std::make_pair(u.at(0).get<std::string>(), u.at(1).get<int>());
      if (const auto it = owner.find(key); it != owner.end())
        throw Error(files[s].string(), "units",
                    "item " + std::to_string(key.second) + " of policy " + key.first + " is also in " +
                        files[it->second].string());
      owner[key] = s;
    }
  for (const auto& p : policies)
    for (int i = 1; i <= n_items; ++i)
      if (!owner.count({p, i}))
        throw Error("sweep-merge", "",
                    "no shard holds item " + std::to_string(i) + " of policy " + p + "; run its shard again: " +
                        first.provenance.command_line + " --shard i/" + std::to_string(count) + " --out DIR");

  // The cells in the sweep's order, each one's rows as one process writes
  // them: seed by seed, items (or steps) ascending.
  std::vector<Cell> cells;
  for (std::size_t pi = 0; pi < policies.size(); ++pi)
    for (std::size_t bi = 0; bi < budgets.size(); ++bi) {
      Cell c;
      c.policy = policies[pi];
      c.budget = budgets[bi];
      c.budget_value = amounts[bi].value;
      for (const ShardResult& r : shards)
        for (const Cell& sc : r.cells)
          if (sc.policy == c.policy && sc.budget == c.budget) {
            c.items.insert(c.items.end(), sc.items.begin(), sc.items.end());
            c.steps.insert(c.steps.end(), sc.steps.begin(), sc.steps.end());
          }
      auto by_seed_then_item = [](const SweepItemResult& x, const SweepItemResult& y) {
        return x.seed != y.seed ? x.seed < y.seed : x.item < y.item;
      };
      std::stable_sort(c.items.begin(), c.items.end(), by_seed_then_item);
      std::stable_sort(c.steps.begin(), c.steps.end(), by_seed_then_item);
      cells.push_back(std::move(c));
    }

  // The figure settings the sweep ran with, and its provenance.
  const SessionConfig session = SessionConfig::from_json(first.session, files[0].string());
  SweepResultsSpec spec;
  spec.policies = policies;
  spec.budgets = budgets;
  spec.kinds = kinds;
  spec.amounts = amounts;
  spec.dataset = first.identity.at("dataset").get<std::string>();
  spec.figure_opts = FigureExportOptions::from(session.export_opts);
  spec.provenance = first.provenance;
  // Shards on different machines: every CPU and thread count they ran on.
  std::set<std::string> cpus;
  for (const ShardResult& r : shards)
    cpus.insert(r.provenance.cpu + (r.provenance.threads != first.provenance.threads
                                        ? " (" + std::to_string(r.provenance.threads) + " threads)"
                                        : ""));
  if (cpus.size() > 1) {
    std::string all;
    for (const auto& c : cpus) all += (all.empty() ? "" : "; ") + c;
    spec.provenance.cpu = all;
  }
  spec.figure_opts.output.metadata = figure_metadata(spec.provenance);

  InterruptScope interrupts;
  const auto folder = open_sweep_folder(a.out);
  create_output_dir(a.out, "OUT");
  const SweepResultsWritten written = write_sweep_results(spec, cells, *folder);
  std::printf("%s", written.summary_csv.c_str());
  std::fprintf(stderr, "merged %zu shards into %s/sweep.csv, %zu plots\n", shards.size(), a.out.c_str(), written.plots);
}

}  // namespace

void register_sweep_merge(CLI::App& app) {
  auto args = std::make_shared<MergeArgs>();
  auto* cmd = app.add_subcommand("sweep-merge",
                                 "Merge the shards of one sweep (sweep --shard i/n) into the files one sweep writes");
  cmd->add_option("out", args->out, "Output directory (as sweep --out)")->required()->check(nonempty_dir_name());
  cmd->add_option("shards", args->shards, "The shards' --out folders, every shard of the sweep once")->required();
  cmd->callback([args] {
    try {
      run_merge(*args);
    } catch (const Error& e) {
      throw OutputFolder::in_target_words(e, args->out);
    }
  });
}

}  // namespace kvscope::cli
