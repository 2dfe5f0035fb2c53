// What masks.npy's codes mean at the edges: the ideal oracle (which never
// evicts) and a streaming prefill (whose evictions all belong to row 0), and
// the random policy drawing afresh at every streaming prefill token.
#include <gtest/gtest.h>

#include <set>
#include <tuple>

#include "policy/selection.h"
#include "session_fixture.h"

namespace kvscope {
namespace {

TEST(MaskCodes, IdealMarksOutsideTheTopKWithoutEvicting) {
  Session s(test::bundle("llama_gqa"), test::config(PolicyKind::Ideal, "8"));
  s.run_to_end();
  const auto& rec = s.recorder();
  int outside = 0;
  for (int row = 0; row < rec.rows_recorded(); ++row) {
    const int newest = s.prompt_length() - 1 + row;
    for (int seg = 0; seg < rec.layout().n_segments(); ++seg) {
      int top = 0;
      for (int p = 0; p <= newest; ++p) {
        const uint8_t m = rec.mask(row, seg, p);
        // Nothing is ever evicted: every seen position is in the top k or outside it.
        ASSERT_TRUE(m == kMaskKept || m == kMaskProtected || m == kOutsideTopK)
            << "row " << row << " seg " << seg << " pos " << p << " code " << int(m);
        top += m != kOutsideTopK;
        outside += m == kOutsideTopK;
      }
      EXPECT_EQ(top, std::min(8, newest + 1)) << "row " << row << " seg " << seg;
    }
  }
  EXPECT_GT(outside, 0);
  EXPECT_TRUE(rec.events().empty());
}

TEST(MaskCodes, IdealTopKCanComeBack) {
  // The oracle's top k follows the current row, so a position may leave it
  // and return, which an evicted slot never does.
  Session s(test::bundle("llama_gqa"), test::config(PolicyKind::Ideal, "4", 16));
  s.run_to_end();
  const auto& rec = s.recorder();
  bool returned = false;
  for (int row = 1; row < rec.rows_recorded() && !returned; ++row)
    for (int seg = 0; seg < rec.layout().n_segments() && !returned; ++seg)
      for (int p = 0; p < rec.positions(); ++p)
        if (rec.mask(row - 1, seg, p) == kOutsideTopK && rec.mask(row, seg, p) == kMaskKept) returned = true;
  EXPECT_TRUE(returned);
}

TEST(MaskCodes, StreamingPrefillEvictionsAreRowZerosEvents) {
  for (PolicyKind k : {PolicyKind::H2O, PolicyKind::Sink, PolicyKind::Random}) {
    SessionConfig cfg = test::config(k, "6", 3);
    cfg.policy.prefill = PrefillMode::Streaming;
    Session s(test::bundle("llama_gqa"), cfg);
    s.run_to_end();
    const auto& rec = s.recorder();
    const int S = rec.layout().n_segments(), G = rec.layout().n_kv_heads;
    // Every step-0 event is a code 3 in row 0 and every code 3 in row 0 an event.
    std::set<std::tuple<int, int, int>> events, coded;
    for (const auto& e : rec.events())
      if (e.step == 0) events.insert({e.kv_layer, e.kv_head, e.position});
    for (int seg = 0; seg < S; ++seg)
      for (int p = 0; p < rec.positions(); ++p)
        if (rec.mask(0, seg, p) == kEvictedNow) coded.insert({seg / G, seg % G, p});
    EXPECT_EQ(events, coded) << policy_name(k);
    // The prompt is longer than the budget, so most of it went while it was fed.
    EXPECT_GE(static_cast<int>(coded.size()), S * (s.prompt_length() - 6)) << policy_name(k);
    for (int seg = 0; seg < S; ++seg)
      for (int p = 0; p < rec.positions(); ++p) {
        // None of row 0's code is "evicted earlier": there is no earlier row.
        EXPECT_NE(rec.mask(0, seg, p), kEvictedEarlier);
        if (rec.mask(0, seg, p) == kEvictedNow) EXPECT_EQ(rec.mask(1, seg, p), kEvictedEarlier);
      }
  }
}

TEST(MaskCodes, RandomDrawsAfreshAtEveryStreamingPrefillToken) {
  // With one fixed draw per position for the whole prompt, the slots left
  // after a streaming prefill would be those with the largest draws among
  // all that left the window, whatever order they arrived in. Fresh draws
  // per token keep earlier positions less often: each survived more draws.
  SessionConfig cfg = test::config(PolicyKind::Random, "6", 1);
  cfg.policy.prefill = PrefillMode::Streaming;
  cfg.policy.window = Amount::parse("1", "w");
  cfg.recording.metrics = false;
  // The draws at distinct steps differ, and streaming prefill steps never
  // collide with decode rows.
  EXPECT_NE(streaming_prefill_step(0), 0);
  EXPECT_NE(streaming_prefill_step(0), streaming_prefill_step(1));
  EXPECT_LT(streaming_prefill_step(1000), 0);
  // The kept set after the prompt equals a re-run of the rule by hand: keep
  // the newest w, then the top (k - w) by the draw of each step.
  Session s(test::bundle("llama_gqa"), cfg);
  s.prefill();
  const auto& r = s.policy().resolved();
  const int G = s.recorder().layout().n_kv_heads;
  for (int seg = 0; seg < s.recorder().layout().n_segments(); ++seg) {
    std::vector<int> cache;
    for (int i = 0; i < s.prompt_length(); ++i) {
      cache.push_back(i);
      const int step = i + 1 < s.prompt_length() ? streaming_prefill_step(i) : 0;
      if (static_cast<int>(cache.size()) <= r.k) continue;
      // Candidates: all but the newest w; drop the lowest draws until k remain.
      std::vector<std::pair<float, int>> cand;
      for (int p : cache)
        if (p <= i - r.w) {
          const auto d = philox4(r.params.seed, static_cast<uint32_t>(step), static_cast<uint32_t>(seg),
                                 static_cast<uint32_t>(p), static_cast<uint32_t>(RandomStream::EvictRandom));
          cand.push_back({uniform01(d.v[0]), p});
        }
      std::sort(cand.begin(), cand.end());
      const int drop = static_cast<int>(cache.size()) - r.k;
      for (int d = 0; d < drop; ++d) cache.erase(std::find(cache.begin(), cache.end(), cand[d].second));
    }
    std::vector<int> kept;
    for (int p = 0; p < s.prompt_length(); ++p) {
      const uint8_t m = s.recorder().mask(0, seg, p);
      if (m == kMaskKept || m == kMaskProtected) kept.push_back(p);
    }
    EXPECT_EQ(kept, cache) << "kv layer " << seg / G << " kv head " << seg % G;
  }
}

}  // namespace
}  // namespace kvscope
