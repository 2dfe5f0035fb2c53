// Keyformer's Algorithm 1 (keyformer-paper.md; docs/policies.md) worked by hand:
//   tau_t = tau_init + t (tau_end - tau_init) / T   (t = 0 at the prefill)
//   G_t   = softmax((X_t + g) / tau_t)               (per reader, then the mean over a KV head's readers)
//   F_t   = F_{t-1} + G_t                            (one-shot prefill: column sums of G over the prompt rows)
//   keep  = the recent w + the top (k - w) of the rest by F
// The expected values are computed here in double from those equations;
// the only production pieces used are the model's logits (an independent
// full-cache forward for the prompt; the session's recorded attention rows
// for decode steps, whose log is the logit row up to a constant, which a
// softmax ignores) and, for seeded noise, keyformer_noise() for the value
// of g (checked on its own in tests/policy/test_statistics.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "backend/slot_stats.h"
#include "common/nan.h"
#include "session_fixture.h"

namespace kvscope {
namespace {

// softmax((x + g) / tau) in double; -inf entries (absent or masked) get 0.
std::vector<double> gumbel_softmax(const std::vector<double>& x, const std::vector<double>& g, double tau) {
  std::vector<double> z(x.size());
  double mx = -INFINITY;
  for (std::size_t j = 0; j < x.size(); ++j) {
    z[j] = std::isinf(x[j]) ? -INFINITY : (x[j] + g[j]) / tau;
    mx = std::max(mx, z[j]);
  }
  double sum = 0;
  for (auto& v : z) sum += (v = std::isinf(v) ? 0.0 : std::exp(v - mx));
  for (auto& v : z) v /= sum;
  return z;
}

// ---------------------------------------------------------------------------
// A worked case in plain numbers (noise none): one KV head, k = 3, so w =
// 30% of 3 = 0.9 -> 1, T = 2 planned new tokens, tau = 1, 1.5, 2. Logits
// are logs of chosen weights, so that G_t = weights^(1/tau_t) normalised:
// at tau 1.5 the weights are cubes squared, at tau 2 squares.
TEST(KeyformerByHand, PlainNumbersNoNoise) {
  PolicyParams p;
  p.kind = PolicyKind::Keyformer;
  p.budget = Amount::parse("3", "budget");
  p.noise = NoiseKind::None;
  const auto pol = make_policy(resolve_policy(p, 4, 100));
  ASSERT_EQ(pol->resolved().k, 3);
  ASSERT_EQ(pol->resolved().w, 1);
  const int T = 2;
  EXPECT_FLOAT_EQ(pol->stat_rule({0, T}).tau, 1.0f);
  EXPECT_FLOAT_EQ(pol->stat_rule({1, T}).tau, 1.5f);
  EXPECT_FLOAT_EQ(pol->stat_rule({2, T}).tau, 2.0f);
  EXPECT_EQ(pol->stat_rule({1, T}).noise, NoiseKind::None);
  EXPECT_EQ(pol->stat_rule({1, T}).decay, 1.0f);

  auto G = [](std::vector<double> w, double tau) {
    std::vector<double> x, zero(w.size(), 0.0);
    for (double v : w) x.push_back(v > 0 ? std::log(v) : -INFINITY);
    return gumbel_softmax(x, zero, tau);
  };
  // Prefill (t = 0, tau = 1), causal rows over positions 0..3.
  std::vector<double> F(6, 0.0);
  const std::vector<std::vector<double>> prompt = {{1, 0, 0, 0}, {4, 1, 0, 0}, {1, 1, 2, 0}, {4, 1, 1, 4}};
  for (const auto& row : prompt) {
    const auto g = G(row, 1.0);
    for (int j = 0; j < 4; ++j) F[j] += g[j];
  }
  // Column sums: 1 + 0.8 + 0.25 + 0.4, 0.2 + 0.25 + 0.1, 0.5 + 0.1, 0.4.
  EXPECT_NEAR(F[0], 2.45, 1e-12);
  EXPECT_NEAR(F[1], 0.55, 1e-12);
  EXPECT_NEAR(F[2], 0.60, 1e-12);
  EXPECT_NEAR(F[3], 0.40, 1e-12);

  // The selection on a cache holding `held`, ranked by F: recent w = 1 is
  // position `newest`, then the top 2 by F.
  auto keep = [&](const std::vector<int>& held, int newest) {
    KvLayout lay;
    lay.n_layers = lay.n_heads = lay.n_kv_layers = lay.n_kv_heads = 1;
    lay.head_dim = 4;
    lay.owners = {0};
    lay.source_of_layer = {0};
    KvBook b(lay, 16);
    std::vector<float> S;
    for (int pos : held) {
      b.append(pos, std::vector<int>{pos});
      S.push_back(static_cast<float>(F[pos]));
    }
    const auto c = choose_slots(*pol, b, [&](int) -> const std::vector<float>& { return S; }, newest, 0);
    std::vector<int> kept;
    for (int j : c.keep[0]) kept.push_back(held[j]);
    return kept;
  };
  // After the prefill: 3 protected, then 0 (2.45) and 2 (0.60) over 1 (0.55).
  std::vector<int> held = keep({0, 1, 2, 3}, 3);
  EXPECT_EQ(held, (std::vector<int>{0, 2, 3}));
  F[1] = kNaN;

  // Step 1 (tau = 1.5): position 4 arrives, logits log(27, 1, 64, 8) over
  // 0, 2, 3, 4 -> weights^(2/3) = 9, 1, 16, 4 over 30.
  {
    const auto g = G({27, 1, 64, 8}, 1.5);
    EXPECT_NEAR(g[0], 9.0 / 30, 1e-12);
    EXPECT_NEAR(g[2], 16.0 / 30, 1e-12);
    F[0] += g[0], F[2] += g[1], F[3] += g[2], F[4] = g[3];
  }
  EXPECT_NEAR(F[2], 0.60 + 1.0 / 30, 1e-12);   // 0.6333
  EXPECT_NEAR(F[3], 0.40 + 16.0 / 30, 1e-12);  // 0.9333: overtakes position 2
  // With a constant tau = 1 the same logits give 27, 1, 64, 8 over 100 and
  // F[3] = 0.4 + 0.64 = 1.04; the decision is the same here, the numbers not.
  held = keep({0, 2, 3, 4}, 4);
  EXPECT_EQ(held, (std::vector<int>{0, 3, 4}));  // 2 goes: 0.633 < 0.933
  F[2] = kNaN;

  // Step 2 (tau = 2): position 5 arrives, logits log(1, 4, 9, 36) over
  // 0, 3, 4, 5 -> weights^(1/2) = 1, 2, 3, 6 over 12.
  {
    const auto g = G({1, 4, 9, 36}, 2.0);
    EXPECT_NEAR(g[3], 0.5, 1e-12);
    F[0] += g[0], F[3] += g[1], F[4] += g[2], F[5] = g[3];
  }
  // F: 0 -> 2.45 + 0.3 + 1/12 = 2.8333, 3 -> 0.9333 + 1/6 = 1.1, 4 -> 4/30 + 1/4 = 0.3833.
  EXPECT_NEAR(F[3], 1.1, 1e-12);
  EXPECT_NEAR(F[4], 4.0 / 30 + 0.25, 1e-12);
  held = keep({0, 3, 4, 5}, 5);
  EXPECT_EQ(held, (std::vector<int>{0, 3, 5}));  // 4 goes though it is the second newest
}

// ---------------------------------------------------------------------------
// The same equations against a real session on a tiny random model.
struct Expected {
  double tol_hits = 0;       // worst |recorded - expected| of the statistic
  double tau_gap = 0;        // largest difference a constant tau would have made to an increment
  double shifted_gap = 0;    // ... t counted from 1 instead of 0
  double noise_gap = 0;      // ... no noise instead of the configured noise
  int evicting_rows = 0;     // rows where the cache was over budget
  int decisions = 0;
};

Expected replay_keyformer_by_hand(const std::string& model, NoiseKind noise, uint64_t seed) {
  SessionConfig cfg = test::config(PolicyKind::Keyformer, "40%", 12);
  cfg.policy.noise = noise;
  cfg.policy.seed = seed;
  cfg.seed = seed;
  cfg.recording.metrics = false;
  Session s(test::bundle(model), cfg);
  s.run_to_end();
  const Recorder& rec = s.recorder();
  const KvLayout& lay = rec.layout();
  const ModelConfig& mc = s.model_config();
  const int L = mc.n_layers, H = mc.n_heads, S = lay.n_segments(), P = rec.positions();
  const int n = s.prompt_length(), T = s.planned_new_tokens();
  const auto& r = s.policy().resolved();
  EXPECT_EQ(T, 12);
  EXPECT_EQ(r.w, static_cast<int>(std::lround(0.3 * r.k)));  // default w = 30% of k
  EXPECT_EQ(r.s, 0);
  EXPECT_EQ(rec.rows_recorded(), T + 1);
  for (int l = 0; l < L; ++l) EXPECT_TRUE(rec.records_layer(l));
  // Defaults tau_init = 1, tau_end = 2 (docs/policies.md), written out here.
  auto tau_at = [&](int t) { return 1.0 + t * (2.0 - 1.0) / T; };

  std::vector<std::vector<std::pair<int, int>>> readers(S);
  for (int l = 0; l < L; ++l)
    for (int h = 0; h < H; ++h) readers[lay.segment_of(l, h)].push_back({l, h});
  auto noise_of = [&](NoiseKind kind, int qpos, int l, int h, int kpos) -> double {
    return keyformer_noise(kind, seed, static_cast<uint32_t>(qpos), static_cast<uint32_t>(l), static_cast<uint32_t>(h),
                           static_cast<uint32_t>(kpos));
  };

  Expected e;
  std::vector<std::vector<double>> F(S, std::vector<double>(P, kNaN));  // [segment][position]

  // t = 0: the prompt's logits from an independent full-cache forward (no
  // statistic, no eviction), every query row.
  {
    BackendOptions bo;
    bo.max_tokens = n + 1;
    auto be = make_backend(Device::Cpu, mc, s.bundle().files.weights, bo);
    ForwardOptions fo;
    for (int l = 0; l < L; ++l) fo.capture_layers.push_back(l);
    fo.capture_logits = true;
    ForwardOutput out;
    be->forward(std::span<const int>(s.tokens().data(), n), fo, out);
    const double tau = tau_at(0);
    for (int seg = 0; seg < S; ++seg) {
      for (int j = 0; j < n; ++j) F[seg][j] = 0;
      for (auto [l, h] : readers[seg]) {
        const AttentionRows& a = out.attention[l];
        EXPECT_EQ(a.layer, l);
        for (int i = 0; i < n; ++i) {
          std::vector<double> x(n, -INFINITY), g(n, 0.0);
          for (int j = 0; j <= i; ++j) {
            x[j] = a.logit_row(h, i)[j];
            g[j] = noise_of(noise, i, l, h, j);
          }
          const auto G = gumbel_softmax(x, g, tau);
          for (int j = 0; j <= i; ++j) F[seg][j] += G[j] / readers[seg].size();
        }
      }
    }
  }

  // The row's decision from F: recent w protected, top (k - w) of the rest.
  auto check_row = [&](int row, int newest) {
    for (int seg = 0; seg < S; ++seg) {
      std::vector<int> held, candidates;
      for (int p = 0; p <= newest; ++p) {
        const uint8_t m = rec.mask(row, seg, p);
        const bool is_held = m == kMaskKept || m == kMaskProtected || m == kEvictedNow;
        EXPECT_EQ(is_held, !std::isnan(F[seg][p])) << "row " << row << " seg " << seg << " pos " << p;
        if (!is_held) continue;
        held.push_back(p);
        const double got = rec.score(row, seg, p);
        e.tol_hits = std::max(e.tol_hits, std::abs(got - F[seg][p]) / std::max(1.0, std::abs(F[seg][p])));
        if (p <= newest - r.w) candidates.push_back(p);
      }
      const int room = r.k - (static_cast<int>(held.size()) - static_cast<int>(candidates.size()));
      std::sort(candidates.begin(), candidates.end(), [&](int a, int b) { return F[seg][a] > F[seg][b]; });
      const bool over = static_cast<int>(held.size()) > r.k;
      e.evicting_rows += over && seg == 0;
      for (std::size_t i = 0; i < candidates.size(); ++i) {
        const int p = candidates[i];
        const bool keep = !over || static_cast<int>(i) < room;
        // A near tie at the boundary could go either way in float.
        const bool near_tie = over && (static_cast<int>(i) == room - 1 || static_cast<int>(i) == room) && room > 0 &&
                              room < static_cast<int>(candidates.size()) &&
                              std::abs(F[seg][candidates[room - 1]] - F[seg][candidates[room]]) < 1e-5;
        if (!near_tie) {
          ++e.decisions;
          EXPECT_EQ(rec.mask(row, seg, p), keep ? kMaskKept : kEvictedNow)
              << "row " << row << " seg " << seg << " pos " << p << " F " << F[seg][p];
        }
        if (rec.mask(row, seg, p) == kEvictedNow) F[seg][p] = kNaN;  // evicted: its statistic is dropped
      }
      for (int p : held)
        if (p > newest - r.w) EXPECT_EQ(rec.mask(row, seg, p), kMaskProtected);
    }
  };
  check_row(0, n - 1);

  // t >= 1: the new token's query row over the slots held, from the
  // recorded attention (log p = X - const).
  for (int t = 1; t <= T; ++t) {
    const int qpos = n - 1 + t;
    const double tau = tau_at(t);
    for (int seg = 0; seg < S; ++seg) {
      std::vector<int> held;
      for (int p = 0; p <= qpos; ++p)
        if (p == qpos || !std::isnan(F[seg][p])) held.push_back(p);
      const std::size_t m = held.size();
      std::vector<double> inc(m, 0.0);
      for (auto [l, h] : readers[seg]) {
        std::vector<double> x(m), g(m), g0(m, 0.0);
        for (std::size_t j = 0; j < m; ++j) {
          const double pr = rec.attention(t, l, h, held[j]);
          x[j] = pr > 0 ? std::log(pr) : -INFINITY;
          g[j] = noise_of(noise, qpos, l, h, held[j]);
        }
        const auto G = gumbel_softmax(x, g, tau);
        const auto G_const = gumbel_softmax(x, g, tau_at(0));
        const auto G_shift = gumbel_softmax(x, g, tau_at(t + 1));
        const auto G_plain = gumbel_softmax(x, g0, tau);
        for (std::size_t j = 0; j < m; ++j) {
          inc[j] += G[j] / readers[seg].size();
          e.tau_gap = std::max(e.tau_gap, std::abs(G_const[j] - G[j]) / readers[seg].size());
          e.shifted_gap = std::max(e.shifted_gap, std::abs(G_shift[j] - G[j]) / readers[seg].size());
          e.noise_gap = std::max(e.noise_gap, std::abs(G_plain[j] - G[j]) / readers[seg].size());
        }
      }
      for (std::size_t j = 0; j < m; ++j) {
        const int p = held[j];
        F[seg][p] = (p == qpos ? 0.0 : F[seg][p]) + inc[j];  // a new slot starts at its own G
      }
    }
    check_row(t, qpos);
  }
  return e;
}

TEST(KeyformerByHand, SessionWithoutNoiseFollowsAlgorithm1) {
  for (const char* model : {"llama_gqa", "llama_mlkv"}) {
    SCOPED_TRACE(model);
    const Expected e = replay_keyformer_by_hand(model, NoiseKind::None, 11);
    EXPECT_LT(e.tol_hits, 2e-6);
    EXPECT_GT(e.evicting_rows, 5);
    EXPECT_GT(e.decisions, 100);
    // The check can tell the schedule apart: a constant tau, or t counted
    // from 1, changes the step's increments by far more than the tolerance.
    EXPECT_GT(e.tau_gap, 1e-3);
    EXPECT_GT(e.shifted_gap, 1e-4);
  }
}

TEST(KeyformerByHand, SessionWithSeededGumbelNoiseFollowsAlgorithm1) {
  for (uint64_t seed : {11u, 12345u}) {
    SCOPED_TRACE(seed);
    const Expected e = replay_keyformer_by_hand("llama_gqa", NoiseKind::Gumbel, seed);
    EXPECT_LT(e.tol_hits, 2e-6);
    EXPECT_GT(e.evicting_rows, 5);
    EXPECT_GT(e.tau_gap, 1e-3);
    EXPECT_GT(e.noise_gap, 1e-2);  // the noise matters: the same rows without it differ
  }
}

// The schedule through a session's own statistic alone: with T = 4 planned
// tokens and no noise, step t's increment F_t - F_{t-1} at the newest slot
// is G_t of that slot, which depends on tau_t = 1 + t/4 (and is not what
// tau = 1 would give).
TEST(KeyformerByHand, TemperatureRisesLinearlyOverThePlannedTokens) {
  SessionConfig cfg = test::config(PolicyKind::Keyformer, "100%", 4);
  // A budget of the whole run: nothing is evicted.
  const int prompt = static_cast<int>(test::bundle("llama_gqa")->tokenizer->encode(cfg.prompt, true).size());
  cfg.policy.budget = Amount::parse(std::to_string(prompt + 4), "budget");
  cfg.policy.noise = NoiseKind::None;
  cfg.policy.tau_init = 0.5f;
  cfg.policy.tau_end = 3.0f;
  cfg.recording.metrics = false;
  Session s(test::bundle("llama_gqa"), cfg);
  s.run_to_end();
  const Recorder& rec = s.recorder();
  const KvLayout& lay = rec.layout();
  const int n = s.prompt_length();
  for (int t = 1; t <= 4; ++t) {
    const int q = n - 1 + t;
    const double tau = 0.5 + t * (3.0 - 0.5) / 4;
    for (int seg = 0; seg < lay.n_segments(); ++seg) {
      double want = 0, want_const = 0;
      int readers = 0;
      for (int l = 0; l < lay.n_layers; ++l)
        for (int h = 0; h < lay.n_heads; ++h) {
          if (lay.segment_of(l, h) != seg) continue;
          std::vector<double> x(q + 1), zero(q + 1, 0.0);
          for (int p = 0; p <= q; ++p) x[p] = std::log(double(rec.attention(t, l, h, p)));
          want += gumbel_softmax(x, zero, tau)[q];
          want_const += gumbel_softmax(x, zero, 0.5)[q];
          ++readers;
        }
      want /= readers;
      want_const /= readers;
      // Nothing is evicted (100%): the newest slot's statistic is its first G.
      EXPECT_NEAR(rec.score(t, seg, q), want, 2e-6) << "t " << t << " seg " << seg;
      EXPECT_GT(std::abs(want - want_const), 1e-3) << "t " << t << " seg " << seg;
      // An older slot's statistic grows by exactly this step's G.
      double older = 0;
      for (int l = 0; l < lay.n_layers; ++l)
        for (int h = 0; h < lay.n_heads; ++h) {
          if (lay.segment_of(l, h) != seg) continue;
          std::vector<double> x(q + 1), zero(q + 1, 0.0);
          for (int p = 0; p <= q; ++p) x[p] = std::log(double(rec.attention(t, l, h, p)));
          older += gumbel_softmax(x, zero, tau)[0];
        }
      EXPECT_NEAR(rec.score(t, seg, 0) - rec.score(t - 1, seg, 0), older / readers, 2e-5);
    }
  }
}

}  // namespace
}  // namespace kvscope
