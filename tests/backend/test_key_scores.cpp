// The key-only statistics (slot_stats.h) on the CPU backend, against the
// formulas worked in double from the cache's own keys: Knorm's -|k| and
// KeyDiff's -cos(k, mean of the normalised keys), after a prompt and after
// an eviction and a decode step (KeyDiff's anchor moves with the cache).
// SnapKV's observation window: only a call's last rows add attention.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "golden.h"
#include "model/loader.h"

namespace kvscope {
namespace {

struct Expected {
  std::vector<double> norm, diff;
};

Expected by_hand(const CpuBackend& be, int seg) {
  const int len = be.kv().len(seg), hd = be.kv().layout().head_dim;
  Expected e;
  std::vector<double> anchor(hd, 0.0);
  for (int j = 0; j < len; ++j) {
    const float* k = be.key(seg, j);
    double sq = 0;
    for (int d = 0; d < hd; ++d) sq += double(k[d]) * k[d];
    e.norm.push_back(std::sqrt(sq));
    for (int d = 0; d < hd; ++d) anchor[d] += k[d] / std::sqrt(sq) / len;
  }
  double an = 0;
  for (double a : anchor) an += a * a;
  an = std::sqrt(an);
  for (int j = 0; j < len; ++j) {
    double dot = 0;
    for (int d = 0; d < hd; ++d) dot += be.key(seg, j)[d] * anchor[d];
    e.diff.push_back(-dot / (e.norm[j] * an));
  }
  return e;
}

void expect_key_scores(const CpuBackend& be, StatSource source, const char* when) {
  for (int seg = 0; seg < be.kv().layout().n_segments(); ++seg) {
    const Expected e = by_hand(be, seg);
    const auto& st = be.slot_stats(seg);
    ASSERT_EQ(static_cast<int>(st.size()), be.kv().len(seg)) << when;
    for (int j = 0; j < be.kv().len(seg); ++j) {
      const double want = source == StatSource::KeyNorm ? -e.norm[j] : e.diff[j];
      EXPECT_NEAR(st[j], want, 1e-5 * std::max(1.0, std::abs(want))) << when << " seg " << seg << " slot " << j;
    }
  }
}

TEST(KeyScores, KnormAndKeyDiffAreTheirFormulasOnTheCachesKeys) {
  const auto m = load_model_files(test::model_dir("llama_gqa"));
  const auto g = test::Golden::load("llama_gqa");
  for (StatSource source : {StatSource::KeyNorm, StatSource::KeyDiff}) {
    BackendOptions bo;
    bo.max_tokens = 64;
    auto be = make_backend(Device::Cpu, m.config, m.weights, bo);
    const auto& cpu = dynamic_cast<const CpuBackend&>(*be);
    ForwardOptions fo;
    fo.stats.source = source;
    ForwardOutput out;
    be->forward(std::vector<int>(g.prompt.begin(), g.prompt.begin() + 20), fo, out);
    expect_key_scores(cpu, source, "after the prompt");
    const std::vector<int> keep = {0, 2, 3, 7, 11, 12, 18, 19};
    for (int s = 0; s < be->kv().layout().n_segments(); ++s) be->retain(s, keep);
    const int tok[1] = {g.prompt[20]};
    be->forward(tok, fo, out);
    expect_key_scores(cpu, source, "after an eviction and a decode step");
  }
}

TEST(KeyScores, AnObservationWindowCountsOnlyTheLastRows) {
  // H2O's column sums over the last 5 prompt rows only: the same as the
  // full sums minus those over the first 15 rows.
  const auto m = load_model_files(test::model_dir("llama_gqa"));
  const auto g = test::Golden::load("llama_gqa");
  BackendOptions bo;
  bo.max_tokens = 64;
  ForwardOptions all, window, head;
  all.stats = SlotStatRule{StatSource::Attention, 1.0f, ReaderReduce::Mean};
  window.stats = all.stats;
  window.stats.last_rows = 5;
  const std::vector<int> prompt(g.prompt.begin(), g.prompt.begin() + 20);
  auto a = make_backend(Device::Cpu, m.config, m.weights, bo);
  auto w = a->spawn(bo);
  auto f = a->spawn(bo);
  ForwardOutput out;
  a->forward(prompt, all, out);
  w->forward(prompt, window, out);
  f->forward(std::vector<int>(prompt.begin(), prompt.begin() + 15), all, out);
  for (int seg = 0; seg < a->kv().layout().n_segments(); ++seg)
    for (int j = 0; j < 20; ++j) {
      const double first = j < 15 ? f->slot_stats(seg)[j] : 0.0;
      EXPECT_NEAR(w->slot_stats(seg)[j], a->slot_stats(seg)[j] - first, 1e-5) << "seg " << seg << " slot " << j;
    }
  // Keys after the first 15 rows get no weight from them: before the window
  // nothing is read.
  EXPECT_GT(a->slot_stats(0)[0], w->slot_stats(0)[0] + 0.5);
}

// CUR (kv_product, local windows of w slots) worked in double from the
// cache's keys and values.
std::vector<double> cur_by_hand(const CpuBackend& be, int seg, int w) {
  const int len = be.kv().len(seg), hd = be.kv().layout().head_dim;
  auto sq = [&](const float* x) {
    double s = 0;
    for (int d = 0; d < hd; ++d) s += double(x[d]) * x[d];
    return s;
  };
  std::vector<double> out(len);
  double total = 0;
  for (int c0 = 0; c0 < len; c0 += w) {
    const int c1 = std::min(len, c0 + w);
    double sk = 0, sv = 0;
    for (int j = c0; j < c1; ++j) sk += sq(be.key(seg, j)), sv += sq(be.value(seg, j));
    for (int j = c0; j < c1; ++j) total += out[j] = sq(be.key(seg, j)) / sk * (sq(be.value(seg, j)) / sv);
  }
  for (double& x : out) x /= total;
  return out;
}

// LagKV's raw score (the mean of the keys' and the values' softmaxed
// spreads) of every token of the partition starting at p0, against the
// next partition, worked in double.
std::vector<double> lagkv_raw_by_hand(const CpuBackend& be, int seg, int p0, int lag) {
  const int hd = be.kv().layout().head_dim;
  std::vector<double> raw(lag, 0.0);
  for (const bool keys : {true, false}) {
    auto row = [&](int j) { return keys ? be.key(seg, j) : be.value(seg, j); };
    std::vector<double> spread(lag);
    for (int i = 0; i < lag; ++i) {
      std::vector<double> z(hd);
      for (int d = 0; d < hd; ++d) {
        double mn = row(p0 + lag)[d], mx = mn;
        for (int t = p0 + lag; t < p0 + 2 * lag; ++t)
          mn = std::min<double>(mn, row(t)[d]), mx = std::max<double>(mx, row(t)[d]);
        z[d] = (row(p0 + i)[d] - mn) / (mx - mn);
      }
      double mean = 0, var = 0;
      for (double x : z) mean += x / hd;
      for (double x : z) var += (x - mean) * (x - mean);
      spread[i] = std::sqrt(var / (hd - 1));
    }
    double top = *std::max_element(spread.begin(), spread.end()), sum = 0;
    for (double& x : spread) sum += x = std::exp(x - top);
    for (int i = 0; i < lag; ++i) raw[i] += spread[i] / sum / 2;
  }
  return raw;
}

// A CPU backend of llama_gqa after the first n prompt tokens under `rule`.
std::unique_ptr<Backend> scored_prompt(const SlotStatRule& rule, int n) {
  const auto m = load_model_files(test::model_dir("llama_gqa"));
  const auto g = test::Golden::load("llama_gqa");
  BackendOptions bo;
  bo.max_tokens = 64;
  auto be = make_backend(Device::Cpu, m.config, m.weights, bo);
  ForwardOptions fo;
  fo.stats = rule;
  ForwardOutput out;
  be->forward(std::vector<int>(g.prompt.begin(), g.prompt.begin() + n), fo, out);
  return be;
}

TEST(CacheScores, CurIsItsFormulaOnTheCachesKeysAndValues) {
  SlotStatRule rule;
  rule.source = StatSource::Cur;
  rule.span = 6;  // 20 slots: windows of 6, 6, 6 and a short one of 2
  const auto be = scored_prompt(rule, 20);
  const auto& cpu = dynamic_cast<const CpuBackend&>(*be);
  for (int seg = 0; seg < be->kv().layout().n_segments(); ++seg) {
    const auto want = cur_by_hand(cpu, seg, 6);
    double sum = 0;
    for (int j = 0; j < 20; ++j) {
      EXPECT_NEAR(cpu.slot_stats(seg)[j], want[j], 1e-5 * want[j]) << "seg " << seg << " slot " << j;
      sum += cpu.slot_stats(seg)[j];
    }
    EXPECT_NEAR(sum, 1.0, 1e-5);  // the row is normalised
  }
}

TEST(CacheScores, LagKvRanksEachPartitionAgainstTheNextAndKeepsSinksAndTail) {
  SlotStatRule rule;
  rule.source = StatSource::LagKv;
  rule.span = 5;   // lag
  rule.sinks = 3;  // 26 slots: partitions [3, 8) [8, 13) [13, 18) [18, 23), the rest 23..25
  const auto be = scored_prompt(rule, 26);
  const auto& cpu = dynamic_cast<const CpuBackend&>(*be);
  for (int seg = 0; seg < be->kv().layout().n_segments(); ++seg) {
    const auto& st = cpu.slot_stats(seg);
    for (int j : {0, 1, 2}) EXPECT_EQ(st[j], 1.0f) << "sink " << j;
    for (int j = 18; j < 26; ++j) EXPECT_EQ(st[j], 1.0f) << "tail " << j;  // the last partition and the rest
    for (int p0 : {3, 8, 13}) {
      const auto raw = lagkv_raw_by_hand(cpu, seg, p0, 5);
      for (int i = 0; i < 5; ++i) {
        int below = 0;
        for (int t = 0; t < 5; ++t) below += raw[t] < raw[i];
        EXPECT_EQ(st[p0 + i], below / 5.0f) << "seg " << seg << " slot " << p0 + i;
      }
    }
  }
  // Below sinks + 2 lags the newest slots rank highest (a sliding window).
  rule.span = 12;
  const auto short_be = scored_prompt(rule, 20);
  const auto& short_cpu = dynamic_cast<const CpuBackend&>(*short_be);
  for (int j = 0; j < 20; ++j)
    EXPECT_FLOAT_EQ(short_cpu.slot_stats(0)[j], j < 3 ? 1.0f : (j - 3) / 17.0f) << "slot " << j;
}

TEST(CacheScores, LeverageIsTheHatDiagonalOfTheKeysBeforeRope) {
  // 26 keys of 16 dimensions, centred: the hat matrix projects onto their
  // 16-dimensional span, so the leverages lie in [0, 1] and sum to 16.
  SlotStatRule rule;
  rule.source = StatSource::Leverage;
  const auto be = scored_prompt(rule, 26);
  const int hd = be->kv().layout().head_dim;
  ASSERT_EQ(hd, 16);
  for (int seg = 0; seg < be->kv().layout().n_segments(); ++seg) {
    double sum = 0;
    for (float h : be->slot_stats(seg)) {
      EXPECT_GE(h, -1e-6f);
      EXPECT_LE(h, 1.0f + 1e-5f);
      sum += h;
    }
    EXPECT_NEAR(sum, hd, 1e-3) << "seg " << seg;
  }
  // The score reads the keys before RoPE: after an eviction, keys rotated
  // to their original positions and keys re-rotated to their slots
  // (compacted positions) score the same.
  const auto m = load_model_files(test::model_dir("llama_gqa"));
  const auto g = test::Golden::load("llama_gqa");
  std::vector<std::vector<float>> by_mode;
  for (PositionMode mode : {PositionMode::Original, PositionMode::Compacted}) {
    BackendOptions bo;
    bo.max_tokens = 64;
    bo.positions = mode;
    auto b = make_backend(Device::Cpu, m.config, m.weights, bo);
    ForwardOptions fo;
    fo.stats = rule;
    ForwardOutput out;
    b->forward(std::vector<int>(g.prompt.begin(), g.prompt.begin() + 26), fo, out);
    const std::vector<int> keep = {0, 2, 3, 5, 7, 8, 9, 11, 12, 14, 15, 17, 18, 19, 20, 21, 22, 24, 25};
    for (int s = 0; s < b->kv().layout().n_segments(); ++s) b->retain(s, keep);
    const int tok[1] = {g.prompt[26]};
    b->forward(tok, fo, out);
    by_mode.push_back(b->slot_stats(0));
  }
  ASSERT_EQ(by_mode[0].size(), 20u);
  for (int j = 0; j < 20; ++j) EXPECT_NEAR(by_mode[0][j], by_mode[1][j], 1e-4) << "slot " << j;
}

}  // namespace
}  // namespace kvscope
