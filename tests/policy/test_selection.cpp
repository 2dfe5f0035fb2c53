// Hand-worked eviction decisions from the papers' rules, on caches whose
// statistics are set by hand: what H2O, TOVA, A2SF, Keyformer, window,
// sink, random, full and ideal keep.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "common/counter_random.h"
#include "common/error.h"
#include "kv_book_fixture.h"
#include "policy/selection.h"

namespace kvscope {
namespace {

using test::book_of;
using test::kept_positions;

std::unique_ptr<Policy> policy(PolicyKind kind, const std::string& budget, int prompt_len,
                               std::optional<std::string> window = {}, std::optional<int> sinks = {},
                               std::optional<Granularity> g = {}) {
  PolicyParams p;
  p.kind = kind;
  p.budget = Amount::parse(budget, "budget");
  if (window) p.window = Amount::parse(*window, "window");
  p.sinks = sinks;
  p.granularity = g;
  return make_policy(resolve_policy(p, prompt_len, 1000));
}

TEST(Selection, H2OKeepsRecentWindowPlusHeavyHitters) {
  // 8 tokens, k = 4, w = k/2 = 2: positions 6, 7 are protected; of 0..5 the
  // two highest accumulated scores (positions 0 and 3) stay.
  const KvBook b = book_of(8);
  const std::vector<float> S = {2.5f, 0.1f, 0.3f, 1.2f, 0.2f, 0.05f, 0.4f, 0.9f};
  const auto pol = policy(PolicyKind::H2O, "4", 8);
  EXPECT_EQ(pol->resolved().w, 2);
  const auto c = choose_slots(*pol, b, [&](int) -> const std::vector<float>& { return S; }, 7, 0);
  EXPECT_EQ(kept_positions(b, c), (std::vector<int>{0, 3, 6, 7}));
  EXPECT_EQ(c.state[0][6], kProtected);
  EXPECT_EQ(c.state[0][7], kProtected);
  EXPECT_EQ(c.state[0][0], kKept);
  EXPECT_EQ(c.state[0][5], kDropped);
  EXPECT_EQ(c.dropped, 4);
  // Dropped slots carry their rank among all 8 (protected ones included):
  // by score 0 (2.5), 3 (1.2), 7 (0.9), 6 (0.4), 2 (0.3), 4 (0.2), 1 (0.1), 5 (0.05).
  EXPECT_EQ(c.rank[0][2], 5);
  EXPECT_EQ(c.rank[0][4], 6);
  EXPECT_EQ(c.rank[0][1], 7);
  EXPECT_EQ(c.rank[0][5], 8);
  EXPECT_EQ(c.rank[0][0], 0);  // kept slots carry none
}

TEST(Selection, TovaEvictsTheLowestHeadAveragedScore) {
  // TOVA's Algorithm 1 with the layer-wise (head-averaged) decision: cache of
  // 5 over a budget of 4, two KV heads disagree; the mean decides.
  const KvBook b = book_of(5, 2);
  const std::vector<float> h0 = {0.40f, 0.05f, 0.20f, 0.15f, 0.20f};
  const std::vector<float> h1 = {0.30f, 0.25f, 0.02f, 0.23f, 0.20f};
  // means: 0.35, 0.15, 0.11, 0.19, 0.20 -> position 2 goes from both heads.
  const auto pol = policy(PolicyKind::TOVA, "4", 5);
  EXPECT_EQ(pol->resolved().granularity, Granularity::Layer);
  const auto c = choose_slots(*pol, b, [&](int s) -> const std::vector<float>& { return s == 0 ? h0 : h1; }, 4, 1);
  EXPECT_EQ(kept_positions(b, c, 0), (std::vector<int>{0, 1, 3, 4}));
  EXPECT_EQ(kept_positions(b, c, 1), (std::vector<int>{0, 1, 3, 4}));
  // Per head (kv_head granularity) each head drops its own minimum instead.
  const auto per_head = policy(PolicyKind::TOVA, "4", 5, {}, {}, Granularity::KvHead);
  const auto d = choose_slots(*per_head, b, [&](int s) -> const std::vector<float>& { return s == 0 ? h0 : h1; }, 4, 1);
  EXPECT_EQ(kept_positions(b, d, 0), (std::vector<int>{0, 2, 3, 4}));
  EXPECT_EQ(kept_positions(b, d, 1), (std::vector<int>{0, 1, 3, 4}));
}

TEST(Selection, A2sfForgettingLetsAStaleHeavyHitterGo) {
  // A2SF's point (its Figure 2): token 1 drew attention once, long ago.
  // Rows of attention over positions 0..3 at three steps:
  const float A[3][4] = {{0.5f, 0.5f, 0.0f, 0.0f}, {0.6f, 0.1f, 0.3f, 0.0f}, {0.5f, 0.0f, 0.3f, 0.2f}};
  auto scores = [&](float alpha) {
    std::vector<float> S(4, 0.0f);
    for (const auto& row : A)
      for (int j = 0; j < 4; ++j) S[j] = alpha * S[j] + row[j];
    return S;
  };
  const KvBook b = book_of(4);
  // Budget 3, no window. Plain accumulation (alpha = 1, H2O's score) gives
  // 1.6, 0.6, 0.6, 0.2: the stale token 1 survives and token 3 goes.
  const auto h2o_like = scores(1.0f);
  EXPECT_FLOAT_EQ(h2o_like[1], 0.6f);
  const auto a2sf = scores(0.2f);  // 0.624, 0.12, 0.36, 0.2 -> token 1 goes
  EXPECT_NEAR(a2sf[1], 0.5f * 0.04f + 0.1f * 0.2f, 1e-6);
  const auto pol = policy(PolicyKind::A2SF, "3", 4);
  EXPECT_EQ(pol->resolved().w, 0);
  const auto c = choose_slots(*pol, b, [&](int) -> const std::vector<float>& { return a2sf; }, 3, 2);
  EXPECT_EQ(kept_positions(b, c), (std::vector<int>{0, 2, 3}));
  const auto c1 = choose_slots(*pol, b, [&](int) -> const std::vector<float>& { return h2o_like; }, 3, 2);
  // No tie matters here: token 3 (0.2) is the lowest and goes; 1 and 2 (0.6 each) both fit.
  EXPECT_EQ(kept_positions(b, c1), (std::vector<int>{0, 1, 2}));
  // A real tie at the boundary: budget 2 keeps 0 and one of the two equal
  // 0.6s; the newer (2) stays, the older (1) goes, and 1 ranks below 2.
  const std::vector<float> tied = {1.6f, 0.6f, 0.6f, 0.2f};
  PolicyParams p2;
  p2.kind = PolicyKind::A2SF;
  p2.budget = Amount::parse("2", "budget");
  const auto pol2 = make_policy(resolve_policy(p2, 4, 1000));
  const auto c2 = choose_slots(*pol2, b, [&](int) -> const std::vector<float>& { return tied; }, 3, 2);
  EXPECT_EQ(kept_positions(b, c2), (std::vector<int>{0, 2}));
  EXPECT_EQ(c2.rank[0][1], 3);
  EXPECT_EQ(c2.rank[0][3], 4);
}

TEST(Selection, WindowSinkAndRandom) {
  const KvBook b = book_of(10);
  const std::vector<float> none(10, 0.0f);
  auto stats = [&](int) -> const std::vector<float>& { return none; };
  const auto win = policy(PolicyKind::Window, "4", 10);
  EXPECT_EQ(kept_positions(b, choose_slots(*win, b, stats, 9, 0)), (std::vector<int>{6, 7, 8, 9}));
  const auto sink = policy(PolicyKind::Sink, "6", 10);
  EXPECT_EQ(sink->resolved().s, 4);
  const auto cs = choose_slots(*sink, b, stats, 9, 0);
  EXPECT_EQ(kept_positions(b, cs), (std::vector<int>{0, 1, 2, 3, 8, 9}));
  EXPECT_EQ(cs.state[0][0], kProtected);
  // Random: protected sinks stay, the rest is a seeded draw of the right size,
  // the same for the same step and different for another step.
  const auto rnd = policy(PolicyKind::Random, "5", 10, {}, 1);
  const auto r1 = choose_slots(*rnd, b, stats, 9, 3), r2 = choose_slots(*rnd, b, stats, 9, 3);
  const auto r3 = choose_slots(*rnd, b, stats, 9, 4);
  EXPECT_EQ(kept_positions(b, r1), kept_positions(b, r2));
  EXPECT_EQ(kept_positions(b, r1).size(), 5u);
  EXPECT_EQ(kept_positions(b, r1)[0], 0);
  // Another step draws anew, with the same sizes and the sink still kept.
  EXPECT_EQ(kept_positions(b, r3).size(), 5u);
  EXPECT_EQ(kept_positions(b, r3)[0], 0);
  EXPECT_EQ(r3.state[0][0], kProtected);
  EXPECT_EQ(r3.dropped, 5);
  bool differs = kept_positions(b, r3) != kept_positions(b, r1);
  for (int s = 5; s < 40 && !differs; ++s) differs = kept_positions(b, choose_slots(*rnd, b, stats, 9, s)) != kept_positions(b, r1);
  EXPECT_TRUE(differs) << "the random policy never changed its draw";
}

TEST(Selection, ParamsDefaultsResolveAsPoliciesMdSays) {
  // k = 20 of a 40-token prompt (50%).
  auto resolved = [](PolicyKind kind) {
    PolicyParams p;
    p.kind = kind;
    p.budget = Amount::parse("50%", "budget");
    return resolve_policy(p, 40, 1000);
  };
  // keyformer: tau_init 1, tau_end 2, linear schedule, gumbel noise, w = 30% of k.
  const ResolvedPolicy kf = resolved(PolicyKind::Keyformer);
  EXPECT_EQ(kf.k, 20);
  EXPECT_EQ(kf.w, 6);
  EXPECT_EQ(kf.s, 0);
  EXPECT_EQ(kf.granularity, Granularity::KvHead);
  EXPECT_EQ(kf.params.tau_init, 1.0f);
  EXPECT_EQ(kf.params.tau_end, 2.0f);
  EXPECT_EQ(kf.params.tau_schedule, TauSchedule::Linear);
  EXPECT_EQ(kf.params.noise, NoiseKind::Gumbel);
  EXPECT_EQ(kf.params.prefill, PrefillMode::OneShot);
  EXPECT_EQ(kf.params.reduce, ReaderReduce::Mean);
  const auto kpol = make_policy(kf);
  EXPECT_EQ(kpol->stat_rule({0, 8}).noise, NoiseKind::Gumbel);
  EXPECT_FLOAT_EQ(kpol->stat_rule({0, 8}).tau, 1.0f);
  EXPECT_FLOAT_EQ(kpol->stat_rule({2, 8}).tau, 1.25f);
  EXPECT_FLOAT_EQ(kpol->stat_rule({8, 8}).tau, 2.0f);
  EXPECT_EQ(kpol->stat_rule({0, 8}).decay, 1.0f);
  // A 30% window rounds to nearest: k = 7 -> 2.1 -> 2, k = 5 -> 1.5 -> 2.
  PolicyParams p;
  p.kind = PolicyKind::Keyformer;
  p.budget = Amount::parse("7", "budget");
  EXPECT_EQ(resolve_policy(p, 40, 1000).w, 2);
  p.budget = Amount::parse("5", "budget");
  EXPECT_EQ(resolve_policy(p, 40, 1000).w, 2);
  // h2o: w = k/2.
  const ResolvedPolicy h2o = resolved(PolicyKind::H2O);
  EXPECT_EQ(h2o.w, 10);
  EXPECT_EQ(h2o.s, 0);
  EXPECT_EQ(h2o.granularity, Granularity::KvHead);
  EXPECT_EQ(make_policy(h2o)->stat_rule({3, 8}).decay, 1.0f);
  // a2sf: alpha 0.2, w 0.
  const ResolvedPolicy a2sf = resolved(PolicyKind::A2SF);
  EXPECT_EQ(a2sf.params.alpha, 0.2f);
  EXPECT_EQ(a2sf.w, 0);
  EXPECT_EQ(a2sf.s, 0);
  EXPECT_EQ(make_policy(a2sf)->stat_rule({3, 8}).decay, 0.2f);
  // tova: granularity layer, w 0, s 0, the current row only.
  const ResolvedPolicy tova = resolved(PolicyKind::TOVA);
  EXPECT_EQ(tova.granularity, Granularity::Layer);
  EXPECT_EQ(tova.w, 0);
  EXPECT_EQ(tova.s, 0);
  EXPECT_EQ(make_policy(tova)->stat_rule({3, 8}).decay, 0.0f);
  EXPECT_EQ(make_policy(tova)->stat_rule({3, 8}).source, StatSource::Attention);
  // sink: s = 4.
  EXPECT_EQ(resolved(PolicyKind::Sink).s, 4);
}

TEST(Selection, BadAmountsAreOneMessageNamingTheField) {
  auto error_of = [](const std::string& text) -> std::string {
    try {
      Amount::parse(text, "policy.budget");
    } catch (const Error& e) {
      return e.what();
    }
    return "(accepted)";
  };
  EXPECT_NE(error_of("2.5").find("policy.budget: a count must be a whole number"), std::string::npos);
  EXPECT_NE(error_of("120%").find("policy.budget: a percentage must be at most 100%"), std::string::npos);
  EXPECT_NE(error_of("-3").find("policy.budget: expected a count"), std::string::npos);
  EXPECT_NE(error_of("").find("policy.budget: expected a count"), std::string::npos);
  // Past int's range: refused, not converted (that would be undefined).
  EXPECT_NE(error_of("1e20").find("policy.budget: a count must be at most 2147483647"), std::string::npos) << error_of("1e20");
  EXPECT_EQ(error_of("2147483647"), "(accepted)");
  EXPECT_EQ(Amount::parse("64", "--budget").of(1000), 64);
  EXPECT_NE(error_of("ratio:1").find("policy.budget: a compression ratio"), std::string::npos) << error_of("ratio:1");
  EXPECT_NE(error_of("ratio:-0.1").find("must be a number in [0, 1)"), std::string::npos);
  EXPECT_NE(error_of("ratio:").find("must be a number in [0, 1), got ''"), std::string::npos);
  EXPECT_NE(error_of("ratio:nan").find("must be a number in [0, 1)"), std::string::npos);
}

// kvpress's rounding, k = max(1, int(n (1 - r))) in double, and a text form
// that reads back to the same double.
TEST(Selection, CompressionRatioBudgetsRoundAsKvpress) {
  const Amount q = Amount::parse("ratio:0.25", "policy.budget");
  EXPECT_TRUE(q.ratio);
  EXPECT_EQ(q.of(48), 36);
  EXPECT_EQ(q.of(81), 60);  // 60.75 truncates
  EXPECT_EQ(q.truncated_of(81), 60);
  EXPECT_DOUBLE_EQ(q.exact_of(81), 60.75);
  // int() of the double product, as Python: 10 (1 - 0.7) is
  // 3.0000000000000004, 20 (1 - 0.9) is 1.9999999999999996 (so 1, not 2).
  EXPECT_EQ(Amount::parse("ratio:0.7", "b").of(10), 3);
  EXPECT_EQ(Amount::parse("ratio:0.9", "b").of(20), 1);
  EXPECT_EQ(Amount::parse("ratio:0.9", "b").of(10), 1);    // 0.9999999999999998, and at least one stays
  EXPECT_EQ(Amount::parse("ratio:0.999", "b").of(10), 1);  // at least one stays
  EXPECT_EQ(Amount::parse("ratio:0", "b").of(10), 10);
  for (const char* text : {"ratio:0.25", "ratio:0.1", "ratio:0.333"}) EXPECT_EQ(Amount::parse(text, "b").str(), text);
  const Amount third{1.0 / 3.0, false, true};
  EXPECT_EQ(Amount::parse(third.str(), "b").value, third.value) << third.str();
  // Only a budget is a ratio.
  PolicyParams p;
  p.kind = PolicyKind::H2O;
  EXPECT_THROW(set_param_text(p, *find_param("window"), "ratio:0.5"), Error);
  set_param_text(p, *find_param("budget"), "ratio:0.5");
  EXPECT_EQ(resolve_policy(p, 81, 4096).k, 40);
}

TEST(Selection, RandomScoresAreThePhiloxDrawsOfTheirPositions) {
  // The draws are made in one batch per unit; each must be the documented
  // uniform01(word 0 of Philox(seed; step, unit's first segment, position,
  // EvictRandom)), per KV head and for a layer-wide decision (where every
  // segment of the layer reports the draws of its first).
  const KvBook b = book_of(40, 3);
  const std::vector<float> none(40, 0.0f);
  auto stats = [&](int) -> const std::vector<float>& { return none; };
  for (Granularity g : {Granularity::KvHead, Granularity::Layer}) {
    PolicyParams p;
    p.kind = PolicyKind::Random;
    p.budget = Amount::parse("17", "budget");
    p.granularity = g;
    p.seed = 0x5eed;
    const auto pol = make_policy(resolve_policy(p, 40, 1000));
    const auto c = choose_slots(*pol, b, stats, 39, 7);
    for (int s = 0; s < 3; ++s) {
      const int unit_first = g == Granularity::KvHead ? s : 0;
      for (int j = 0; j < 40; ++j) {
        const float want = uniform01(philox4(0x5eed, 7, static_cast<uint32_t>(unit_first), static_cast<uint32_t>(j),
                                             static_cast<uint32_t>(RandomStream::EvictRandom)).v[0]);
        ASSERT_EQ(c.score[s][j], want) << "segment " << s << " slot " << j;
        EXPECT_EQ(c.state[s][j] == kDropped, c.rank[s][j] > 0);
      }
      EXPECT_EQ(std::count(c.state[s].begin(), c.state[s].end(), kDropped), 23);
    }
  }
}

TEST(Selection, FullAndIdealNeverEvict) {
  const KvBook b = book_of(10);
  const std::vector<float> S = {0.5f, 0, 0, 0.2f, 0, 0, 0, 0.1f, 0.1f, 0.1f};
  auto stats = [&](int) -> const std::vector<float>& { return S; };
  const auto full = policy(PolicyKind::Full, "10%", 10);
  const auto cf = choose_slots(*full, b, stats, 9, 0);
  EXPECT_EQ(cf.keep[0].size(), 10u);
  EXPECT_EQ(cf.dropped, 0);
  const auto ideal = policy(PolicyKind::Ideal, "3", 10);
  const auto ci = choose_slots(*ideal, b, stats, 9, 0);
  EXPECT_EQ(ci.keep[0].size(), 10u);  // nothing leaves the cache...
  EXPECT_EQ(ci.dropped, 0);
  int marked = 0;  // ...but the mask marks the top 3 of the current row
  for (auto s : ci.state[0]) marked += s != kDropped;
  EXPECT_EQ(marked, 3);
  EXPECT_EQ(ci.state[0][0], kKept);
  EXPECT_EQ(ci.state[0][3], kKept);
}

TEST(Selection, ModelGranularitySharesOneDecisionAcrossLayers) {
  const KvBook b = book_of(4, 1, 2);  // two owning layers, one KV head each
  const std::vector<float> l0 = {0.1f, 0.9f, 0.2f, 0.3f}, l1 = {0.8f, 0.0f, 0.2f, 0.1f};
  // Means over the two layers: 0.45, 0.45, 0.2, 0.2 -> with k = 2 positions
  // 0 and 1 stay in both layers, though layer 0 alone would keep 1 and 3.
  const auto pol = policy(PolicyKind::H2O, "2", 4, std::string("0"), {}, Granularity::Model);
  const auto c = choose_slots(*pol, b, [&](int s) -> const std::vector<float>& { return s == 0 ? l0 : l1; }, 3, 0);
  EXPECT_EQ(kept_positions(b, c, 0), (std::vector<int>{0, 1}));
  EXPECT_EQ(kept_positions(b, c, 1), (std::vector<int>{0, 1}));
}

// Every position of a unit ranked by sorting, from the definition: the
// mean statistic (in double, over the segments holding the position, in
// segment order), the newer position first on ties; sinks and the recent
// window protected; of each segment's other positions, the best k -
// |its protected| kept (so every segment holds k after the choice, also
// when the segments hold different positions). The choice of every segment
// must match, and so must the ranks of dropped slots (within the segment).
void expect_choice_equals_sorting(const KvBook& b, const std::vector<std::vector<float>>& S, Granularity g) {
  const int segs = b.layout().n_segments();
  int newest = 0;
  for (int s = 0; s < segs; ++s) newest = std::max(newest, b.positions(s).back());
  const int n = newest + 1;
  struct Case {
    PolicyKind kind;
    std::optional<std::string> window;
    std::optional<int> sinks;
  };
  for (const Case& pc : {Case{PolicyKind::H2O}, Case{PolicyKind::H2O, "20", 4}, Case{PolicyKind::TOVA},
                         Case{PolicyKind::Random}, Case{PolicyKind::Window}, Case{PolicyKind::Sink},
                         Case{PolicyKind::Ideal}}) {
    const PolicyKind kind = pc.kind;
    for (const char* budget : {"100", "590", "598"}) {  // many dropped (sorted ranks), few (counted), two (minimum scans)
      const auto pol = policy(kind, budget, n, pc.window, pc.sinks, g);
      const auto c = choose_slots(*pol, b, [&](int s) -> const std::vector<float>& { return S[s]; }, newest, 3);
      const auto& r = pol->resolved();
      std::vector<double> mean(n, 0.0), random(n, 0.0);
      std::vector<int> count(n, 0);
      for (int s = 0; s < segs; ++s)
        for (int j = 0; j < b.len(s); ++j) {
          const int p = b.positions(s)[j];
          mean[p] += S[s][j];
          ++count[p];
          random[p] = c.score[s][j];  // the random policy's draws, as it reports them
        }
      std::vector<int> order;
      for (int p = 0; p < n; ++p)
        if (count[p] > 0) {
          mean[p] /= count[p];
          order.push_back(p);
        }
      auto score = [&](int p) -> double {
        return kind == PolicyKind::Window || kind == PolicyKind::Sink ? p
               : kind == PolicyKind::Random                          ? random[p]
                                                                     : mean[p];
      };
      std::sort(order.begin(), order.end(), [&](int x, int y) {
        return score(x) != score(y) ? score(x) > score(y) : x > y;
      });
      auto prot = [&](int p) { return p < r.s || p > newest - r.w; };
      for (int s = 0; s < segs; ++s) {
        // The segment keeps k of its own positions, in the unit's order.
        std::vector<char> held(n, 0);
        for (int p : b.positions(s)) held[p] = 1;
        std::vector<int> own;
        for (int p : order)
          if (held[p]) own.push_back(p);
        int room = r.k, n_prot = 0;
        for (int p : own) n_prot += prot(p);
        room -= n_prot;
        std::vector<uint8_t> want(n);
        std::vector<int> want_rank(n, 0);
        int taken = 0;
        for (std::size_t i = 0; i < own.size(); ++i) {
          const int p = own[i];
          const bool keep = prot(p) || taken++ < room;
          want[p] = prot(p) ? kProtected : keep ? kKept : kDropped;
          if (!keep && pol->evicts()) want_rank[p] = static_cast<int>(i) + 1;
        }
        // Every segment holds k slots after the choice (or all it had, or
        // its protected ones when they alone are more than k).
        int kept = 0;
        for (int j = 0; j < b.len(s); ++j) kept += c.state[s][j] != kDropped;
        if (pol->evicts()) {
          EXPECT_EQ(kept, b.len(s) <= r.k ? b.len(s) : std::max(r.k, n_prot)) << "segment " << s;
        }
        for (int j = 0; j < b.len(s); ++j) {
          const int p = b.positions(s)[j];
          ASSERT_EQ(c.state[s][j], want[p]) << "policy " << static_cast<int>(kind) << " budget " << budget
                                            << " segment " << s << " position " << p;
          ASSERT_EQ(c.rank[s][j], want_rank[p]) << "policy " << static_cast<int>(kind) << " budget " << budget
                                                << " segment " << s << " position " << p;
        }
      }
    }
  }
}

// A 600-position cache of `g` KV heads in one layer.
KvBook big_book(int g) {
  KvLayout lay = book_of(0, g).layout();
  KvBook big(lay, 600);
  std::vector<int> rope(g);
  for (int p = 0; p < 600; ++p) {
    std::fill(rope.begin(), rope.end(), p);
    big.append(p, rope);
  }
  return big;
}

// Scores on a coarse grid, so many tie and the position decides.
std::vector<std::vector<float>> grid_scores(const KvBook& b) {
  std::vector<std::vector<float>> S(b.layout().n_segments());
  for (int s = 0; s < b.layout().n_segments(); ++s)
    for (int j = 0; j < b.len(s); ++j) S[s].push_back(static_cast<float>(philox4(5, j, s, 0, 0).v[0] % 50) / 7.0f);
  return S;
}

TEST(Selection, PerHeadChoiceEqualsSortingTheWholeCache) {
  // The per-segment path partitions packed keys.
  const KvBook b = big_book(1);
  expect_choice_equals_sorting(b, grid_scores(b), Granularity::KvHead);
}

TEST(Selection, SharedChoiceEqualsSortingTheWholeCache) {
  // Three KV heads decide together: the same positions in each (128-bit
  // keys of the double mean), then different positions (a head evicted on
  // its own before: the general path, where a position's mean is over the
  // heads holding it).
  KvBook b = big_book(3);
  expect_choice_equals_sorting(b, grid_scores(b), Granularity::Layer);
  std::vector<int> keep;
  for (int j = 0; j < 600; ++j)
    if (j % 9 != 4) keep.push_back(j);
  b.retain(1, keep);
  expect_choice_equals_sorting(b, grid_scores(b), Granularity::Layer);
}

TEST(Selection, ChunksAreKeptWholeByTheirMeanScorePerLayer) {
  // 10 slots, chunks of 3: [0, 3) [3, 6) [6, 9) [9, 10). Layer means per
  // slot (two heads): 0.5 0.5 0.5 | 0.9 0.1 0.1 | 0.4 0.4 0.4 | 0.45.
  // Chunk means: 0.5, 0.367, 0.4, 0.45.
  const KvBook b = book_of(10, 2);
  const std::vector<float> h0 = {0.6f, 0.4f, 0.5f, 1.0f, 0.1f, 0.1f, 0.3f, 0.5f, 0.4f, 0.5f};
  const std::vector<float> h1 = {0.4f, 0.6f, 0.5f, 0.8f, 0.1f, 0.1f, 0.5f, 0.3f, 0.4f, 0.4f};
  auto stats = [&](int s) -> const std::vector<float>& { return s == 0 ? h0 : h1; };
  PolicyParams p;
  p.kind = PolicyKind::Knorm;
  p.window = Amount{0, false};
  p.sinks = 0;
  p.granularity = Granularity::Layer;
  p.extra["chunk_length"] = 3;
  // kvpress's count for a ratio at the prompt: max(1, int(4 x (1 - 0.5))) = 2
  // chunks: the short last one (0.45) and the first (0.5), 4 slots.
  p.budget = Amount{0.5, false, true};
  const auto c = choose_slots(*make_policy(resolve_policy(p, 10, 1000)), b, stats, 9, 0);
  EXPECT_EQ(kept_positions(b, c, 0), (std::vector<int>{0, 1, 2, 9}));
  EXPECT_EQ(kept_positions(b, c, 1), kept_positions(b, c, 0));  // one decision for the layer
  // A budget of 9 slots: max(1, int(4 x 9 / 10)) = 3 chunks, the best three.
  p.budget = Amount{9, false};
  const auto d = choose_slots(*make_policy(resolve_policy(p, 10, 1000)), b, stats, 9, 0);
  EXPECT_EQ(kept_positions(b, d, 0), (std::vector<int>{0, 1, 2, 6, 7, 8, 9}));
  // A protected slot keeps its chunk and counts first: sinks 4 protect
  // chunk [3, 6) as well as [0, 3); with 2 chunks, nothing else stays.
  p.budget = Amount{0.5, false, true};
  p.sinks = 4;
  const auto e = choose_slots(*make_policy(resolve_policy(p, 10, 1000)), b, stats, 9, 0);
  EXPECT_EQ(kept_positions(b, e, 0), (std::vector<int>{0, 1, 2, 3, 4, 5}));
  // Chunks are chosen for a whole layer: kv_head granularity is refused by name.
  p.granularity = Granularity::KvHead;
  try {
    resolve_policy(p, 10, 1000);
    ADD_FAILURE() << "accepted";
  } catch (const Error& err) {
    EXPECT_NE(std::string(err.what()).find("policy.chunk_length: chunks are chosen for a whole layer"),
              std::string::npos)
        << err.what();
  }
}

}  // namespace
}  // namespace kvscope

namespace kvscope {
namespace {

// AdaKV by hand: two KV heads of one layer, 8 positions, k = 4 each, no
// window or sinks, safeguard 0.25 (n_safe = max(1, int(4 x 0.25)) = 1).
// Head 0's scores are concentrated, head 1's spread: each keeps its own
// best first, then the layer's 6 best remaining of both heads stay.
TEST(Selection, AdaptiveHeadBudgetsSplitTheLayersSlotsByScore) {
  const KvBook b = book_of(8, 2);
  const std::vector<float> h0 = {0.90f, 0.80f, 0.70f, 0.60f, 0.01f, 0.02f, 0.03f, 0.04f};
  const std::vector<float> h1 = {0.10f, 0.20f, 0.30f, 0.40f, 0.50f, 0.15f, 0.25f, 0.35f};
  PolicyParams p;
  p.kind = PolicyKind::Knorm;
  p.budget = Amount{4, false};
  p.window = Amount{0, false};
  p.sinks = 0;
  p.head_budgets = HeadBudgets::Adaptive;
  p.extra["safeguard"] = 0.25;
  const auto pol = make_policy(resolve_policy(p, 8, 1000));
  const auto c = choose_slots(
      *pol, b, [&](int s) -> const std::vector<float>& { return s == 0 ? h0 : h1; }, 7, 0);
  // Safeguarded: head 0 position 0 (0.9), head 1 position 4 (0.5). The rest,
  // best first: h0 p1 0.8, h0 p2 0.7, h0 p3 0.6, h1 p3 0.4, h1 p7 0.35, h1 p2
  // 0.3 | h1 p6 0.25, ... So head 0 keeps 4 and head 1 keeps 4: {2, 3, 4, 7}.
  EXPECT_EQ(kept_positions(b, c, 0), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(kept_positions(b, c, 1), (std::vector<int>{2, 3, 4, 7}));
  // A sharper head 0 and a flatter head 1 move slots across: head 0 keeps
  // 2 (its safeguard and one more), head 1 six.
  const std::vector<float> g0 = {0.95f, 0.32f, 0.01f, 0.01f, 0.01f, 0.01f, 0.01f, 0.01f};
  const std::vector<float> g1 = {0.30f, 0.31f, 0.33f, 0.34f, 0.35f, 0.36f, 0.37f, 0.38f};
  const auto d = choose_slots(
      *pol, b, [&](int s) -> const std::vector<float>& { return s == 0 ? g0 : g1; }, 7, 0);
  EXPECT_EQ(kept_positions(b, d, 0), (std::vector<int>{0, 1}));
  EXPECT_EQ(kept_positions(b, d, 1), (std::vector<int>{2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(d.dropped, 8);
  // With no safeguard a head keeps only what it wins: with its second
  // score at 0.305, head 0 keeps 0.95 alone (head 1's seven scores from
  // 0.31 up are better), and head 1 keeps seven.
  p.extra["safeguard"] = 0.0;
  const auto pol0 = make_policy(resolve_policy(p, 8, 1000));
  const std::vector<float> g0b = {0.95f, 0.305f, 0.01f, 0.01f, 0.01f, 0.01f, 0.01f, 0.01f};
  const auto e = choose_slots(
      *pol0, b, [&](int s) -> const std::vector<float>& { return s == 0 ? g0b : g1; }, 7, 0);
  EXPECT_EQ(kept_positions(b, e, 0), (std::vector<int>{0}));
  EXPECT_EQ(kept_positions(b, e, 1), (std::vector<int>{1, 2, 3, 4, 5, 6, 7}));
  // Uniform budgets keep 4 each.
  p.head_budgets = HeadBudgets::Uniform;
  const auto uni = make_policy(resolve_policy(p, 8, 1000));
  const auto f = choose_slots(
      *uni, b, [&](int s) -> const std::vector<float>& { return s == 0 ? g0 : g1; }, 7, 0);
  EXPECT_EQ(kept_positions(b, f, 0).size(), 4u);
  EXPECT_EQ(kept_positions(b, f, 1), (std::vector<int>{4, 5, 6, 7}));
  // The split is a kv_head decision: a layer-wide one is refused by name.
  p.head_budgets = HeadBudgets::Adaptive;
  p.granularity = Granularity::Layer;
  try {
    resolve_policy(p, 8, 1000);
    ADD_FAILURE() << "accepted";
  } catch (const Error& err) {
    EXPECT_NE(std::string(err.what()).find("policy.head_budgets: adaptive splits"), std::string::npos) << err.what();
  }
}

}  // namespace
}  // namespace kvscope
