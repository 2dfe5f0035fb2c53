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
  int limit = 0;
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

void run_sweep(const SweepArgs& a) {
  SessionConfig base = SessionConfig::load(a.session);
  if (!base.model.empty() && std::filesystem::path(base.model).is_relative()) {
    const auto beside = std::filesystem::path(a.session).parent_path() / base.model;
    std::error_code ec;
    if (std::filesystem::exists(beside, ec)) base.model = beside.string();
  }
  const auto policies = split(a.policies);
  const auto budgets = split(a.budgets);
  if (policies.empty()) throw Error("--policies", "", "no policy given");
  if (budgets.empty()) throw Error("--budgets", "", "no budget given");
  std::vector<PolicyKind> kinds;
  std::vector<Amount> amounts;
  for (const auto& p : policies) kinds.push_back(parse_policy(p));
  for (const auto& b : budgets) amounts.push_back(Amount::parse(b, "--budgets"));
  std::vector<EvalItem> items;
  if (!a.dataset.empty()) {
    items = load_eval_set(a.dataset);
    if (a.limit > 0 && a.limit < static_cast<int>(items.size())) items.resize(a.limit);
  }
  resolve_device(base.device);
  auto bundle = bundle_for(base.model);
  std::error_code ec;
  std::filesystem::create_directories(a.out, ec);
  if (!std::filesystem::is_directory(a.out, ec)) throw Error(a.out, "", "cannot create the output directory");

  const int total = static_cast<int>(kinds.size() * amounts.size()) * std::max<int>(1, static_cast<int>(items.size()));
  ProgressBar bar("sweep", total);
  int done = 0;
  std::vector<Cell> cells;
  for (std::size_t pi = 0; pi < kinds.size(); ++pi) {
    for (std::size_t bi = 0; bi < amounts.size(); ++bi) {
      SessionConfig cfg = base;
      cfg.policy.kind = kinds[pi];
      cfg.policy.budget = amounts[bi];
      Cell c{policies[pi], budgets[bi], amounts[bi].value, {}};
      if (items.empty()) {
        Session s(bundle, cfg);
        s.run_to_end();
        c.metrics = session_means(s);
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
    o.y_label = n;
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
  cmd->add_option("--out", args->out, "Output directory")->required();
  cmd->add_option("--dataset", args->dataset, "Evaluate each cell on this JSON-lines set instead of the session prompt");
  cmd->add_option("--limit", args->limit, "Use only the first N dataset items");
  cmd->callback([args] { run_sweep(*args); });
}

}  // namespace kvscope::cli
