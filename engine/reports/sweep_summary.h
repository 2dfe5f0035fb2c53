// A sweep's results: one row per item x policy x budget x seed, and the
// summary of each cell (policy x budget) over its items — mean, standard
// error, n, and a paired bootstrap interval for the difference from the
// best other policy at the same budget. docs/exports.md ("Sweeps") says
// what each column means; these functions are the one place it is computed.
//
// The unit of every statistic is the item: an item's value is the mean of
// its seeds' values (a policy without randomness has one), and the mean,
// the standard error and the paired intervals are over items. Pairs are the
// items both cells have a value for.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "io/csv_writer.h"
#include "reports/bootstrap.h"

namespace kvscope {

struct SweepItemResult {
  int item = 1;  // the item's place in the set, from 1 (a session sweep has one item)
  std::string policy, budget;
  uint64_t seed = 0;
  std::map<std::string, double> metrics;  // by sweep.csv column name; NaN or absent: not measured
};

// +1 where a larger value is better (accuracy, agreement, recall,
// similarity), -1 where a smaller one is (NLL, KL), 0 where neither (KV
// bytes, names not known): such a metric gets no comparison.
int metric_direction(const std::string& metric);

struct MetricSummary {
  double mean = 0, se = 0;  // se: NaN below two items
  int n = 0;                // items with a value
  // The best other policy at this budget (best mean; the earlier policy on
  // a tie), the mean of the paired differences (this - that) and its
  // bootstrap interval (NaN below two pairs); "" where there is none.
  std::string versus;
  double diff = 0;
  Interval ci;
  int pairs = 0;
};

struct CellSummary {
  std::string policy, budget;
  int items = 0;  // items with any value
  int seeds = 0;  // seeds per item
  std::map<std::string, MetricSummary> metrics;
};

// One summary per (policy, budget), policies outer, in the orders given.
// Each policy is compared with the best of `contenders` (other than
// itself) at the same budget: the policies that evict, so that the full
// cache and the oracle are not "the best other" of every policy.
std::vector<CellSummary> summarize_sweep(const std::vector<SweepItemResult>& rows,
                                         const std::vector<std::string>& policies,
                                         const std::vector<std::string>& budgets,
                                         const std::set<std::string>& contenders,
                                         const BootstrapOptions& bootstrap = {});

// sweep_items.csv: item, policy, budget, seed, then every metric (by name).
CsvTable sweep_items_table(const std::vector<SweepItemResult>& rows);
// sweep.csv: policy, budget, every metric's mean, then <metric>_se, n (the
// cell's items), seeds, and for each metric with a direction <metric>_vs,
// <metric>_diff, <metric>_diff_lo, <metric>_diff_hi.
CsvTable sweep_summary_table(const std::vector<CellSummary>& cells);

}  // namespace kvscope
