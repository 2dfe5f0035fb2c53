// The key-only statistics (slot_stats.h) on the CPU backend, against the
// formulas worked in double from the cache's own keys: Knorm's -|k| and
// KeyDiff's -cos(k, mean of the normalised keys), after a prompt and after
// an eviction and a decode step (KeyDiff's anchor moves with the cache).
// SnapKV's observation window: only a call's last rows add attention.
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace kvscope
