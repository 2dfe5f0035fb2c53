// The per-slot statistics the CPU backend accumulates inside attention,
// against the policies' equations evaluated here from the captured attention
// (docs/policies.md): H2O's column sums and running sums, A2SF's forgetting
// factor, TOVA's current row, Keyformer's Gumbel softmax of the logits with
// seeded noise and its temperature, and the max-over-readers option. MLKV
// makes several layers read one segment.
#include <gtest/gtest.h>

#include <cmath>

#include "backend/backend.h"
#include "io/json_file.h"
#include "model/loader.h"
#include "policy/policy.h"
#include "test_util.h"

namespace kvscope {
namespace {

struct Run {
  std::unique_ptr<Backend> be;
  ModelFiles m;
  std::vector<int> prompt;
};

// The first n tokens of the model's golden prompt, repeated past its end;
// a prompt longer than the tiny checkpoint's 128 positions raises its
// limit (a RoPE model's only: a learned table has no more rows), so that a
// prompt spans several of the CPU backend's blocks of query rows.
Run start(const std::string& model, int n) {
  Run r;
  r.m = load_model_files(test::model_dir(model));
  const auto j = read_json_file(test::model_dir(model) / "golden_ids.json");
  const auto ids = j.at("prompt").get<std::vector<int>>();
  for (int i = 0; i < n; ++i) r.prompt.push_back(ids[i % ids.size()]);
  if (n + 64 > r.m.config.max_positions) {
    EXPECT_FALSE(r.m.config.learned_positions) << model;
    r.m.config.max_positions = n + 64;
  }
  BackendOptions bo;
  bo.max_tokens = n + 64;
  r.be = make_backend(Device::Cpu, r.m.config, r.m.weights, bo);
  return r;
}

// One reader's f row (probs or Keyformer's G) for query i of a capture.
std::vector<double> f_row(const AttentionRows& a, int h, int i, const SlotStatRule& rule, int layer,
                          const std::vector<int>& pos, int qpos) {
  const int len = a.row_len[h];
  std::vector<double> f(len, 0.0);
  if (rule.source == StatSource::Attention) {
    for (int j = 0; j < len; ++j) f[j] = a.prob_row(h, i)[j];
    return f;
  }
  double mx = -INFINITY;
  std::vector<double> z(len);
  for (int j = 0; j < len; ++j) {
    const float x = a.logit_row(h, i)[j];
    z[j] = std::isinf(x) ? -INFINITY
                         : (x + keyformer_noise(rule.noise, rule.seed, qpos, layer, h, pos[j])) / double(rule.tau);
    mx = std::max(mx, z[j]);
  }
  double sum = 0;
  for (int j = 0; j < len; ++j) sum += (f[j] = std::isinf(z[j]) ? 0.0 : std::exp(z[j] - mx));
  for (auto& v : f) v /= sum;
  return f;
}

// The statistic of every segment after the calls, from the equations.
class Reference {
 public:
  explicit Reference(const KvLayout& lay) : lay_(lay), S_(lay.n_segments()) {}
  // Applies one forward call's captures (all layers, all query rows).
  void apply(const std::vector<AttentionRows>& caps, const SlotStatRule& rule, const KvBook& book, int first_pos) {
    const int n = caps[0].n_queries;
    for (int seg = 0; seg < lay_.n_segments(); ++seg) {
      const int len = book.len(seg);
      S_[seg].resize(len, 0.0);
      for (int i = 0; i < n; ++i) {
        // Combine the readers of this segment for query row i.
        std::vector<double> comb(len, 0.0);
        int readers = 0;
        for (const auto& a : caps)
          for (int h = 0; h < lay_.n_heads; ++h) {
            if (lay_.segment_of(a.layer, h) != seg) continue;
            const auto f = f_row(a, h, i, rule, a.layer, book.positions(seg), first_pos + i);
            for (int j = 0; j < len; ++j)
              comb[j] = rule.reduce == ReaderReduce::Max ? std::max(comb[j], f[j]) : comb[j] + f[j];
            ++readers;
          }
        for (int j = 0; j < len; ++j) {
          if (rule.reduce == ReaderReduce::Mean) comb[j] /= readers;
          S_[seg][j] = rule.decay * S_[seg][j] + comb[j];  // S_t = decay S_{t-1} + f_t
        }
      }
    }
  }
  const std::vector<double>& S(int seg) const { return S_[seg]; }
  void retain(int seg, const std::vector<int>& keep) {
    std::vector<double> kept;
    for (int j : keep) kept.push_back(S_[seg][j]);
    S_[seg] = kept;
  }

 private:
  KvLayout lay_;
  std::vector<std::vector<double>> S_;
};

void check_rule(const std::string& model, const SlotStatRule& rule, int prompt_tokens = 12) {
  Run r = start(model, prompt_tokens);
  const KvLayout lay = KvLayout::from_config(r.m.config);
  Reference ref(lay);
  ForwardOptions fo;
  for (int l = 0; l < r.m.config.n_layers; ++l) fo.capture_layers.push_back(l);
  fo.stats = rule;
  ForwardOutput out;
  r.be->forward(r.prompt, fo, out);
  ref.apply(out.attention, rule, r.be->kv(), 0);
  for (int step = 0; step < 4; ++step) {
    const int tok[1] = {r.prompt[step]};
    const int pos = r.be->tokens_seen();
    r.be->forward(tok, fo, out);
    ref.apply(out.attention, rule, r.be->kv(), pos);
    if (step == 1) {
      // Evict the middle of every segment; the statistic follows its slots.
      std::vector<int> keep = {0, 1, 2, 7, 8, 9, 10, 11, 12, 13};
      for (int s = 0; s < lay.n_segments(); ++s) {
        r.be->retain(s, keep);
        ref.retain(s, keep);
      }
    }
  }
  // Within 2e-5, or a few float roundings of a large sum (a 300-row
  // prompt's first slots sum to tens).
  double worst = 0;
  for (int s = 0; s < lay.n_segments(); ++s) {
    const auto& got = r.be->slot_stats(s);
    ASSERT_EQ(got.size(), ref.S(s).size());
    for (std::size_t j = 0; j < got.size(); ++j)
      worst = std::max(worst, std::abs(got[j] - ref.S(s)[j]) / std::max(1.0, std::abs(ref.S(s)[j])));
  }
  EXPECT_LT(worst, 2e-5) << model;
}

TEST(Statistics, H2OIsTheRunningColumnSum) {
  SlotStatRule rule;
  rule.source = StatSource::Attention;
  rule.decay = 1;
  check_rule("llama_gqa", rule);
  check_rule("gpt2", rule);
}

TEST(Statistics, A2sfForgetsWithAlpha) {
  SlotStatRule rule;
  rule.source = StatSource::Attention;
  rule.decay = 0.2f;
  check_rule("llama_gqa", rule);
}

TEST(Statistics, TovaKeepsOnlyTheCurrentRow) {
  SlotStatRule rule;
  rule.source = StatSource::Attention;
  rule.decay = 0;
  check_rule("gpt_neox_parallel", rule);
}

TEST(Statistics, TovaOneShotPrefillKeepsOnlyTheLastPromptRow) {
  // Right after a one-shot prefill (before any decode step) TOVA's
  // statistic is the last prompt query's attention, the mean over the KV
  // head's readers (query heads of its group; with MLKV, of every layer
  // reading it) -- not a sum over the prompt rows.
  const auto pol = make_policy(resolve_policy([] {
    PolicyParams p;
    p.kind = PolicyKind::TOVA;
    p.budget = Amount::parse("50%", "budget");
    return p;
  }(), 12, 64));
  const SlotStatRule rule = pol->stat_rule({0, 4});
  ASSERT_EQ(rule.source, StatSource::Attention);
  for (const char* model : {"llama_gqa", "llama_mlkv", "gpt_neox_parallel"}) {
    SCOPED_TRACE(model);
    auto r = start(model, 12);
    const KvLayout lay = KvLayout::from_config(r.m.config);
    ForwardOptions fo;
    for (int l = 0; l < r.m.config.n_layers; ++l) fo.capture_layers.push_back(l);
    fo.stats = rule;
    ForwardOutput out;
    r.be->forward(r.prompt, fo, out);
    const int n = 12;
    for (int seg = 0; seg < lay.n_segments(); ++seg) {
      std::vector<double> want(n, 0.0);
      int readers = 0;
      for (const auto& a : out.attention)
        for (int h = 0; h < lay.n_heads; ++h) {
          if (lay.segment_of(a.layer, h) != seg) continue;
          ++readers;
          for (int j = 0; j < n; ++j) want[j] += a.prob_row(h, n - 1)[j];
        }
      ASSERT_GT(readers, 0);
      const auto& got = r.be->slot_stats(seg);
      ASSERT_EQ(got.size(), size_t(n));
      double sum = 0;
      for (int j = 0; j < n; ++j) {
        EXPECT_NEAR(got[j], want[j] / readers, 1e-6) << "segment " << seg << " slot " << j;
        sum += got[j];
      }
      EXPECT_NEAR(sum, 1.0, 1e-5);  // one row's mass; column sums would hold 12
    }
  }
}

TEST(Statistics, KeyformerGumbelSoftmaxWithoutAndWithSeededNoise) {
  SlotStatRule rule;
  rule.source = StatSource::GumbelSoftmax;
  rule.decay = 1;
  rule.tau = 1.5f;
  rule.noise = NoiseKind::None;
  check_rule("llama_gqa", rule);
  rule.noise = NoiseKind::Gumbel;
  rule.seed = 42;
  check_rule("llama_gqa", rule);
  rule.noise = NoiseKind::Gaussian;
  check_rule("mistral", rule);
}

TEST(Statistics, MaxOverReadersAndMlkvReadersAcrossLayers) {
  SlotStatRule rule;
  rule.source = StatSource::Attention;
  rule.decay = 1;
  rule.reduce = ReaderReduce::Max;
  check_rule("llama_gqa", rule);
  check_rule("llama_mlkv", rule);  // layers 0,1 read segment set 0; layers 2,3 set 1
  rule.reduce = ReaderReduce::Mean;
  check_rule("llama_mlkv", rule);
}

// A prompt of 300 rows spans three of the CPU backend's blocks of query
// rows, whose maxima over readers are summed as each block is done (with
// A2SF's forgetting factor weighting the rows, and Keyformer's rows).
TEST(Statistics, MaxOverReadersAcrossBlocksOfQueryRows) {
  SlotStatRule rule;
  rule.source = StatSource::Attention;
  rule.reduce = ReaderReduce::Max;
  rule.decay = 0.99f;
  check_rule("llama_gqa", rule, 300);
  rule.decay = 1;
  rule.source = StatSource::GumbelSoftmax;
  rule.tau = 1.5f;
  rule.noise = NoiseKind::Gumbel;
  rule.seed = 7;
  check_rule("llama_gqa", rule, 300);
  rule.source = StatSource::Attention;
  rule.decay = 0.99f;
  check_rule("llama_mlkv", rule, 300);  // a row's maximum waits for both layers
}

TEST(Statistics, KeyformerNoiseIsSeededAndHasTheRightMoments) {
  // Gumbel(0,1): mean = Euler's gamma 0.5772, variance pi^2/6.
  double sum = 0, sq = 0;
  const int n = 200000;
  for (int i = 0; i < n; ++i) {
    const double g = keyformer_noise(NoiseKind::Gumbel, 7, i / 100, 3, 1, i % 100);
    sum += g;
    sq += g * g;
  }
  const double mean = sum / n, var = sq / n - mean * mean;
  EXPECT_NEAR(mean, 0.5772, 0.01);
  EXPECT_NEAR(var, M_PI * M_PI / 6, 0.03);
  // The paper's Gaussian ablation: N(0.5772, 1.2825).
  sum = sq = 0;
  for (int i = 0; i < n; ++i) {
    const double g = keyformer_noise(NoiseKind::Gaussian, 7, i, 0, 0, 1);
    sum += g;
    sq += g * g;
  }
  EXPECT_NEAR(sum / n, 0.5772, 0.01);
  EXPECT_NEAR(std::sqrt(sq / n - (sum / n) * (sum / n)), 1.2825, 0.01);
  EXPECT_EQ(keyformer_noise(NoiseKind::Constant, 1, 2, 3, 4, 5), 0.5772f);
  EXPECT_EQ(keyformer_noise(NoiseKind::Gumbel, 9, 1, 2, 3, 4), keyformer_noise(NoiseKind::Gumbel, 9, 1, 2, 3, 4));
  EXPECT_NE(keyformer_noise(NoiseKind::Gumbel, 9, 1, 2, 3, 4), keyformer_noise(NoiseKind::Gumbel, 10, 1, 2, 3, 4));
}

TEST(Statistics, KeyformerTemperatureSchedule) {
  PolicyParams p;
  p.kind = PolicyKind::Keyformer;
  p.tau_init = 1.0f;
  p.tau_end = 2.0f;
  EXPECT_FLOAT_EQ(keyformer_tau(p, {0, 10}), 1.0f);
  EXPECT_FLOAT_EQ(keyformer_tau(p, {5, 10}), 1.5f);
  EXPECT_FLOAT_EQ(keyformer_tau(p, {10, 10}), 2.0f);
  p.tau_schedule = TauSchedule::Constant;
  EXPECT_FLOAT_EQ(keyformer_tau(p, {7, 10}), 1.0f);
  const auto pol = make_policy(resolve_policy(p, 20, 100));
  const auto rule = pol->stat_rule({3, 10});
  EXPECT_EQ(rule.source, StatSource::GumbelSoftmax);
  EXPECT_FLOAT_EQ(rule.tau, 1.0f);
}

}  // namespace
}  // namespace kvscope
