// The statistics of a sweep (reports/bootstrap.h, reports/sweep_summary.h)
// against values worked out by hand: the standard error, the percentile
// bootstrap over every possible resample of a tiny series, its exact
// properties (one pair, identical series, a constant shift), and the
// per-item and summary tables.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "reports/bootstrap.h"
#include "reports/sweep_summary.h"

namespace kvscope {
namespace {

TEST(SweepStatistics, MeanAndStandardErrorByHand) {
  const std::vector<double> v = {1, 2, 3, 4};
  EXPECT_DOUBLE_EQ(mean_of(v), 2.5);
  // deviations -1.5 -0.5 0.5 1.5: sum of squares 5, s^2 = 5/3, se = sqrt(5/3 / 4)
  EXPECT_DOUBLE_EQ(standard_error(v), std::sqrt(5.0 / 3.0 / 4.0));
  EXPECT_TRUE(std::isnan(standard_error(std::vector<double>{7})));
  EXPECT_TRUE(std::isnan(mean_of(std::vector<double>{})));
}

// Two pairs with differences 1 and 3: the four possible resamples, drawn
// in order by a resampler that enumerates them, have means 1, 2, 2, 3.
TEST(SweepStatistics, BootstrapOverEveryResampleOfTwoPairs) {
  const std::vector<double> a = {1, 5}, b = {0, 2};
  BootstrapOptions o;
  o.resamples = 4;
  o.index = [](int r, int j, int n) {
    EXPECT_EQ(n, 2);
    return (r >> j) & 1;
  };
  o.level = 0.5;  // one resample cut from each end: [2, 2]
  Interval i = paired_bootstrap_interval(a, b, o);
  EXPECT_EQ(i.lo, 2.0);
  EXPECT_EQ(i.hi, 2.0);
  o.level = 0.95;  // 4 x 0.05 / 2 = 0.1: nothing cut, the extremes
  i = paired_bootstrap_interval(a, b, o);
  EXPECT_EQ(i.lo, 1.0);
  EXPECT_EQ(i.hi, 3.0);
}

TEST(SweepStatistics, BootstrapExactCases) {
  // One pair: every resample is that pair.
  Interval i = paired_bootstrap_interval(std::vector<double>{0.75}, std::vector<double>{0.5});
  EXPECT_EQ(i.lo, 0.25);
  EXPECT_EQ(i.hi, 0.25);
  // Identical series: [0, 0].
  const std::vector<double> x = {0.1, 0.7, 0.3, 0.9, 0.2};
  i = paired_bootstrap_interval(x, x);
  EXPECT_EQ(i.lo, 0.0);
  EXPECT_EQ(i.hi, 0.0);
  // A constant shift d (exact in binary): [d, d], not d rounded by the sums.
  const std::vector<double> b = {0.25, 1.5, -3, 7, 0.125};
  std::vector<double> a;
  for (double v : b) a.push_back(v + 0.5);
  i = paired_bootstrap_interval(a, b);
  EXPECT_EQ(i.lo, 0.5);
  EXPECT_EQ(i.hi, 0.5);
  EXPECT_THROW(paired_bootstrap_interval(a, std::vector<double>{1}), std::invalid_argument);
}

// With the default resampler: the same bytes on every call, and for 60
// pairs an interval close to the normal one, mean +- 1.96 se (the
// bootstrap's standard error is the plug-in one, sqrt((n-1)/n) of the
// sample's, and percentiles wobble by about 1% at 10,000 resamples).
TEST(SweepStatistics, BootstrapIsReproducibleAndNearTheNormalInterval) {
  std::vector<double> a, b;
  for (int i = 0; i < 60; ++i) {
    a.push_back((i * 37 % 11) / 10.0);
    b.push_back((i * 13 % 7) / 10.0);
  }
  const Interval i1 = paired_bootstrap_interval(a, b), i2 = paired_bootstrap_interval(a, b);
  EXPECT_EQ(i1.lo, i2.lo);
  EXPECT_EQ(i1.hi, i2.hi);
  std::vector<double> d;
  for (std::size_t i = 0; i < a.size(); ++i) d.push_back(a[i] - b[i]);
  const double m = mean_of(d), se = standard_error(d);
  EXPECT_LT(i1.lo, m);
  EXPECT_GT(i1.hi, m);
  EXPECT_NEAR(m - i1.lo, 1.96 * se, 0.1 * 1.96 * se);
  EXPECT_NEAR(i1.hi - m, 1.96 * se, 0.1 * 1.96 * se);
  BootstrapOptions other;
  other.seed = 1;
  const Interval i3 = paired_bootstrap_interval(a, b, other);
  EXPECT_TRUE(i3.lo != i1.lo || i3.hi != i1.hi) << "the seed keys the draws";
}

// Three items; full and h2o once, random with two seeds. By hand:
// accuracy full 1,1,1; h2o 1,0,1; random seeds (1,0),(0,0),(1,1) -> 0.5,0,1.
// kl: h2o 0.25,0.5,0.75; random 0.5,1,0.5 (seed means of (0.25,0.75), (1,1), (0.5,0.5)).
std::vector<SweepItemResult> hand_rows() {
  std::vector<SweepItemResult> rows;
  auto add = [&](int item, const char* p, uint64_t seed, double acc, double kl) {
    rows.push_back({item, p, "50%", seed, {{"accuracy", acc}, {"kl", kl}, {"kv_bytes", 100}}});
  };
  for (int i = 1; i <= 3; ++i) add(i, "full", 0, 1, 0);
  add(1, "h2o", 0, 1, 0.25), add(2, "h2o", 0, 0, 0.5), add(3, "h2o", 0, 1, 0.75);
  add(1, "random", 0, 1, 0.25), add(1, "random", 1, 0, 0.75);
  add(2, "random", 0, 0, 1), add(2, "random", 1, 0, 1);
  add(3, "random", 0, 1, 0.5), add(3, "random", 1, 1, 0.5);
  return rows;
}

TEST(SweepStatistics, SummaryByHand) {
  const auto cells = summarize_sweep(hand_rows(), {"full", "h2o", "random"}, {"50%"}, {"h2o", "random"});
  ASSERT_EQ(cells.size(), 3u);
  const CellSummary &full = cells[0], &h2o = cells[1], &random = cells[2];
  EXPECT_EQ(random.policy, "random");
  EXPECT_EQ(random.items, 3);
  EXPECT_EQ(random.seeds, 2);
  EXPECT_EQ(h2o.seeds, 1);
  // Means over items of the seed means.
  EXPECT_DOUBLE_EQ(random.metrics.at("accuracy").mean, 0.5);
  EXPECT_DOUBLE_EQ(random.metrics.at("kl").mean, 2.0 / 3.0);
  EXPECT_EQ(random.metrics.at("kl").n, 3);
  // se of (0.5, 0, 1): s^2 = 0.25, se = sqrt(0.25 / 3).
  EXPECT_DOUBLE_EQ(random.metrics.at("accuracy").se, std::sqrt(0.25 / 3));
  // Accuracy: h2o (2/3) beats random (1/2); each is the other's best other.
  EXPECT_EQ(h2o.metrics.at("accuracy").versus, "random");
  EXPECT_EQ(random.metrics.at("accuracy").versus, "h2o");
  // h2o - random per item: 0.5, 0, 0 -> mean 1/6.
  EXPECT_DOUBLE_EQ(h2o.metrics.at("accuracy").diff, 1.0 / 6.0);
  EXPECT_EQ(h2o.metrics.at("accuracy").pairs, 3);
  // The interval is of resampled means of {0.5, 0, 0}: within [0, 0.5].
  EXPECT_GE(h2o.metrics.at("accuracy").ci.lo, 0.0);
  EXPECT_LE(h2o.metrics.at("accuracy").ci.hi, 0.5);
  // Full is compared with the best contender: h2o for accuracy, h2o for KL (0.5 < 2/3, smaller is better).
  EXPECT_EQ(full.metrics.at("accuracy").versus, "h2o");
  EXPECT_EQ(full.metrics.at("kl").versus, "h2o");
  // full - h2o KL: -0.25, -0.5, -0.75.
  EXPECT_DOUBLE_EQ(full.metrics.at("kl").diff, -0.5);
  // KV bytes have no direction: no comparison.
  EXPECT_EQ(full.metrics.at("kv_bytes").versus, "");
  EXPECT_TRUE(std::isnan(full.metrics.at("kv_bytes").diff));
}

TEST(SweepStatistics, OneItemHasNoStandardErrorOrInterval) {
  std::vector<SweepItemResult> rows = {{1, "h2o", "10", 0, {{"kl", 0.5}}}, {1, "tova", "10", 0, {{"kl", 0.25}}}};
  const auto cells = summarize_sweep(rows, {"h2o", "tova"}, {"10"}, {"h2o", "tova"});
  EXPECT_TRUE(std::isnan(cells[0].metrics.at("kl").se));
  EXPECT_EQ(cells[0].metrics.at("kl").versus, "tova");
  EXPECT_DOUBLE_EQ(cells[0].metrics.at("kl").diff, 0.25);
  EXPECT_TRUE(std::isnan(cells[0].metrics.at("kl").ci.lo));
}

TEST(SweepStatistics, Tables) {
  const auto rows = hand_rows();
  const CsvTable items = sweep_items_table(rows);
  EXPECT_EQ(items.header, (std::vector<std::string>{"item", "policy", "budget", "seed", "accuracy", "kl", "kv_bytes"}));
  ASSERT_EQ(items.rows.size(), rows.size());  // one row per item x policy x budget x seed
  EXPECT_EQ(to_csv(items).substr(0, to_csv(items).find('\n', to_csv(items).find('\n') + 1)),
            "item,policy,budget,seed,accuracy,kl,kv_bytes\n1,full,50%,0,1,0,100");
  EXPECT_EQ(csv_cell(items.rows[7][1]), "random");  // item 1 with its second seed
  EXPECT_EQ(csv_cell(items.rows[7][3]), "1");
  const auto cells = summarize_sweep(rows, {"full", "h2o", "random"}, {"50%"}, {"h2o", "random"});
  const CsvTable sum = sweep_summary_table(cells);
  EXPECT_EQ(sum.header,
            (std::vector<std::string>{"policy", "budget", "accuracy", "kl", "kv_bytes", "accuracy_se", "kl_se",
                                      "kv_bytes_se", "n", "seeds", "accuracy_vs", "accuracy_diff", "accuracy_diff_lo",
                                      "accuracy_diff_hi", "kl_vs", "kl_diff", "kl_diff_lo", "kl_diff_hi"}));
  ASSERT_EQ(sum.rows.size(), 3u);
  EXPECT_EQ(csv_cell(sum.rows[2][0]), "random");
  EXPECT_EQ(csv_cell(sum.rows[2][8]), "3");  // n
  EXPECT_EQ(csv_cell(sum.rows[2][9]), "2");  // seeds
  EXPECT_EQ(csv_cell(sum.rows[2][10]), "h2o");
}

}  // namespace
}  // namespace kvscope
