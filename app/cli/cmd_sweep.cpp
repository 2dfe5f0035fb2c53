// kvscope-cli sweep SESSION --policies a,b --budgets 10%,50%,90% --out DIR:
// the grid of policies x budgets — the papers' quality-versus-cache-size
// figures. With --dataset each cell is an evaluation (answer accuracy, NLL);
// without, each cell runs the session itself (KL, top-1 agreement, recall,
// similarity, and NLL of one reference continuation, teacher forced).
// Every item x seed is kept (sweep_items.csv); sweep.csv summarizes them
// (reports/sweep_summary.h).
#include <cmath>
#include <cstdio>
#include <sstream>
#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "cli_common.h"
#include "common/error.h"
#include "cli_policy.h"
#include "figures/heatmap.h"
#include "figures/line_plot.h"
#include "io/atomic_file.h"
#include "io/csv_writer.h"
#include "io/interrupt.h"
#include "io/json_file.h"
#include "policy/draws_random.h"
#include "progress_bar.h"
#include "reports/evaluation.h"
#include "reports/figure_export.h"
#include "reports/informative_head.h"
#include "reports/sweep_summary.h"
#include "reports/provenance.h"
#include "session/metric_sums.h"
#include "session/session.h"
#include "session_runner.h"
#include "sweep_output.h"
#include "shard_plan.h"
#include "sweep_results.h"
#include "sweep_shard.h"

namespace kvscope::cli {
namespace {

struct SweepArgs {
  std::string session, policies = "window,sink,h2o,tova,keyformer,a2sf,random", budgets = "10%,20%,30%,50%,70%,90%";
  std::string out, dataset;
  std::optional<int> limit;  // not given: every item
  FigureFlags figures;
  bool heatmaps = false;
  bool resume = false;
  int seeds = 1;  // seeds per item for the policies that draw random numbers
  std::string shard;  // --shard i/n: only this shard's (policy, item) units (shard_plan.h)
};

// The sweep as a command that computes its numbers: the CLI's words less
// where they go (--out) and how this process got them (--resume, --shard,
// --threads, which changes no number), so a sweep run whole, resumed or in
// shards on machines of any size and merged records one command
// (sweep.provenance.json and every plot's metadata).
std::string canonical_sweep_command() {
  const std::vector<std::string> words = command_words();
  std::vector<std::string> kept;
  for (std::size_t i = 0; i < words.size(); ++i) {
    const std::string& w = words[i];
    if (w == "--out" || w == "--shard" || w == "--threads") {
      ++i;  // and its value
      continue;
    }
    if (w == "--resume" || w.rfind("--out=", 0) == 0 || w.rfind("--shard=", 0) == 0 || w.rfind("--threads=", 0) == 0)
      continue;
    kept.push_back(w);
  }
  return kept.empty() ? command_line() : shell_quoted(kept);
}

// Ctrl-C (or SIGTERM) during a sweep: the cell running finishes, every
// finished cell is already on disk (OUT/cells/), and --resume goes on from
// there. A second Ctrl-C stops at once (the default action; io/interrupt.h).

// The settings that make a sweep's cells comparable: a resumed sweep must
// have the same ones, or its finished cells would be mixed with others.
nlohmann::json sweep_identity(const SessionConfig& base, const SweepArgs& a, std::size_t items) {
  nlohmann::json session = base.to_json();
  session.erase("export");  // figures do not change the numbers
  return {{"session", session}, {"policies", a.policies}, {"budgets", a.budgets}, {"dataset", a.dataset},
          {"items", items},     {"heatmaps", a.heatmaps}, {"seeds", a.seeds}};
}

std::filesystem::path cell_file(const std::filesystem::path& out, const std::string& policy, const std::string& budget) {
  return out / "cells" / (policy + "_" + budget_tag(budget) + ".json");
}

void save_cell(const std::filesystem::path& out, const Cell& c) {
  nlohmann::json j = {{"policy", c.policy}, {"budget", c.budget}, {"items", rows_json(c.items)}};
  if (!c.steps.empty()) j["steps"] = rows_json(c.steps);
  write_text_file(cell_file(out, c.policy, c.budget), j.dump(1) + "\n");
}

std::optional<Cell> load_cell(const std::filesystem::path& out, const std::string& policy, const std::string& budget,
                              double budget_value) {
  const auto f = cell_file(out, policy, budget);
  std::error_code ec;
  if (!std::filesystem::exists(f, ec)) return std::nullopt;
  const nlohmann::json j = read_json_file(f);
  Cell c{policy, budget, budget_value, {}, {}, {}, {}};
  try {
    c.items = rows_from_json(j.at("items"), policy, budget);
    if (j.contains("steps")) c.steps = rows_from_json(j.at("steps"), policy, budget);
  } catch (const nlohmann::json::exception& e) {
    throw Error(f.string(), "", std::string("not a finished sweep cell: ") + e.what());
  }
  return c;
}

// One evaluation's items as sweep rows (item numbers from 1).
std::vector<SweepItemResult> item_rows(const EvalResult& r, const std::string& policy, const std::string& budget,
                                       uint64_t seed) {
  std::vector<SweepItemResult> rows;
  for (std::size_t i = 0; i < r.per_item.size(); ++i) {
    const EvalItemResult& it = r.per_item[i];
    SweepItemResult row{static_cast<int>(i) + 1, policy, budget, seed, {}};
    if (it.scored) {
      row.metrics["accuracy"] = it.correct ? 1 : 0;
      row.metrics["answer_nll"] = it.answer_nll;
    }
    if (it.has_metrics) {
      row.metrics["kl"] = it.kl;
      row.metrics["top1_agreement"] = it.top1_agreement;
      row.metrics["attention_recall"] = it.recall;
      row.metrics["ideal_similarity"] = it.similarity;
    }
    row.metrics["kv_bytes"] = it.kv_bytes;
    rows.push_back(std::move(row));
  }
  return rows;
}

// Means of a finished session's per-step metrics (the sums `run`'s summary
// line prints too), and its KV bytes at the end.
std::map<std::string, double> session_means(const Session& s) {
  std::map<std::string, double> out = metric_means(sum_metrics(s.recorder().metrics()));
  out["kv_bytes"] = static_cast<double>(s.recorder().metrics().back().kv_bytes);
  return out;
}

// A cell's budget error names --budgets and the entry; anything else the
// engine raised is about the session file.
[[noreturn]] void rethrow_for_cell(const Error& e, const SweepArgs& a, const std::string& policy,
                                   const std::string& budget, const std::string& where) {
  if (e.field() == "policy.budget")
    throw Error("--budgets", "", "'" + budget + "' with policy '" + policy + "': " + e.problem() + where);
  throw e.in_file(a.session);
}

void run_sweep(const SweepArgs& a) {
  // Every check before any cell runs: flags, the output directory, the
  // session file, the model, then each cell's policy and budget.
  if (a.limit && *a.limit < 1)
    throw Error("--limit", "", "must be at least 1, got " + std::to_string(*a.limit) + " (leave it out to use every item)");
  if (a.limit && a.dataset.empty()) throw Error("--limit", "", "applies to --dataset items; no --dataset given");
  if (a.seeds < 1) throw Error("--seeds", "", "must be at least 1, got " + std::to_string(a.seeds));
  std::optional<ShardSpec> shard;
  if (!a.shard.empty()) {
    shard = parse_shard(a.shard);
    if (a.heatmaps)
      throw Error("--heatmaps", "",
                  "pictures are not kept in a shard's results, so sweep-merge could not draw them; "
                  "leave out --heatmaps or --shard");
  }
  if (a.heatmaps && !a.dataset.empty())
    throw Error("--heatmaps", "", "draws each cell's run of the session; with --dataset a cell is many runs (leave one out)");
  const auto policies = split_list(a.policies);
  const auto budgets = split_list(a.budgets);
  if (policies.empty()) throw Error("--policies", "", "no policy given");
  if (budgets.empty()) throw Error("--budgets", "", "no budget given");
  std::vector<PolicyKind> kinds;
  std::vector<Amount> amounts;
  for (const auto& p : policies) {
    try {
      kinds.push_back(parse_policy(p));
    } catch (const Error& e) {
      throw e.renamed("--policies");
    }
  }
  for (const auto& b : budgets) amounts.push_back(Amount::parse(b, "--budgets"));
  // One axis: all counts, all percentages of the prompt or all compression ratios.
  auto form = [](const Amount& am) {
    return am.ratio ? "compression ratios" : am.percent ? "percentages" : "token counts";
  };
  for (std::size_t i = 1; i < amounts.size(); ++i)
    if (std::string(form(amounts[i])) != form(amounts[0]))
      throw Error("--budgets", "",
                  std::string("mixes ") + form(amounts[0]) + " ('" + budgets[0] + "') and " + form(amounts[i]) + " ('" +
                      budgets[i] +
                      "'); give every budget as a count, every budget as a percentage or every "
                      "budget as a compression ratio");
  check_output_dir(a.out, "--out");
  // Locked, and a file of the user's that the results would replace
  // refused, before any work (sweep_output.h).
  InterruptScope interrupts;
  const auto folder = open_sweep_folder(a.out);
  if (const std::string note = folder->note(); !note.empty())
    std::fprintf(stderr, "kvscope-cli: note: %s\n", note.c_str());
  SessionFile file = load_session_file(a.session);
  // Plots default to PNG and SVG (as sweeps always wrote); the flags and the
  // session's export block choose otherwise.
  if (a.figures.formats.empty() && file.cfg.export_opts.formats == ExportConfig{}.formats)
    file.cfg.export_opts.formats = {"png", "svg"};
  apply_figure_flags(a.figures, file.cfg.export_opts);
  const SessionConfig& base = file.cfg;
  FigureExportOptions figure_opts = FigureExportOptions::from(base.export_opts);
  const std::shared_ptr<const ModelBundle>& bundle = file.bundle;
  std::vector<EvalItem> items;
  if (!a.dataset.empty()) {
    items = load_eval_set(a.dataset);
    if (a.limit && *a.limit < static_cast<int>(items.size())) items.resize(*a.limit);
  }
  // Session sweeps score every cell on one text, the full cache's own
  // continuation of the session (its greedy one, unless the session
  // samples), teacher forced, so that their NLLs compare; a session that
  // teacher-forces a continuation of its own is scored on that.
  const bool needs_reference = items.empty() && !base.continuation && base.continuation_ids.empty();
  std::vector<int> reference;
  auto cell_config = [&](std::size_t pi, std::size_t bi, uint64_t seed) {
    SessionConfig cfg = base;
    cfg.policy.kind = kinds[pi];
    cfg.policy.budget = amounts[bi];
    cfg.seed = seed;
    if (needs_reference) cfg.continuation_ids = reference;
    return cfg;
  };
  // A policy that draws random numbers runs once per seed, base seed +
  // 0 .. --seeds - 1; any other once, with the session's seed.
  auto cell_seeds = [&](std::size_t pi) {
    std::vector<uint64_t> seeds{base.seed};
    if (draws_random(cell_config(pi, 0, base.seed).policy))
      for (int i = 1; i < a.seeds; ++i) seeds.push_back(base.seed + static_cast<uint64_t>(i));
    return seeds;
  };
  // Each cell's policy against each prompt it will run on (the Session
  // resolves it the same way), so no cell fails after others have run.
  std::vector<std::pair<int, std::string>> prompts;  // prompt length, where (one for a session sweep)
  EncodedItems encoded;                              // the dataset's items, encoded once for every policy
  {
    const int context = bundle->config().max_positions;
    if (items.empty()) {
      const int n = base.prompt_ids.empty() ? static_cast<int>(bundle->tokenizer->encode(base.prompt, true).size())
                                            : static_cast<int>(base.prompt_ids.size());
      prompts.push_back({n, ""});
    } else {
      // Each item's length first (a prompt longer than the model is the
      // item's fault, not a budget's), before any file is written.
      encoded = encode_eval_items(*bundle, base.max_new_tokens, items);
      for (std::size_t i = 0; i < items.size(); ++i)
        prompts.push_back(
            {static_cast<int>(encoded.prompts[i].size()), " (" + a.dataset + ": item " + std::to_string(i + 1) + ")"});
    }
    for (std::size_t pi = 0; pi < kinds.size(); ++pi)
      for (std::size_t bi = 0; bi < amounts.size(); ++bi) {
        const SessionConfig cfg = cell_config(pi, bi, base.seed);
        for (const auto& [n, where] : prompts) {
          if (n < 1) continue;  // an empty prompt: the Session names it
          try {
            resolve_policy(cfg.policy, n, context);
          } catch (const Error& e) {
            rethrow_for_cell(e, a, policies[pi], budgets[bi], where);
          }
        }
      }
  }
  // Without a dataset the first Session made (the reference run's, else
  // the first cell's) also checks what the session file sets against the
  // model (layers, prompt length) before the directory is made.
  auto make_session = [&](std::size_t pi, std::size_t bi, uint64_t seed) {
    try {
      return std::make_unique<Session>(bundle, cell_config(pi, bi, seed));
    } catch (const Error& e) {
      rethrow_for_cell(e, a, policies[pi], budgets[bi], "");
    }
  };
  std::unique_ptr<Session> reference_run;
  if (needs_reference) {
    SessionConfig rc = base;
    rc.policy = PolicyParams{};  // the full cache
    rc.policy_changes.clear();
    rc.recording.metrics = false;
    try {
      reference_run = std::make_unique<Session>(bundle, rc);
    } catch (const Error& e) {
      throw e.in_file(a.session);
    }
  }
  // The full cache does not depend on the budget: it runs once per item
  // (and seed), and that result is every budget's.
  auto runs_once = [&](std::size_t pi) { return kinds[pi] == PolicyKind::Full; };
  // --shard: this shard's (policy, item) units, planned by cost (shard_plan.h).
  const std::size_t n_units_per_policy = std::max<std::size_t>(1, items.size());
  std::vector<std::vector<std::size_t>> shard_items(kinds.size());  // per policy: item indices (0 for a session sweep)
  for (std::size_t pi = 0; pi < kinds.size(); ++pi)
    for (std::size_t i = 0; i < n_units_per_policy; ++i) shard_items[pi].push_back(i);
  if (shard) {
    std::vector<int64_t> costs;
    for (std::size_t pi = 0; pi < kinds.size(); ++pi) {
      const int64_t runs = int64_t(cell_seeds(pi).size()) * (runs_once(pi) ? 1 : int64_t(amounts.size()));
      for (std::size_t i = 0; i < n_units_per_policy; ++i) costs.push_back(std::max(prompts[i].first, 1) * runs);
    }
    const std::vector<int> owner = plan_shards(costs, shard->count);
    for (std::size_t pi = 0; pi < kinds.size(); ++pi) {
      shard_items[pi].clear();
      for (std::size_t i = 0; i < n_units_per_policy; ++i)
        if (owner[pi * n_units_per_policy + i] == shard->index) shard_items[pi].push_back(i);
    }
  }
  // Finished cells are kept in OUT/cells/ as they complete, beside the
  // settings they belong to; --resume takes them instead of running again.
  const std::filesystem::path out = a.out;
  const nlohmann::json base_identity = sweep_identity(base, a, items.size());
  nlohmann::json identity = base_identity;
  if (shard) identity["shard"] = shard->text();
  if (a.resume) {
    std::error_code ec;
    if (!std::filesystem::exists(out / "cells" / "sweep.json", ec))
      throw Error("--resume", "", "no interrupted sweep in " + a.out + " (cells/sweep.json is missing)");
    if (read_json_file(out / "cells" / "sweep.json") != identity)
      throw Error("--resume", "", a.out + " holds a sweep with other settings (session, policies, budgets, dataset or "
                                  "--heatmaps); run it again without --resume into a new folder");
  } else {
    std::error_code ec;
    if (std::filesystem::exists(out / "cells" / "sweep.json", ec))
      throw Error("--out", a.out, "holds an interrupted sweep: add --resume to go on with it, or choose another folder");
  }
  std::unique_ptr<Session> first;
  if (items.empty() && !a.resume && !needs_reference && !shard_items[0].empty()) first = make_session(0, 0, base.seed);
  // What made the sweep (sweep.provenance.json and every plot): computed
  // before any cell runs, as it hashes the model once.
  Provenance provenance;
  try {
    nlohmann::json sweep = {{"policies", policies}, {"budgets", budgets}, {"seeds", a.seeds}};
    // The evaluation set by its bytes, not only its path.
    if (!a.dataset.empty()) {
      sweep["dataset"] = input_file_json(a.dataset);
      sweep["dataset"]["items"] = items.size();
    }
    provenance = model_provenance(*bundle, base, {{"sweep", sweep}, {"settings", policy_to_json(base.policy)}});
  } catch (const Error& e) {
    throw e.in_file(a.session);
  }
  provenance.command_line = canonical_sweep_command();
  figure_opts.output.metadata = figure_metadata(provenance);
  create_output_dir(a.out, "--out");
  std::filesystem::create_directories(out / "cells");
  write_text_file(out / "cells" / "sweep.json", identity.dump(1) + "\n");

  if (reference_run) {
    reference_run->run_to_end();
    reference = reference_run->generated();
    reference_run.reset();
  }
  int total = 0;
  for (std::size_t pi = 0; pi < kinds.size(); ++pi)
    total += static_cast<int>(shard_items[pi].size() * cell_seeds(pi).size()) *
             (runs_once(pi) ? 1 : static_cast<int>(amounts.size()));
  ProgressBar bar("sweep", total);
  int done = 0;
  std::vector<Cell> cells;
  int cells_saved = 0;                              // by this run (not resumed, not full's copies)
  std::optional<std::pair<int, int>> heatmap_head;  // --heatmaps: one (layer, head) for every cell
  if (base.export_opts.layer_head_chosen()) heatmap_head = {base.export_opts.csv_layer(), base.export_opts.csv_head()};
  auto stop_if_interrupted = [&] {
    if (!interrupt_requested()) return;
    bar.abandon();  // no "N done" line: they are not
    throw Interrupted(std::to_string(cells.size()) + " of " + std::to_string(kinds.size() * amounts.size()) +
                      " cells are saved in " + (out / "cells").string() +
                      "; run the same command with --resume to go on");
  };
  // A Ctrl-C inside a run (its prompt pass checks too) ends as one between
  // cells does: with what was saved and how to go on.
  try {
    for (std::size_t pi = 0; pi < kinds.size(); ++pi) {
      if (shard_items[pi].empty()) continue;  // none of this policy's units is this shard's
      const std::vector<uint64_t> seeds = cell_seeds(pi);
      const int cell_runs = static_cast<int>(shard_items[pi].size() * seeds.size());
      // The items this process runs (all, or this shard's), and their place in the set.
      std::vector<EvalItem> run_items;
      EncodedItems run_encoded;
      for (std::size_t i : shard_items[pi])
        if (!items.empty()) {
          run_items.push_back(items[i]);
          run_encoded.prompts.push_back(encoded.prompts[i]);
          run_encoded.answers.push_back(encoded.answers[i]);
        }
      // --heatmaps cells hold a picture that is not saved with the numbers: they run again.
      std::vector<std::optional<Cell>> saved(amounts.size());
      if (a.resume && !a.heatmaps)
        for (std::size_t bi = 0; bi < amounts.size(); ++bi)
          if (!runs_once(pi) || bi == 0) saved[bi] = load_cell(out, policies[pi], budgets[bi], amounts[bi].value);
      // With a dataset, this policy's budgets and seeds run item by item
      // together, so each prompt's forward pass is shared among them
      // (evaluate_many); each result is that of its own run, bit for bit.
      std::vector<EvalResult> evaluated;
      std::vector<std::pair<std::size_t, uint64_t>> evaluated_runs;  // (budget, seed) of each result
      if (!items.empty()) {
        std::vector<SessionConfig> configs;
        for (std::size_t bi = 0; bi < amounts.size(); ++bi) {
          if ((runs_once(pi) && bi > 0) || saved[bi]) continue;
          for (const uint64_t seed : seeds) {
            configs.push_back(cell_config(pi, bi, seed));
            evaluated_runs.push_back({bi, seed});
          }
        }
        stop_if_interrupted();
        const int before = done;
        evaluated = evaluate_many(bundle, configs, run_items, run_encoded, [&](int k) {
          stop_if_interrupted();
          bar.update(before + k);
        });
        done = before + static_cast<int>(configs.size() * run_items.size());
      }
      for (std::size_t bi = 0; bi < amounts.size(); ++bi) {
        stop_if_interrupted();
        if (runs_once(pi) && bi > 0) {  // the first budget's run, as this budget's
          Cell c = cells.back();
          c.budget = budgets[bi];
          c.budget_value = amounts[bi].value;
          for (auto& r : c.items) r.budget = budgets[bi];
          for (auto& r : c.steps) r.budget = budgets[bi];
          cells.push_back(std::move(c));
          continue;
        }
        if (saved[bi]) {
          cells.push_back(std::move(*saved[bi]));
          done += cell_runs;
          bar.update(done);
          continue;
        }
        Cell c{policies[pi], budgets[bi], amounts[bi].value, {}, {}, {}, {}};
        for (const uint64_t seed : seeds) {
          if (items.empty()) {
            std::unique_ptr<Session> s = first ? std::move(first) : make_session(pi, bi, seed);
            s->run_to_end();
            c.items.push_back({1, policies[pi], budgets[bi], seed, session_means(*s)});
            for (const StepMetrics& m : s->recorder().metrics())
              if (counts_in_means(m))
                c.steps.push_back({m.step, policies[pi], budgets[bi], seed, step_metric_values(m)});
            if (a.heatmaps && seed == seeds.front()) {
              // The first cell's most informative head, unless the session names
              // one: every cell draws the same head, so their pictures compare.
              if (!heatmap_head) {
                const HeadChoice h = informative_head(*s);
                heatmap_head = {h.layer, h.head};
              }
              const auto [l, h] = *heatmap_head;
              c.heatmap = attention_heatmap_data(*s, l, h);
              c.heatmap_title = figure_title(*s, l, h, c.heatmap.rows);
            }
            bar.update(++done);
          } else {
            const auto at = std::find(evaluated_runs.begin(), evaluated_runs.end(), std::pair{bi, seed});
            auto rows = item_rows(evaluated[at - evaluated_runs.begin()], policies[pi], budgets[bi], seed);
            for (auto& r : rows)
              r.item = static_cast<int>(shard_items[pi][r.item - 1]) + 1;  // the item's place in the set
            c.items.insert(c.items.end(), rows.begin(), rows.end());
          }
        }
        save_cell(out, c);
        cells.push_back(std::move(c));
        if (++cells_saved == 2) test_pause_point("second cell saved", "");  // the tests' Ctrl-C between cells
      }
    }
  } catch (const Interrupted&) {
    stop_if_interrupted();
    throw;
  }
  bar.finish();
  std::error_code ec;
  if (shard) {
    // A shard's result: its cells with the settings sweep-merge checks
    // them against (sweep_shard.h), committed like any sweep's files.
    nlohmann::json units = nlohmann::json::array();
    for (std::size_t pi = 0; pi < kinds.size(); ++pi)
      for (std::size_t i : shard_items[pi]) units.push_back({policies[pi], static_cast<int>(i) + 1});
    write_shard_file(folder->staging(), ShardResult{*shard, base_identity, base.to_json(), provenance, units, cells});
    commit_sweep(*folder);
    std::filesystem::remove_all(out / "cells", ec);
    std::fprintf(stderr, "wrote %s/%s: shard %s, %zu units, %zu cells\n", a.out.c_str(), kShardFileName,
                 shard->text().c_str(), units.size(), cells.size());
    return;
  }
  SweepResultsSpec spec{policies, budgets, kinds, amounts, a.dataset, a.heatmaps, figure_opts, provenance};
  const SweepResultsWritten written = write_sweep_results(spec, cells, *folder);
  std::printf("%s", written.summary_csv.c_str());
  // Finished: sweep.csv holds every cell; the checkpoints go, so the
  // folder reads as one complete sweep (and a rerun starts afresh).
  std::filesystem::remove_all(out / "cells", ec);
  std::fprintf(stderr, "wrote %s/sweep.csv, %zu plots%s\n", a.out.c_str(), written.plots,
               written.heatmaps ? (" and " + std::to_string(written.heatmaps) + " heatmaps").c_str() : "");
}

}  // namespace

void register_sweep(CLI::App& app) {
  auto args = std::make_shared<SweepArgs>();
  auto* cmd = app.add_subcommand("sweep", "Run a session for every policy x budget; CSV and plots");
  cmd->add_option("session", args->session, "Session JSON file (model, prompt, other settings)")->required();
  cmd->add_option("--policies", args->policies, "Comma-separated policies");
  cmd->add_option(
      "--budgets", args->budgets,
      "Comma-separated budgets (counts, percentages or compression ratios: 64,128 or 10%,50% or ratio:0.25,ratio:0.5)");
  cmd->add_option("--out", args->out, "Output directory")->required()->check(nonempty_dir_name());
  cmd->add_option("--dataset", args->dataset, "Evaluate each cell on this JSON-lines set instead of the session prompt");
  cmd->add_option("--limit", args->limit, "Use only the first N dataset items");
  cmd->add_flag("--heatmaps", args->heatmaps,
                "Also draw each cell's attention heatmap (the session's export layer/head, else the first cell's "
                "most informative head), one colour range over all cells unless --range says otherwise");
  cmd->add_flag("--resume", args->resume,
                "Go on with a sweep interrupted by Ctrl-C in --out: its finished cells (--out/cells) are kept");
  cmd->add_option("--seeds", args->seeds,
                  "Seeds per item for the policies that draw random numbers (random; keyformer with gumbel or "
                  "gaussian noise): the session's seed + 0..N-1; other policies run once")
      ->default_val(1);
  cmd->add_option("--shard", args->shard,
                  "Run only shard i of n (i/n, from 0): a cost-balanced share of the (policy, item) units, written as "
                  "sweep_shard.json for sweep-merge (docs/cli.md, \"Sweeps on many machines\")");
  add_figure_flags(*cmd, args->figures);
  cmd->callback([args] {
    try {
      run_sweep(*args);
    } catch (const Error& e) {
      throw OutputFolder::in_target_words(e, args->out);
    }
  });
}

}  // namespace kvscope::cli
