// The metrics of engine/session/metrics.h and generator.h (docs/policies.md,
// "Metrics") with hand-computed numbers: KL(p_full || p_policy) (its
// direction), top-1 agreement, attention recall, ideal similarity, NLL and
// perplexity; then a session's metric rows against the same quantities
// computed here from a policy cache replayed by hand (the session's own
// eviction masks applied to a second backend) and a full-cache backend.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>

#include "session/generator.h"
#include "session/metric_sums.h"
#include "session/metrics.h"
#include "session_fixture.h"

namespace kvscope {
namespace {

std::vector<float> logits_of(const std::vector<double>& probs, double shift) {
  std::vector<float> out;
  for (double p : probs) out.push_back(static_cast<float>(std::log(p) + shift));
  return out;
}

// head_agreement from rows over positions, as docs/policies.md states the
// metrics: the policy run holds the positions where `present` is set, its
// row is `policy` there (0 elsewhere).
HeadAgreement agreement_by_position(const std::vector<float>& policy, const std::vector<uint8_t>& present,
                                    const std::vector<float>& full, int k) {
  std::vector<int> held;
  std::vector<float> row;
  for (std::size_t i = 0; i < full.size(); ++i)
    if (present[i]) {
      held.push_back(static_cast<int>(i));
      row.push_back(policy[i]);
    }
  AgreementScratch scratch;
  return head_agreement(row, held, full, k, scratch);
}
double attention_recall(const std::vector<float>& full, const std::vector<uint8_t>& present) {
  return agreement_by_position(std::vector<float>(full.size(), 0.0f), present, full, 1).recall;
}
// The policy row's zeros are positions it no longer holds.
double ideal_similarity(const std::vector<float>& policy, const std::vector<float>& full, int k) {
  std::vector<uint8_t> present(policy.size());
  for (std::size_t i = 0; i < policy.size(); ++i) present[i] = policy[i] != 0.0f;
  return agreement_by_position(policy, present, full, k).similarity;
}

// The same two metrics written plainly: the top k of the full row by value,
// of equal values the newest positions first (the selection's rule).
HeadAgreement plain_agreement(const std::vector<float>& policy, const std::vector<uint8_t>& present,
                              const std::vector<float>& full, int k) {
  const int P = static_cast<int>(full.size());
  std::vector<int> order(P);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int a, int b) { return full[a] != full[b] ? full[a] > full[b] : a > b; });
  std::vector<double> top(P, 0.0);
  for (int i = 0; i < std::min(k, P); ++i) top[order[i]] = full[order[i]];
  double kept = 0, total = 0, dot = 0, np = 0, nt = 0;
  for (int i = 0; i < P; ++i) {
    const double a = present[i] ? policy[i] : 0.0;
    total += full[i];
    if (present[i]) kept += full[i];
    dot += a * top[i];
    np += a * a;
    nt += top[i] * top[i];
  }
  return {total > 0 ? kept / total : 0.0, np > 0 && nt > 0 ? dot / std::sqrt(np * nt) : 0.0};
}

TEST(MetricsByHand, KlIsFullAgainstPolicyInNats) {
  // p_full = (0.9, 0.1), p_policy = (0.5, 0.5):
  //   KL(p || q) = 0.9 ln(0.9/0.5) + 0.1 ln(0.1/0.5) = 0.368064
  //   KL(q || p) = 0.5 ln(0.5/0.9) + 0.5 ln(0.5/0.1) = 0.510826
  const auto p = logits_of({0.9, 0.1}, 3.0), q = logits_of({0.5, 0.5}, -1.0);
  EXPECT_NEAR(kl_divergence(p.data(), q.data(), 2), 0.368064, 1e-6);
  EXPECT_NEAR(kl_divergence(q.data(), p.data(), 2), 0.510826, 1e-6);
  // (0.7, 0.2, 0.1) against (0.2, 0.3, 0.5):
  //   0.7 ln 3.5 + 0.2 ln(2/3) + 0.1 ln 0.2 = 0.634897; the other way 0.675806.
  const auto a = logits_of({0.7, 0.2, 0.1}, 1000.0), b = logits_of({0.2, 0.3, 0.5}, -50.0);
  EXPECT_NEAR(kl_divergence(a.data(), b.data(), 3), 0.634897, 1e-4);  // float logits near 1000: ~6e-5 each
  const auto a0 = logits_of({0.7, 0.2, 0.1}, 0.0), b0 = logits_of({0.2, 0.3, 0.5}, 0.0);
  EXPECT_NEAR(kl_divergence(a0.data(), b0.data(), 3), 0.634897, 1e-6);
  EXPECT_NEAR(kl_divergence(b0.data(), a0.data(), 3), 0.675806, 1e-6);
  // Same distribution, different shift: 0.
  const auto c = logits_of({0.7, 0.2, 0.1}, 7.0);
  EXPECT_NEAR(kl_divergence(a0.data(), c.data(), 3), 0.0, 1e-7);
}

TEST(MetricsByHand, ArgmaxIsTheFirstLargestForTopOneAgreement) {
  const std::vector<float> v = {0.1f, 3.0f, 3.0f, -1.0f};
  EXPECT_EQ(argmax(v.data(), 4), 1);
  const std::vector<float> w = {-5.0f, -4.0f, -7.0f};
  EXPECT_EQ(argmax(w.data(), 3), 1);
  const std::vector<float> last = {0.0f, 1.0f, 2.0f};
  EXPECT_EQ(argmax(last.data(), 3), 2);
}

TEST(MetricsByHand, AttentionRecallIsTheKeptShareOfTheFullMass) {
  // Full row 0.5, 0.2, 0.2, 0.1; the policy kept positions 0 and 2: 0.7.
  EXPECT_NEAR(attention_recall({0.5f, 0.2f, 0.2f, 0.1f}, {1, 0, 1, 0}), 0.7, 1e-7);
  EXPECT_NEAR(attention_recall({0.5f, 0.2f, 0.2f, 0.1f}, {0, 1, 0, 1}), 0.3, 1e-7);
  EXPECT_NEAR(attention_recall({0.5f, 0.2f, 0.2f, 0.1f}, {1, 1, 1, 1}), 1.0, 1e-7);
  // A share, not a sum: an unnormalised row 1, 1, 2 with the last kept -> 0.5.
  EXPECT_NEAR(attention_recall({1.0f, 1.0f, 2.0f}, {0, 0, 1}), 0.5, 1e-7);
}

TEST(MetricsByHand, IdealSimilarityIsCosineAgainstTheTopKOfTheFullRow) {
  // Policy row (zeros where evicted) 0.6, 0, 0.4, 0; full row 0.5, 0.3,
  // 0.15, 0.05 kept to its top 2 -> 0.5, 0.3, 0, 0:
  //   cos = 0.3 / (sqrt(0.52) sqrt(0.34)) = 0.713477
  // (against the whole full row it would be 0.826332).
  EXPECT_NEAR(ideal_similarity({0.6f, 0.0f, 0.4f, 0.0f}, {0.5f, 0.3f, 0.15f, 0.05f}, 2), 0.713477, 1e-6);
  // Top 3 of 0.1, 0.5, 0.05, 0.3, 0.05 -> 0.1, 0.5, 0, 0.3, 0; policy 0, 0.4, 0, 0.25, 0:
  //   cos = 0.275 / (sqrt(0.35) sqrt(0.2225)) = 0.985447 (position 0 is in the top 3 but evicted).
  EXPECT_NEAR(ideal_similarity({0.0f, 0.4f, 0.0f, 0.25f, 0.0f}, {0.1f, 0.5f, 0.05f, 0.3f, 0.05f}, 3),
              0.275 / (std::sqrt(0.35) * std::sqrt(0.2225)), 1e-6);
  // The policy that kept exactly the top k, in the same proportions: 1.
  EXPECT_NEAR(ideal_similarity({0.625f, 0.375f, 0.0f, 0.0f}, {0.5f, 0.3f, 0.15f, 0.05f}, 2), 1.0, 1e-6);
  // Nothing in common: 0.
  EXPECT_NEAR(ideal_similarity({0.0f, 0.0f, 0.5f, 0.5f}, {0.5f, 0.3f, 0.15f, 0.05f}, 2), 0.0, 1e-12);
}

TEST(MetricsByHand, KthLargestIsWhatNthElementFinds) {
  // Rows as attention gives them (many near-equal small probabilities, exact
  // ties, zeros where a slot is absent) and signed values with -0.
  std::mt19937 rng(7);
  for (int trial = 0; trial < 300; ++trial) {
    const int n = 1 + static_cast<int>(rng() % 700);
    std::vector<float> v(n);
    for (auto& x : v) {
      switch (rng() % 5) {
        case 0: x = 0.0f; break;
        case 1: x = 1.0f / 512; break;
        case 2: x = std::ldexp(static_cast<float>(rng() % 1000), -20); break;
        case 3: x = trial % 2 ? -0.0f : std::ldexp(static_cast<float>(rng() % 1000), -10) - 0.5f; break;
        default: x = std::uniform_real_distribution<float>(-3, 3)(rng);
      }
    }
    for (int k : {1, n, 1 + static_cast<int>(rng() % n)}) {
      std::vector<float> sorted(v);
      std::nth_element(sorted.begin(), sorted.begin() + (k - 1), sorted.end(), std::greater<float>());
      EXPECT_EQ(kth_largest(v, k), sorted[k - 1]) << "n " << n << " k " << k;
    }
  }
  EXPECT_EQ(kth_largest({-1.0f, -2.0f, -0.5f}, 2), -1.0f);
  EXPECT_EQ(kth_largest({0.0f, -0.0f}, 2), 0.0f);
  EXPECT_EQ(kth_largest({std::numeric_limits<float>::infinity(), 1.0f}, 1), std::numeric_limits<float>::infinity());
}

// A session computes recall and ideal similarity per head from the rows as
// the caches hold them (head_agreement), with its own select and lane
// sums; they are the plain definitions, to double rounding, on rows with
// the shapes attention gives: ties (also at the k-th value, where the
// newest positions are the ones taken), zeros, positions the policy no
// longer holds, k past the row.
TEST(MetricsByHand, HeadAgreementIsRecallAndIdealSimilarity) {
  std::mt19937 rng(11);
  AgreementScratch scratch;
  for (int trial = 0; trial < 400; ++trial) {
    const int P = 1 + static_cast<int>(rng() % 300);
    std::vector<float> full(P);
    const bool coarse = trial % 2 == 0;  // few distinct values: many ties
    for (auto& x : full)
      x = coarse ? static_cast<float>(rng() % 4) / 8.0f
                 : (rng() % 7 == 0 ? 0.0f : std::uniform_real_distribution<float>(0.0f, 1.0f)(rng));
    std::vector<int> held;
    std::vector<float> policy, policy_by_position(P, 0.0f);
    std::vector<uint8_t> present(P, 0);
    for (int i = 0; i < P; ++i)
      if (rng() % 3 != 0) {
        held.push_back(i);
        policy.push_back(std::uniform_real_distribution<float>(0.0f, 1.0f)(rng));
        policy_by_position[i] = policy.back();
        present[i] = 1;
      }
    for (int k : {1, 1 + static_cast<int>(rng() % P), P, P + 5}) {
      const HeadAgreement a = head_agreement(policy, held, full, k, scratch);
      const HeadAgreement want = plain_agreement(policy_by_position, present, full, k);
      EXPECT_NEAR(a.recall, want.recall, 1e-12 * std::max(1.0, want.recall)) << "trial " << trial << " k " << k;
      EXPECT_NEAR(a.similarity, want.similarity, 1e-12) << "trial " << trial << " k " << k;
    }
  }
  // The tie rule by hand: full row (0.25, 0.25, 0.5, 0.25), top 2 = the 0.5
  // and the newest 0.25 (position 3). The policy holds positions 0 and 2
  // with 0.5 each: cos((0.5, 0, 0.5, 0), (0, 0, 0.5, 0.25)) = 0.25 / (sqrt(0.5) sqrt(0.3125)).
  const std::vector<float> full = {0.25f, 0.25f, 0.5f, 0.25f};
  const HeadAgreement a = head_agreement(std::vector<float>{0.5f, 0.5f}, std::vector<int>{0, 2}, full, 2, scratch);
  EXPECT_NEAR(a.similarity, 0.25 / (std::sqrt(0.5) * std::sqrt(0.3125)), 1e-15);
  EXPECT_NEAR(a.recall, 0.75 / 1.25, 1e-15);
}

// The norms computed once per step give the KL and NLL the same bits as
// the functions that compute them from the logits alone.
TEST(MetricsByHand, LogitsNormGivesTheSameBits) {
  std::mt19937 rng(5);
  for (int trial = 0; trial < 50; ++trial) {
    const int V = 1 + static_cast<int>(rng() % 3000);
    std::vector<float> p(V), q(V);
    for (int i = 0; i < V; ++i) {
      p[i] = std::normal_distribution<float>(0.0f, 4.0f)(rng);
      q[i] = trial % 5 == 0 ? p[i] : std::normal_distribution<float>(1.0f, 3.0f)(rng);
    }
    const LogitsNorm np = logits_norm(p.data(), V), nq = logits_norm(q.data(), V);
    EXPECT_EQ(np.argmax, argmax(p.data(), V));
    EXPECT_EQ(np.max, *std::max_element(p.begin(), p.end()));
    const double kl = kl_divergence(p.data(), np, q.data(), nq, V);
    const double kl_alone = kl_divergence(p.data(), q.data(), V);
    EXPECT_EQ(std::memcmp(&kl, &kl_alone, sizeof kl), 0) << kl << " vs " << kl_alone;
    // token_nll as it was written before the norms: max, sum of exp in
    // double, log.
    const int t = static_cast<int>(rng() % V);
    double sum = 0;
    for (int i = 0; i < V; ++i) sum += std::exp(static_cast<double>(q[i]) - nq.max);
    const double by_hand = std::log(sum) - (static_cast<double>(q[t]) - nq.max);
    const double nll = token_nll(q.data(), nq, t);
    EXPECT_EQ(std::memcmp(&nll, &by_hand, sizeof nll), 0) << nll << " vs " << by_hand;
    EXPECT_EQ(token_nll(q.data(), V, t), nll);
  }
}

TEST(MetricsByHand, NllAndPerplexity) {
  // -ln softmax(logits)[target], shift-invariant.
  const auto l = logits_of({0.1, 0.2, 0.7}, 5.0);
  EXPECT_NEAR(token_nll(l.data(), 3, 2), 0.356675, 1e-6);  // -ln 0.7
  EXPECT_NEAR(token_nll(l.data(), 3, 0), 2.302585, 1e-6);  // -ln 0.1
  // Teacher forcing on a real model: token i is scored from row i-1's
  // logits; perplexity = exp(mean NLL).
  auto m = load_model_files(test::model_dir("llama_gqa"));
  BackendOptions bo;
  bo.max_tokens = 32;
  auto be = make_backend(Device::Cpu, m.config, m.weights, bo);
  auto ref = be->spawn(bo);
  const std::vector<int> toks = {3, 17, 250, 41, 99, 8, 120, 5, 64};
  const ScoreResult sr = score_tokens(*be, toks, 2);
  ForwardOptions fo;
  fo.all_logits = true;
  ForwardOutput out;
  ref->forward(toks, fo, out);
  const int V = m.config.vocab_size;
  ASSERT_EQ(sr.scored, static_cast<int>(toks.size()) - 2);
  double sum = 0;
  for (std::size_t i = 2; i < toks.size(); ++i) {
    const float* row = out.logits.data() + (i - 1) * V;
    double mx = row[0], z = 0;
    for (int v = 1; v < V; ++v) mx = std::max(mx, double(row[v]));
    for (int v = 0; v < V; ++v) z += std::exp(double(row[v]) - mx);
    const double nll = std::log(z) - (double(row[toks[i]]) - mx);
    EXPECT_NEAR(sr.nll[i - 2], nll, 1e-9) << "token " << i;
    sum += nll;
  }
  EXPECT_NEAR(sr.mean_nll, sum / sr.scored, 1e-9);
  EXPECT_NEAR(sr.perplexity, std::exp(sum / sr.scored), 1e-9 * sr.perplexity);
}

// The session's metric rows: its policy cache is replayed here on a second
// backend (the same tokens, the session's recorded masks as the eviction),
// a third runs the full cache, and every metric is computed here.
// The means `run` prints and `sweep` writes: over the decode steps (step 0,
// the prefill row, left out), those compared with the full cache
// (top1_agree >= 0), and the NLL over the steps where it is known, each on
// its own.
TEST(MetricSums, MeansAreOverTheDecodeStepsThatHaveEachMetric) {
  std::vector<StepMetrics> steps(5);
  for (int i = 0; i < 5; ++i) steps[i].step = i;
  // The prefill row, as a one-shot prefill measures it: the full cache's own numbers.
  steps[0].nll = 2.0, steps[0].kl = 0, steps[0].top1_agree = 1, steps[0].attention_recall = 1;
  steps[0].ideal_similarity = 1, steps[0].kl_native = 0, steps[0].top1_agree_native = 1;
  steps[1].kl = 0.5, steps[1].top1_agree = 1, steps[1].attention_recall = 0.75, steps[1].ideal_similarity = 0.5;
  steps[1].kl_native = 0.5, steps[1].top1_agree_native = 0;
  steps[2].kl = 0.25, steps[2].top1_agree = 0, steps[2].attention_recall = 0.25, steps[2].ideal_similarity = 1.0;
  steps[2].nll = 4.0, steps[2].kl_native = 1.0, steps[2].top1_agree_native = 1;
  steps[3].nll = 1.0;  // no comparison with the full cache
  steps[4].nll = std::nan("");
  EXPECT_FALSE(counts_in_means(steps[0]));
  EXPECT_TRUE(counts_in_means(steps[1]));
  const MetricSums t = sum_metrics(steps);
  EXPECT_EQ(t.n, 2);
  EXPECT_EQ(t.n_nll, 2);
  EXPECT_EQ(t.top1_agree, 1.0);
  EXPECT_EQ(t.top1_agree_native, 1.0);
  EXPECT_EQ(t.kl_native, 1.5);
  const std::map<std::string, double> means = metric_means(t);
  EXPECT_EQ(means, (std::map<std::string, double>{{"nll", 2.5},
                                                  {"kl", 0.375},
                                                  {"top1_agreement", 0.5},
                                                  {"attention_recall", 0.5},
                                                  {"ideal_similarity", 0.75}}));
  EXPECT_TRUE(metric_means(sum_metrics({})).empty());
  EXPECT_TRUE(metric_means(sum_metrics({steps.data(), 1})).empty()) << "a run of the prefill alone has no mean";
}

// A real run: step 0 of a one-shot prefill is the full cache's (KL 0,
// top-1 1, recall 1), and the run's means are those of rows 1.. computed
// here from the recorded per-step data, which keeps row 0.
TEST(MetricSums, ARunsMeansLeaveOutTheUncutPrefillRow) {
  SessionConfig cfg = test::config(PolicyKind::H2O, "6", 6);
  cfg.continuation_ids = {17, 3, 250, 41, 99, 8};
  Session s(test::bundle("llama_gqa"), cfg);
  s.run_to_end();
  const auto& ms = s.recorder().metrics();
  ASSERT_EQ(ms.size(), 7u);
  EXPECT_EQ(ms[0].kl, 0.0);
  EXPECT_EQ(ms[0].top1_agree, 1);
  EXPECT_DOUBLE_EQ(ms[0].attention_recall, 1.0);
  double kl = 0, top1 = 0, recall = 0, nll = 0;
  int n_nll = 0;
  for (std::size_t r = 1; r < ms.size(); ++r) {
    kl += ms[r].kl;
    top1 += ms[r].top1_agree;
    recall += ms[r].attention_recall;
    if (!std::isnan(ms[r].nll)) nll += ms[r].nll, ++n_nll;
  }
  ASSERT_GT(kl, 0.0) << "the budget must cut something for this test to tell the means apart";
  const auto means = metric_means(sum_metrics(ms));
  EXPECT_DOUBLE_EQ(means.at("kl"), kl / 6);
  EXPECT_DOUBLE_EQ(means.at("top1_agreement"), top1 / 6);
  EXPECT_DOUBLE_EQ(means.at("attention_recall"), recall / 6);
  EXPECT_EQ(n_nll, 5);  // rows 1..5 predict continuation tokens 1..5; row 6 has no next token
  EXPECT_DOUBLE_EQ(means.at("nll"), nll / n_nll);
  EXPECT_GT(means.at("kl"), (kl + ms[0].kl) / 7) << "row 0 (KL 0) would pull the mean toward the full cache";
}

TEST(MetricsByHand, SessionRowsMatchAReplayedCache) {
  SessionConfig cfg = test::config(PolicyKind::H2O, "8", 6);
  cfg.continuation_ids = {17, 3, 250, 41, 99, 8};
  Session s(test::bundle("llama_gqa"), cfg);
  s.run_to_end();
  const Recorder& rec = s.recorder();
  const KvLayout& lay = rec.layout();
  const ModelConfig& mc = s.model_config();
  const int n = s.prompt_length(), T = 6, L = mc.n_layers, H = mc.n_heads, V = mc.vocab_size;
  const int k = s.policy().resolved().k;
  const auto& toks = s.tokens();
  ASSERT_EQ(static_cast<int>(toks.size()), n + T);
  ASSERT_EQ(static_cast<int>(rec.metrics().size()), T + 1);

  BackendOptions bo;
  bo.max_tokens = n + T + 1;
  auto pol = make_backend(Device::Cpu, mc, s.bundle().files.weights, bo);
  auto full = pol->spawn(bo);
  ForwardOptions fo;
  for (int l = 0; l < L; ++l) fo.capture_layers.push_back(l);
  fo.capture_last_query_only = true;
  fo.capture_logits = false;
  ForwardOutput po, fu;
  double kl_seen = 0, reverse_gap = 0, min_recall = 1, min_ideal = 1;
  for (int row = 0; row <= T; ++row) {
    SCOPED_TRACE("row " + std::to_string(row));
    const int newest = n - 1 + row;
    const std::span<const int> in = row == 0 ? std::span<const int>(toks.data(), n) : std::span<const int>(&toks[newest], 1);
    pol->forward(in, fo, po);
    full->forward(in, fo, fu);
    const float* p = fu.logits.data() + (fu.n_logits - 1) * size_t(V);
    const float* q = po.logits.data() + (po.n_logits - 1) * size_t(V);
    auto log_softmax = [&](const float* x) {
      double mx = x[0], z = 0;
      for (int v = 1; v < V; ++v) mx = std::max(mx, double(x[v]));
      for (int v = 0; v < V; ++v) z += std::exp(double(x[v]) - mx);
      std::vector<double> out(V);
      for (int v = 0; v < V; ++v) out[v] = double(x[v]) - mx - std::log(z);
      return out;
    };
    const auto lp = log_softmax(p), lq = log_softmax(q);
    double kl = 0, kl_rev = 0;
    int ap = 0, aq = 0;
    for (int v = 0; v < V; ++v) {
      kl += std::exp(lp[v]) * (lp[v] - lq[v]);
      kl_rev += std::exp(lq[v]) * (lq[v] - lp[v]);
      if (p[v] > p[ap]) ap = v;
      if (q[v] > q[aq]) aq = v;
    }
    const StepMetrics& m = rec.metrics()[row];
    EXPECT_EQ(m.step, row);
    EXPECT_EQ(m.position, newest);
    EXPECT_NEAR(m.kl, kl, 1e-7 + 1e-5 * kl);
    kl_seen = std::max(kl_seen, kl);
    reverse_gap = std::max(reverse_gap, std::abs(kl_rev - kl));
    EXPECT_EQ(m.top1_agree, ap == aq ? 1 : 0);
    if (row < T) {
      EXPECT_EQ(m.argmax, aq);  // filled in with the next token (not for the last row)
      const int next = toks[newest + 1];
      EXPECT_EQ(m.next_token, next);
      EXPECT_NEAR(m.nll, -lq[next], 1e-5);
      EXPECT_NEAR(m.nll_full, -lp[next], 1e-5);
    }
    // Recall and ideal similarity, per query head, then the mean.
    double recall = 0, ideal = 0;
    for (int l = 0; l < L; ++l)
      for (int h = 0; h < H; ++h) {
        const int seg = lay.segment_of(l, h);
        std::vector<double> f(newest + 1, 0.0), a(newest + 1, 0.0);
        const auto& fpos = full->kv().positions(seg);
        ASSERT_EQ(static_cast<int>(fpos.size()), newest + 1);
        for (std::size_t j = 0; j < fpos.size(); ++j) f[fpos[j]] = fu.attention[l].prob_row(h, 0)[j];
        const auto& ppos = pol->kv().positions(seg);
        double kept = 0, total = 0;
        for (std::size_t j = 0; j < ppos.size(); ++j) {
          a[ppos[j]] = po.attention[l].prob_row(h, 0)[j];
          kept += f[ppos[j]];
        }
        for (double v : f) total += v;
        recall += kept / total;
        std::vector<int> order(newest + 1);
        std::iota(order.begin(), order.end(), 0);
        std::sort(order.begin(), order.end(), [&](int x, int y) { return f[x] > f[y]; });
        std::vector<double> top(newest + 1, 0.0);
        for (int i = 0; i < std::min(k, newest + 1); ++i) top[order[i]] = f[order[i]];
        double dot = 0, na = 0, nt = 0;
        for (int i = 0; i <= newest; ++i) dot += a[i] * top[i], na += a[i] * a[i], nt += top[i] * top[i];
        ideal += dot / std::sqrt(na * nt);
      }
    recall /= L * H;
    ideal /= L * H;
    EXPECT_NEAR(m.attention_recall, recall, 1e-6);
    EXPECT_NEAR(m.ideal_similarity, ideal, 1e-6);
    min_recall = std::min(min_recall, recall);
    min_ideal = std::min(min_ideal, ideal);
    // Evict what the session evicted at this row, then the sizes.
    for (int seg = 0; seg < lay.n_segments(); ++seg) {
      std::vector<int> keep;
      const auto& pos = pol->kv().positions(seg);
      for (std::size_t j = 0; j < pos.size(); ++j) {
        const uint8_t mk = rec.mask(row, seg, pos[j]);
        if (mk == kMaskKept || mk == kMaskProtected) keep.push_back(static_cast<int>(j));
      }
      pol->retain(seg, keep);
    }
    EXPECT_EQ(m.kv_slots, pol->kv().total_slots());
    EXPECT_EQ(m.kv_bytes, pol->kv().total_slots() * 2 * mc.head_dim * 4);
    EXPECT_EQ(m.kv_bytes_full, 2LL * (newest + 1) * lay.n_kv_layers * lay.n_kv_heads * mc.head_dim * 4);
  }
  // The run was a real test of the metrics: the caches differed, and the
  // KL's direction mattered by more than the tolerance above.
  EXPECT_GT(kl_seen, 1e-3);
  EXPECT_GT(reverse_gap, 1e-4);
  EXPECT_LT(min_recall, 0.99);
  EXPECT_LT(min_ideal, 0.99);
}

}  // namespace
}  // namespace kvscope

namespace kvscope {
namespace {

TEST(MetricsNative, UnderAConversionTheyCompareAgainstTheCheckpointAsTrained) {
  // MQA by averaging breaks the tiny GQA model: against the converted
  // model's own full cache a full policy is perfect (KL 0), against the
  // native model it is not — the number a user of --sharing cares about.
  SessionConfig cfg = test::config(PolicyKind::Full, "100%", 8);
  cfg.sharing = SharingLayout::parse("mqa");
  cfg.continuation = " and then the cat sat on the mat.";
  Session s(test::bundle("llama_gqa"), cfg);
  s.run_to_end();
  // The same tokens through the unconverted model, full cache.
  SessionConfig plain = cfg;
  plain.sharing = SharingLayout{};
  Session native(test::bundle("llama_gqa"), plain);
  native.run_to_end();
  ASSERT_EQ(s.tokens(), native.tokens());
  double kl_native = 0;
  for (size_t i = 0; i < s.recorder().metrics().size(); ++i) {
    const StepMetrics& m = s.recorder().metrics()[i];
    EXPECT_EQ(m.kl, 0.0);
    EXPECT_EQ(m.top1_agree, 1);
    kl_native += m.kl_native;
    // The native NLL is the plain model's NLL of the same next token.
    const StepMetrics& n = native.recorder().metrics()[i];
    if (!std::isnan(n.nll)) EXPECT_DOUBLE_EQ(m.nll_native, n.nll) << "row " << i;
  }
  EXPECT_GT(kl_native / s.recorder().metrics().size(), 0.01);
}

TEST(MetricsNative, WithoutAConversionEqualTheShadowRun) {
  Session s(test::bundle("llama_gqa"), test::config(PolicyKind::H2O, "50%", 8));
  s.run_to_end();
  for (const StepMetrics& m : s.recorder().metrics()) {
    EXPECT_EQ(m.kl_native, m.kl);
    EXPECT_EQ(m.top1_agree_native, m.top1_agree);
    if (!std::isnan(m.nll_full)) EXPECT_EQ(m.nll_native, m.nll_full);
  }
}

}  // namespace
}  // namespace kvscope

namespace kvscope {
namespace {

// The metrics' full-cache reference steps together with the policy run
// (Backend::forward_pair): the policy run must not notice, and the
// reference must be what a full-cache run of its own computes.
TEST(MetricsPaired, ThePolicyRunIsTheSameWithMetricsOnAndTheReferenceIsAFullRun) {
  for (const char* model : {"llama_gqa", "gpt2"}) {
    SCOPED_TRACE(model);
    SessionConfig on = test::config(PolicyKind::H2O, "50%", 10);
    on.sampling.temperature = 0.8;  // sampled tokens: any change in the logits' bits would show
    on.recording.metrics = true;
    SessionConfig off = on;
    off.recording.metrics = false;
    SessionConfig full = on;
    full.policy = PolicyParams{};
    Session a(test::bundle(model), on), b(test::bundle(model), off), f(test::bundle(model), full);
    a.run_to_end();
    b.run_to_end();
    f.run_to_end();
    EXPECT_EQ(a.generated(), b.generated());
    // ... and the policy run's recorded attention and scores, bit for bit.
    ASSERT_EQ(a.recorder().attention_rows().size(), b.recorder().attention_rows().size());
    EXPECT_EQ(0, std::memcmp(a.recorder().attention_rows().data(), b.recorder().attention_rows().data(),
                             a.recorder().attention_rows().size() * sizeof(float)));
    ASSERT_EQ(a.recorder().scores().size(), b.recorder().scores().size());
    EXPECT_EQ(0, std::memcmp(a.recorder().scores().data(), b.recorder().scores().data(),
                             a.recorder().scores().size() * sizeof(float)));
    ASSERT_EQ(a.recorder().metrics().size(), f.recorder().metrics().size());
    // f's own run is a full cache fed the tokens a generated only where the
    // two agree; compare the steps up to the first difference.
    const auto& ma = a.recorder().metrics();
    const auto& mf = f.recorder().metrics();
    int compared = 0;
    for (std::size_t i = 0; i < ma.size(); ++i) {
      if (i > 0 && a.generated()[i - 1] != f.generated()[i - 1]) break;
      if (std::isnan(ma[i].nll_full)) continue;
      if (ma[i].next_token != mf[i].next_token) break;
      EXPECT_EQ(ma[i].nll_full, mf[i].nll) << "step " << i;  // bit for bit
      EXPECT_EQ(mf[i].kl, 0.0);
      ++compared;
    }
    EXPECT_GT(compared, 0);
  }
}

}  // namespace
}  // namespace kvscope
