#include "sweep_results.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "figures/line_plot.h"
#include "io/atomic_file.h"
#include "io/csv_writer.h"
#include "io/json_file.h"
#include "sweep_output.h"

namespace kvscope::cli {

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

// A budget as a file name part: "30%" -> "30pct", "ratio:0.25" -> "ratio0.25".
std::string budget_tag(const std::string& b) {
  std::string out;
  for (char c : b) out += c == '%' ? std::string("pct") : c == ':' ? std::string() : std::string(1, c);
  return out;
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

namespace {

// What a metric column means, for its plot's axis (docs/policies.md, "Metrics").
std::string axis_label(const std::string& metric) {
  static const std::map<std::string, std::string> kLabels = {{"accuracy", "answer accuracy"},
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

}  // namespace

SweepResultsWritten write_sweep_results(const SweepResultsSpec& spec, const std::vector<Cell>& cells,
                                        OutputFolder& folder) {
  // The results go to the staging folder and are swapped in together
  // (commit_sweep); an error names the file in OUT (register_sweep).
  const std::filesystem::path staged = folder.staging();
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
  for (std::size_t pi = 0; pi < spec.kinds.size(); ++pi)
    if (policy_spec(spec.kinds[pi]).evicts) contenders.insert(spec.policies[pi]);
  std::vector<CellSummary> summary = summarize_sweep(rows, spec.policies, spec.budgets, contenders);
  // A session sweep has one item: its unit is the decode step (each step's
  // value the mean of its seeds; the same steps in every cell, teacher
  // forced on one reference, so the differences pair step by step). KV
  // bytes, measured at the end, stay the run's.
  const bool by_steps = spec.dataset.empty();
  if (by_steps) {
    const std::vector<CellSummary> over_steps = summarize_sweep(step_rows, spec.policies, spec.budgets, contenders);
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
  const bool percent = spec.amounts[0].percent, ratio = spec.amounts[0].ratio;
  std::vector<double> budget_values;
  for (const auto& am : spec.amounts) budget_values.push_back(am.value);
  std::size_t plots = 0;
  std::vector<std::filesystem::path> figure_files;  // listed in sweep.provenance.json
  for (const auto& n : names) {
    // One line per policy; the full cache, whose value does not depend on
    // the budget, as a dashed reference line instead of one more line.
    std::vector<PlotSeries> series;
    std::optional<ReferenceLine> reference;
    for (const auto& p : spec.policies) {
      PlotSeries s{p, {}, {}, {}, 0, std::nullopt, true};
      for (std::size_t ci = 0; ci < summary.size(); ++ci)
        if (const auto m = summary[ci].metrics.find(n); summary[ci].policy == p && m != summary[ci].metrics.end()) {
          s.x.push_back(spec.amounts[std::find(spec.budgets.begin(), spec.budgets.end(), summary[ci].budget) -
                                     spec.budgets.begin()]
                            .value);
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
      if (p == "full" && flat && spec.policies.size() > 1) {
        reference = ReferenceLine{s.y[0], "full cache" + std::string(s.n ? " (n = " + std::to_string(s.n) + ")" : "")};
        continue;
      }
      series.push_back(std::move(s));
    }
    series = merge_identical_series(std::move(series));  // coinciding lines named together
    LinePlotOptions o;
    o.title =
        axis_label(n) + (spec.dataset.empty() ? ""
                                              : " \u00b7 " + std::filesystem::path(spec.dataset).filename().string() +
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
    for (auto& f : write_line_plot(staged / ("sweep_" + n), series, o, spec.figure_opts.output))
      figure_files.push_back(f);
    ++plots;
  }
  std::size_t heatmaps = 0;
  if (spec.heatmaps) {
    // One colour range over every cell (unless --range says otherwise), so
    // the same weight is the same colour in every policy's picture.
    ValueExtent all;
    for (const auto& c : cells) all.add(c.heatmap.values);
    for (const auto& c : cells) {
      ValueExtent own;
      own.add(c.heatmap.values);
      HeatmapFigureOptions ho;
      ho.title = c.heatmap_title;
      ho.colormap = spec.figure_opts.colormap;
      ho.scale = resolve_color_scale(spec.figure_opts.scale, spec.figure_opts.range, own, all);
      ho.evicted = spec.figure_opts.evicted;
      for (auto& f : write_heatmap(staged / ("heatmap_" + c.policy + "_" + budget_tag(c.budget)),
                                   crop_columns(c.heatmap, spec.figure_opts.positions), ho, spec.figure_opts.output))
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
                    json_text({{"files", files}, {"provenance", to_json(spec.provenance)}}) + "\n");
  }
  commit_sweep(folder);
  return {plots, heatmaps, to_csv(t)};
}

}  // namespace kvscope::cli
