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
};

// Ctrl-C (or SIGTERM) during a sweep: the cell running finishes, every
// finished cell is already on disk (OUT/cells/), and --resume goes on from
// there. A second Ctrl-C stops at once (the default action; io/interrupt.h).

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

struct Cell {
  std::string policy, budget;
  double budget_value = 0;
  std::vector<SweepItemResult> items;  // one per item x seed
  HeatmapData heatmap;                 // --heatmaps: the cell's attention heatmap (its first seed)
  std::string heatmap_title;
  // A session sweep (one text): one per counted decode step x seed, the
  // unit of its statistics ("item" holds the step).
  std::vector<SweepItemResult> steps;
};

// The settings that make a sweep's cells comparable: a resumed sweep must
// have the same ones, or its finished cells would be mixed with others.
nlohmann::json sweep_identity(const SessionConfig& base, const SweepArgs& a, std::size_t items) {
  nlohmann::json session = base.to_json();
  session.erase("export");  // figures do not change the numbers
  return {{"session", session}, {"policies", a.policies}, {"budgets", a.budgets}, {"dataset", a.dataset},
          {"items", items},     {"heatmaps", a.heatmaps}, {"seeds", a.seeds}};
}

// A budget as a file name part: "30%" -> "30pct", "ratio:0.25" -> "ratio0.25".
std::string budget_tag(const std::string& b) {
  std::string out;
  for (char c : b) out += c == '%' ? std::string("pct") : c == ':' ? std::string() : std::string(1, c);
  return out;
}

std::filesystem::path cell_file(const std::filesystem::path& out, const std::string& policy, const std::string& budget) {
  return out / "cells" / (policy + "_" + budget_tag(budget) + ".json");
}

nlohmann::json rows_json(const std::vector<SweepItemResult>& rows) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& r : rows) {
    nlohmann::json m = nlohmann::json::object();
    for (const auto& [k, v] : r.metrics)
      if (!std::isnan(v)) m[k] = v;  // JSON has no NaN: a value not measured is left out
    out.push_back({{"item", r.item}, {"seed", r.seed}, {"metrics", m}});
  }
  return out;
}

std::vector<SweepItemResult> rows_from_json(const nlohmann::json& j, const std::string& policy,
                                            const std::string& budget) {
  std::vector<SweepItemResult> rows;
  for (const auto& r : j)
    rows.push_back({r.at("item").get<int>(), policy, budget, r.at("seed").get<uint64_t>(),
                    r.at("metrics").get<std::map<std::string, double>>()});
  return rows;
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

// What a metric column means, for its plot's axis (docs/policies.md, "Metrics").
std::string axis_label(const std::string& metric) {
  static const std::map<std::string, std::string> kLabels = {
      {"accuracy", "answer accuracy"},
      {"answer_nll", "answer NLL (nats/token)"},
      {"nll", "NLL (nats/token)"},
      {"kl", "KL(full || policy) (nats)"},
      {"top1_agreement", "top-1 agreement with full cache"},
      {"attention_recall", "attention recall"},
      {"ideal_similarity", "ideal similarity (cosine)"},
      {"kv_bytes", "KV cache (bytes)"}};
  const auto it = kLabels.find(metric);
  return it == kLabels.end() ? metric : it->second;
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
  if (a.heatmaps && !a.dataset.empty())
    throw Error("--heatmaps", "", "draws each cell's run of the session; with --dataset a cell is many runs (leave one out)");
  const auto policies = split(a.policies);
  const auto budgets = split(a.budgets);
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
  {
    const int context = bundle->config().max_positions;
    std::vector<std::pair<int, std::string>> prompts;  // prompt length, where
    if (items.empty()) {
      const int n = base.prompt_ids.empty() ? static_cast<int>(bundle->tokenizer->encode(base.prompt, true).size())
                                            : static_cast<int>(base.prompt_ids.size());
      prompts.push_back({n, ""});
    } else {
      for (std::size_t i = 0; i < items.size(); ++i)
        prompts.push_back({static_cast<int>(bundle->tokenizer->encode(items[i].prompt, true).size()),
                           " (" + a.dataset + ": item " + std::to_string(i + 1) + ")"});
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
  // Finished cells are kept in OUT/cells/ as they complete, beside the
  // settings they belong to; --resume takes them instead of running again.
  const std::filesystem::path out = a.out;
  const nlohmann::json identity = sweep_identity(base, a, items.size());
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
  if (items.empty() && !a.resume && !needs_reference) first = make_session(0, 0, base.seed);
  // What made the sweep (sweep.provenance.json and every plot): computed
  // before any cell runs, as it hashes the model once.
  Provenance provenance;
  try {
    provenance = model_provenance(*bundle, base,
                                  {{"sweep", {{"policies", policies}, {"budgets", budgets}, {"seeds", a.seeds}}},
                                   {"settings", policy_to_json(base.policy)}});
  } catch (const Error& e) {
    throw e.in_file(a.session);
  }
  figure_opts.output.metadata = figure_metadata(provenance);
  create_output_dir(a.out, "--out");
  std::filesystem::create_directories(out / "cells");
  write_text_file(out / "cells" / "sweep.json", identity.dump(1) + "\n");

  if (reference_run) {
    reference_run->run_to_end();
    reference = reference_run->generated();
    reference_run.reset();
  }
  // The full cache does not depend on the budget: it runs once per item
  // (and seed), and that result is every budget's.
  auto runs_once = [&](std::size_t pi) { return kinds[pi] == PolicyKind::Full; };
  const int per_run = std::max<int>(1, static_cast<int>(items.size()));
  int total = 0;
  for (std::size_t pi = 0; pi < kinds.size(); ++pi)
    total += per_run * static_cast<int>(cell_seeds(pi).size()) * (runs_once(pi) ? 1 : static_cast<int>(amounts.size()));
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
      const std::vector<uint64_t> seeds = cell_seeds(pi);
      const int cell_runs = per_run * static_cast<int>(seeds.size());
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
        evaluated = evaluate_many(bundle, configs, items, [&](int k) {
          stop_if_interrupted();
          bar.update(before + k);
        });
        done = before + static_cast<int>(configs.size() * items.size());
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
            const auto rows = item_rows(evaluated[at - evaluated_runs.begin()], policies[pi], budgets[bi], seed);
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
  // The results go to the staging folder and are swapped in together
  // (commit_sweep); an error names the file in OUT (register_sweep).
  const std::filesystem::path staged = folder->staging();
  // sweep_items.csv: every item x seed of every cell; sweep.csv: each
  // cell's mean, standard error and n over its items, and its difference
  // from the best other evicting policy at its budget with a paired
  // bootstrap interval (reports/sweep_summary.h).
  std::vector<SweepItemResult> rows, step_rows;
  for (const auto& c : cells) {
    rows.insert(rows.end(), c.items.begin(), c.items.end());
    step_rows.insert(step_rows.end(), c.steps.begin(), c.steps.end());
  }
  std::set<std::string> contenders;
  for (std::size_t pi = 0; pi < kinds.size(); ++pi)
    if (policy_spec(kinds[pi]).evicts) contenders.insert(policies[pi]);
  std::vector<CellSummary> summary = summarize_sweep(rows, policies, budgets, contenders);
  // A session sweep has one item: its unit is the decode step (each step's
  // value the mean of its seeds; the same steps in every cell, teacher
  // forced on one reference, so the differences pair step by step). KV
  // bytes, measured at the end, stay the run's.
  const bool by_steps = items.empty();
  if (by_steps) {
    const std::vector<CellSummary> over_steps = summarize_sweep(step_rows, policies, budgets, contenders);
    for (std::size_t ci = 0; ci < summary.size(); ++ci) {
      summary[ci].items = over_steps[ci].items;
      for (const auto& [name, m] : over_steps[ci].metrics) summary[ci].metrics[name] = m;
    }
    CsvTable steps_table = sweep_items_table(step_rows);
    steps_table.header.front() = "step";
    write_csv(staged / "sweep_steps.csv", steps_table);
  }
  write_csv(staged / "sweep_items.csv", sweep_items_table(rows));
  const CsvTable t = sweep_summary_table(summary);
  write_csv(staged / "sweep.csv", t);
  std::vector<std::string> names;
  for (const auto& c : summary)
    for (const auto& [k, v] : c.metrics)
      if (std::find(names.begin(), names.end(), k) == names.end()) names.push_back(k);
  const bool percent = amounts[0].percent, ratio = amounts[0].ratio;
  std::vector<double> budget_values;
  for (const auto& am : amounts) budget_values.push_back(am.value);
  std::size_t plots = 0;
  std::vector<std::filesystem::path> figure_files;  // listed in sweep.provenance.json
  for (const auto& n : names) {
    // One line per policy; the full cache, whose value does not depend on
    // the budget, as a dashed reference line instead of one more line.
    std::vector<PlotSeries> series;
    std::optional<ReferenceLine> reference;
    for (const auto& p : policies) {
      PlotSeries s{p, {}, {}, {}, 0, std::nullopt, true};
      for (std::size_t ci = 0; ci < summary.size(); ++ci)
        if (const auto m = summary[ci].metrics.find(n); summary[ci].policy == p && m != summary[ci].metrics.end()) {
          s.x.push_back(amounts[std::find(budgets.begin(), budgets.end(), summary[ci].budget) - budgets.begin()].value);
          s.y.push_back(m->second.mean);
          if (std::isfinite(m->second.se)) s.err.push_back(m->second.se);
          s.n = m->second.n;
        }
      // Error bars only where every point has one (two items or more).
      if (s.err.size() != s.y.size()) s.err.clear();
      if (s.err.empty()) s.n = 0;
      const bool flat = !s.y.empty() && std::all_of(s.y.begin(), s.y.end(), [&](double v) {
        return std::abs(v - s.y[0]) <= 1e-9 * std::max(1.0, std::abs(s.y[0]));
      });
      if (p == "full" && flat && policies.size() > 1) {
        reference = ReferenceLine{s.y[0], "full cache" + std::string(s.n ? " (n = " + std::to_string(s.n) + ")" : "")};
        continue;
      }
      series.push_back(std::move(s));
    }
    series = merge_identical_series(std::move(series));  // coinciding lines named together
    LinePlotOptions o;
    o.title = axis_label(n) + (a.dataset.empty() ? ""
                                                 : " \u00b7 " + std::filesystem::path(a.dataset).filename().string() +
                                                       " (" + std::to_string(summary.front().items) + " items)");
    o.x_label = ratio     ? "compression ratio (fraction of the prompt removed, kvpress's)"
                : percent ? "KV budget (% of prompt)"
                          : "KV budget (tokens per KV head)";
    o.y_label = axis_label(n);
    o.x_ticks = budget_values;
    o.x_tick_suffix = percent ? "%" : "";
    o.reference = reference;
    o.dodge = series.size() > 1 ? 2.5 : 0;
    o.legend_title = "policy";
    // Say what the bars are, with n (the same for every line, or per line
    // in the legend).
    std::set<int> ns;
    for (const auto& ps : series)
      if (!ps.err.empty()) ns.insert(ps.n);
    if (!ns.empty()) {
      o.y_label += " (mean \u00b1 s.e.)";
      const std::string unit = by_steps ? " decode steps" : " items";
      o.note = (by_steps ? "Error bars: mean \u00b1 one standard error over the decode steps of one text "
                           "(correlated: a --dataset sweep shows the spread across texts)"
                         : "Error bars: mean \u00b1 one standard error over items") +
               (ns.size() == 1 ? ", n = " + std::to_string(*ns.begin()) + unit + " per point"
                               : std::string(", n per line in the legend"));
      if (ns.size() == 1)
        for (auto& ps : series) ps.n = 0;  // stated once, in the note
    }
    if (n == "kv_bytes") o.y_bytes = true;  // ticks in B / KiB / MiB
    if (n == "accuracy" || n == "top1_agreement") {
      o.y_percent = true;
      o.y_min = 0;
      o.y_max = 1;
    }
    for (auto& f : write_line_plot(staged / ("sweep_" + n), series, o, figure_opts.output)) figure_files.push_back(f);
    ++plots;
  }
  std::size_t heatmaps = 0;
  if (a.heatmaps) {
    // One colour range over every cell (unless --range says otherwise), so
    // the same weight is the same colour in every policy's picture.
    ValueExtent all;
    for (const auto& c : cells) all.add(c.heatmap.values);
    for (const auto& c : cells) {
      ValueExtent own;
      own.add(c.heatmap.values);
      HeatmapFigureOptions ho;
      ho.title = c.heatmap_title;
      ho.colormap = figure_opts.colormap;
      ho.scale = resolve_color_scale(figure_opts.scale, figure_opts.range, own, all);
      ho.evicted = figure_opts.evicted;
      for (auto& f : write_heatmap(staged / ("heatmap_" + c.policy + "_" + budget_tag(c.budget)),
                                   crop_columns(c.heatmap, figure_opts.positions), ho, figure_opts.output))
        figure_files.push_back(f);
      ++heatmaps;
    }
  }
  {
    // The CSV stays plain (one header row) for every reader; what made it
    // is in this file beside it (docs/exports.md, "Provenance").
    nlohmann::json files = {"sweep.csv", "sweep_items.csv"};
    if (by_steps) files.push_back("sweep_steps.csv");
    for (const auto& f : figure_files) files.push_back(f.filename().string());
    write_text_file(staged / "sweep.provenance.json",
                    json_text({{"files", files}, {"provenance", to_json(provenance)}}) + "\n");
  }
  commit_sweep(*folder);
  std::printf("%s", to_csv(t).c_str());
  // Finished: sweep.csv holds every cell; the checkpoints go, so the
  // folder reads as one complete sweep (and a rerun starts afresh).
  std::error_code ec;
  std::filesystem::remove_all(out / "cells", ec);
  std::fprintf(stderr, "wrote %s/sweep.csv, %zu plots%s\n", a.out.c_str(), plots,
               heatmaps ? (" and " + std::to_string(heatmaps) + " heatmaps").c_str() : "");
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
