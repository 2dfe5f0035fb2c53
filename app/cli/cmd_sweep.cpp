// kvscope-cli sweep SESSION --policies a,b --budgets 10%,50%,90% --out DIR:
// the grid of policies x budgets — the papers' quality-versus-cache-size
// figures. With --dataset each cell is an evaluation (answer accuracy, NLL);
// without, each cell runs the session itself (KL, top-1 agreement, recall,
// similarity, and NLL when the session teacher-forces a continuation).
#include <cmath>
#include <cstdio>
#include <sstream>
#include <algorithm>
#include <map>
#include <optional>

#include "cli_common.h"
#include "common/error.h"
#include "io/csv_writer.h"
#include "io/line_chart.h"
#include "io/png_writer.h"
#include "io/svg_writer.h"
#include "progress_bar.h"
#include "session/evaluation.h"
#include "session/session.h"
#include "session_runner.h"

namespace kvscope::cli {
namespace {

struct SweepArgs {
  std::string session, policies = "window,sink,h2o,tova,keyformer,a2sf,random", budgets = "10%,20%,30%,50%,70%,90%";
  std::string out, dataset;
  std::optional<int> limit;  // not given: every item
};

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
  std::map<std::string, double> metrics;
};

// Means of a finished session's per-step metrics.
std::map<std::string, double> session_means(const Session& s) {
  std::map<std::string, double> out;
  double nll = 0, kl = 0, agree = 0, rc = 0, sim = 0;
  int n_nll = 0, n = 0;
  for (const auto& m : s.recorder().metrics()) {
    if (!std::isnan(m.nll)) {
      nll += m.nll;
      ++n_nll;
    }
    if (m.top1_agree >= 0) {
      kl += m.kl;
      agree += m.top1_agree;
      rc += m.attention_recall;
      sim += m.ideal_similarity;
      ++n;
    }
  }
  if (n_nll) out["nll"] = nll / n_nll;
  if (n) {
    out["kl"] = kl / n;
    out["top1_agreement"] = agree / n;
    out["attention_recall"] = rc / n;
    out["ideal_similarity"] = sim / n;
  }
  out["kv_bytes"] = static_cast<double>(s.recorder().metrics().back().kv_bytes);
  return out;
}

// What a metric column means, for its plot's axis (POLICIES.md, "Metrics").
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
  const std::string m = e.what();
  const std::string flag = "--budget: ";
  if (m.rfind(flag, 0) == 0)
    throw Error("--budgets", "", "'" + budget + "' with policy '" + policy + "': " + m.substr(flag.size()) + where);
  throw session_file_error(e, a.session);
}

void run_sweep(const SweepArgs& a) {
  // Every check before any cell runs: flags, the output directory, the
  // session file, the model, then each cell's policy and budget.
  if (a.limit && *a.limit < 1)
    throw Error("--limit", "", "must be at least 1, got " + std::to_string(*a.limit) + " (leave it out to use every item)");
  if (a.limit && a.dataset.empty()) throw Error("--limit", "", "applies to --dataset items; no --dataset given");
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
      throw Error(rename_field(e.what(), {{"--policy", "--policies"}}));
    }
  }
  for (const auto& b : budgets) amounts.push_back(Amount::parse(b, "--budgets"));
  // One axis: all counts or all percentages of the prompt.
  for (std::size_t i = 1; i < amounts.size(); ++i)
    if (amounts[i].percent != amounts[0].percent) {
      const std::string& count = amounts[0].percent ? budgets[i] : budgets[0];
      const std::string& pct = amounts[0].percent ? budgets[0] : budgets[i];
      throw Error("--budgets", "", "mixes token counts ('" + count + "') and percentages ('" + pct +
                                       "'); give every budget as a count or every budget as a percentage");
    }
  check_output_dir(a.out, "--out");
  const SessionFile file = load_session_file(a.session);
  const SessionConfig& base = file.cfg;
  const std::shared_ptr<const ModelBundle>& bundle = file.bundle;
  std::vector<EvalItem> items;
  if (!a.dataset.empty()) {
    items = load_eval_set(a.dataset);
    if (a.limit && *a.limit < static_cast<int>(items.size())) items.resize(*a.limit);
  }
  auto cell_config = [&](std::size_t pi, std::size_t bi) {
    SessionConfig cfg = base;
    cfg.policy.kind = kinds[pi];
    cfg.policy.budget = amounts[bi];
    return cfg;
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
        const SessionConfig cfg = cell_config(pi, bi);
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
  // Without a dataset the first cell's Session also checks what the session
  // file sets against the model (layers, prompt length) before the
  // directory is made; it is the cell run first.
  auto make_session = [&](std::size_t pi, std::size_t bi) {
    try {
      return std::make_unique<Session>(bundle, cell_config(pi, bi));
    } catch (const Error& e) {
      rethrow_for_cell(e, a, policies[pi], budgets[bi], "");
    }
  };
  std::unique_ptr<Session> first;
  if (items.empty()) first = make_session(0, 0);
  create_output_dir(a.out, "--out");

  const int total = static_cast<int>(kinds.size() * amounts.size()) * std::max<int>(1, static_cast<int>(items.size()));
  ProgressBar bar("sweep", total);
  int done = 0;
  std::vector<Cell> cells;
  for (std::size_t pi = 0; pi < kinds.size(); ++pi) {
    for (std::size_t bi = 0; bi < amounts.size(); ++bi) {
      const SessionConfig cfg = cell_config(pi, bi);
      Cell c{policies[pi], budgets[bi], amounts[bi].value, {}};
      if (items.empty()) {
        std::unique_ptr<Session> s = first ? std::move(first) : make_session(pi, bi);
        s->run_to_end();
        c.metrics = session_means(*s);
        bar.update(++done);
      } else {
        const int before = done;
        const auto r = evaluate(bundle, cfg, items, [&](int k) { bar.update(before + k); });
        done = before + static_cast<int>(items.size());
        if (r.scored) {
          c.metrics["accuracy"] = r.accuracy();
          c.metrics["answer_nll"] = r.mean_answer_nll();
        }
        if (r.metric_items) {
          c.metrics["kl"] = r.kl / r.metric_items;
          c.metrics["attention_recall"] = r.recall / r.metric_items;
          c.metrics["ideal_similarity"] = r.similarity / r.metric_items;
        }
        c.metrics["kv_bytes"] = r.kv_bytes / r.items;
      }
      cells.push_back(std::move(c));
    }
  }
  bar.finish();

  std::vector<std::string> names;
  for (const auto& c : cells)
    for (const auto& [k, v] : c.metrics)
      if (std::find(names.begin(), names.end(), k) == names.end()) names.push_back(k);
  CsvTable t;
  t.header = {"policy", "budget"};
  t.header.insert(t.header.end(), names.begin(), names.end());
  for (const auto& c : cells) {
    std::vector<CsvCell> row{c.policy, c.budget};
    for (const auto& n : names) {
      auto it = c.metrics.find(n);
      row.emplace_back(it == c.metrics.end() ? std::nan("") : it->second);
    }
    t.add_row(std::move(row));
  }
  write_csv(std::filesystem::path(a.out) / "sweep.csv", t);
  const bool percent = amounts[0].percent;
  for (const auto& n : names) {
    std::vector<LineSeries> series;
    for (const auto& p : policies) {
      LineSeries s{p, {}, {}};
      for (const auto& c : cells)
        if (c.policy == p && c.metrics.count(n)) {
          s.x.push_back(c.budget_value);
          s.y.push_back(c.metrics.at(n));
        }
      series.push_back(std::move(s));
    }
    LineChartOptions o;
    o.title = n + (a.dataset.empty() ? "" : " - " + std::filesystem::path(a.dataset).filename().string());
    o.x_label = percent ? "KV budget (% of prompt)" : "KV budget (tokens per KV head)";
    o.y_label = axis_label(n);
    write_png(std::filesystem::path(a.out) / ("sweep_" + n + ".png"), render_line_chart(series, o).image);
    write_line_chart_svg(std::filesystem::path(a.out) / ("sweep_" + n + ".svg"), series, o);
  }
  std::printf("%s", to_csv(t).c_str());
  std::fprintf(stderr, "wrote %s/sweep.csv and %zu plots\n", a.out.c_str(), names.size());
}

}  // namespace

void register_sweep(CLI::App& app) {
  auto args = std::make_shared<SweepArgs>();
  auto* cmd = app.add_subcommand("sweep", "Run a session for every policy x budget; CSV and plots");
  cmd->add_option("session", args->session, "Session JSON file (model, prompt, other settings)")->required();
  cmd->add_option("--policies", args->policies, "Comma-separated policies");
  cmd->add_option("--budgets", args->budgets, "Comma-separated budgets (counts or percentages)");
  cmd->add_option("--out", args->out, "Output directory")->required()->check(nonempty_dir_name());
  cmd->add_option("--dataset", args->dataset, "Evaluate each cell on this JSON-lines set instead of the session prompt");
  cmd->add_option("--limit", args->limit, "Use only the first N dataset items");
  cmd->callback([args] { run_sweep(*args); });
}

}  // namespace kvscope::cli
