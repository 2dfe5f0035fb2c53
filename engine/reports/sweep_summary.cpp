#include "reports/sweep_summary.h"
#include "common/nan.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace kvscope {
namespace {

// One cell's values: per metric, each item's seed values summed and counted.
struct CellValues {
  std::map<std::string, std::map<int, std::pair<double, int>>> sums;
  std::set<int> items;
  std::set<uint64_t> seeds;
  // Each item's mean over its seeds.
  std::map<int, double> item_means(const std::string& metric) const {
    std::map<int, double> out;
    const auto it = sums.find(metric);
    if (it == sums.end()) return out;
    for (const auto& [item, sc] : it->second) out[item] = sc.first / sc.second;
    return out;
  }
};

std::vector<double> values_of(const std::map<int, double>& m) {
  std::vector<double> v;
  for (const auto& [item, x] : m) v.push_back(x);
  return v;
}

// Names in the order of first appearance in std::map iteration over rows:
// sorted, as sweep.csv has always had them.
std::vector<std::string> metric_names(const std::vector<std::map<std::string, double>>& maps) {
  std::set<std::string> names;
  for (const auto& m : maps)
    for (const auto& [k, v] : m) names.insert(k);
  return {names.begin(), names.end()};
}

}  // namespace

int metric_direction(const std::string& metric) {
  static const std::map<std::string, int> kDirection = {{"accuracy", +1},
                                                        {"top1_agreement", +1},
                                                        {"attention_recall", +1},
                                                        {"ideal_similarity", +1},
                                                        {"answer_nll", -1},
                                                        {"nll", -1},
                                                        {"kl", -1}};
  const auto it = kDirection.find(metric);
  return it == kDirection.end() ? 0 : it->second;
}

std::vector<CellSummary> summarize_sweep(const std::vector<SweepItemResult>& rows,
                                         const std::vector<std::string>& policies,
                                         const std::vector<std::string>& budgets,
                                         const std::set<std::string>& contenders, const BootstrapOptions& bootstrap) {
  std::map<std::pair<std::string, std::string>, CellValues> cells;
  for (const auto& r : rows) {
    CellValues& c = cells[{r.policy, r.budget}];
    c.items.insert(r.item);
    c.seeds.insert(r.seed);
    for (const auto& [name, v] : r.metrics) {
      if (std::isnan(v)) continue;
      auto& sc = c.sums[name][r.item];
      sc.first += v;
      ++sc.second;
    }
  }
  std::vector<CellSummary> out;
  for (const auto& p : policies)
    for (const auto& b : budgets) {
      const auto it = cells.find({p, b});
      if (it == cells.end()) continue;
      CellSummary s{p, b, static_cast<int>(it->second.items.size()), static_cast<int>(it->second.seeds.size()), {}};
      for (const auto& [name, per_item] : it->second.sums) {
        const std::vector<double> v = values_of(it->second.item_means(name));
        MetricSummary m;
        m.mean = mean_of(v);
        m.se = standard_error(v);
        m.n = static_cast<int>(v.size());
        m.diff = kNaN;
        m.ci = {kNaN, kNaN};
        s.metrics[name] = m;
      }
      out.push_back(std::move(s));
    }
  // Each cell against the best other contender at its budget, per metric.
  for (CellSummary& s : out)
    for (auto& [name, m] : s.metrics) {
      const int dir = metric_direction(name);
      if (dir == 0) continue;
      const CellSummary* best = nullptr;
      for (const CellSummary& o : out) {
        if (o.budget != s.budget || o.policy == s.policy || !contenders.count(o.policy)) continue;
        const auto om = o.metrics.find(name);
        if (om == o.metrics.end()) continue;
        if (!best || dir * om->second.mean > dir * best->metrics.at(name).mean) best = &o;
      }
      if (!best) continue;
      const auto mine = cells.at({s.policy, s.budget}).item_means(name);
      const auto theirs = cells.at({best->policy, best->budget}).item_means(name);
      std::vector<double> a, b;
      for (const auto& [item, x] : mine)
        if (const auto t = theirs.find(item); t != theirs.end()) {
          a.push_back(x);
          b.push_back(t->second);
        }
      if (a.empty()) continue;
      m.versus = best->policy;
      m.pairs = static_cast<int>(a.size());
      std::vector<double> d(a.size());
      for (std::size_t i = 0; i < a.size(); ++i) d[i] = a[i] - b[i];
      m.diff = mean_of(d);
      if (a.size() >= 2) m.ci = paired_bootstrap_interval(a, b, bootstrap);
    }
  return out;
}

CsvTable sweep_items_table(const std::vector<SweepItemResult>& rows) {
  std::vector<std::map<std::string, double>> maps;
  for (const auto& r : rows) maps.push_back(r.metrics);
  const auto names = metric_names(maps);
  CsvTable t;
  t.header = {"item", "policy", "budget", "seed"};
  t.header.insert(t.header.end(), names.begin(), names.end());
  for (const auto& r : rows) {
    std::vector<CsvCell> row{int64_t(r.item), r.policy, r.budget, static_cast<int64_t>(r.seed)};
    for (const auto& n : names) {
      const auto it = r.metrics.find(n);
      row.emplace_back(it == r.metrics.end() ? kNaN : it->second);
    }
    t.add_row(std::move(row));
  }
  return t;
}

CsvTable sweep_summary_table(const std::vector<CellSummary>& cells) {
  std::vector<std::map<std::string, double>> maps;
  for (const auto& c : cells) {
    std::map<std::string, double> m;
    for (const auto& [k, v] : c.metrics) m[k] = v.mean;
    maps.push_back(std::move(m));
  }
  const auto names = metric_names(maps);
  std::vector<std::string> directed;
  for (const auto& n : names)
    if (metric_direction(n) != 0) directed.push_back(n);
  CsvTable t;
  t.header = {"policy", "budget"};
  t.header.insert(t.header.end(), names.begin(), names.end());
  for (const auto& n : names) t.header.push_back(n + "_se");
  t.header.push_back("n");
  t.header.push_back("seeds");
  for (const auto& n : directed)
    for (const char* suffix : {"_vs", "_diff", "_diff_lo", "_diff_hi"}) t.header.push_back(n + suffix);
  for (const auto& c : cells) {
    std::vector<CsvCell> row{c.policy, c.budget};
    auto metric = [&](const std::string& n) -> const MetricSummary* {
      const auto it = c.metrics.find(n);
      return it == c.metrics.end() ? nullptr : &it->second;
    };
    for (const auto& n : names) row.emplace_back(metric(n) ? metric(n)->mean : kNaN);
    for (const auto& n : names) row.emplace_back(metric(n) ? metric(n)->se : kNaN);
    row.emplace_back(int64_t(c.items));
    row.emplace_back(int64_t(c.seeds));
    for (const auto& n : directed) {
      const MetricSummary* m = metric(n);
      const bool has = m && !m->versus.empty();
      row.emplace_back(has ? m->versus : std::string());
      row.emplace_back(has ? m->diff : kNaN);
      row.emplace_back(has ? m->ci.lo : kNaN);
      row.emplace_back(has ? m->ci.hi : kNaN);
    }
    t.add_row(std::move(row));
  }
  return t;
}

}  // namespace kvscope
