// A prompt's forward pass shared among sessions that accumulate the same
// statistic (Session::run_prompt_forward / prefill_from), and evaluations
// of many configurations that share it (evaluate_many): each run must be
// the one it would have been on its own, bit for bit, for every policy,
// with the metrics run and with sampling.
#include <gtest/gtest.h>

#include <cstring>

#include "common/error.h"
#include "reports/evaluation.h"
#include "same_run.h"
#include "session_fixture.h"

namespace kvscope {
namespace {

using test::expect_same_run;

SessionConfig sampled_seeded(PolicyKind kind, const std::string& budget, uint64_t seed = 11) {
  SessionConfig c = test::sampled_config(kind, budget, 10);
  c.seed = seed;
  return c;
}

class SharedPrefillEveryPolicy : public ::testing::TestWithParam<PolicyKind> {};

// The waiting session runs another budget of the same policy: the budget
// acts only after the forward pass, so the pass can be shared.
TEST_P(SharedPrefillEveryPolicy, EqualsItsOwnPrefillBitForBit) {
  const auto b = test::bundle("llama_gqa");
  Session own(b, sampled_seeded(GetParam(), "40%"));
  own.run_to_end();
  Session waiting(b, sampled_seeded(GetParam(), "70%"));
  waiting.run_prompt_forward();
  Session shared(b, sampled_seeded(GetParam(), "40%"));
  ASSERT_TRUE(shared.can_share_prefill(waiting));
  shared.prefill_from(waiting);
  shared.run_to_end();
  expect_same_run(own, shared);
  // The waiting session is untouched: it goes on as its own run would.
  EXPECT_TRUE(waiting.prompt_forward_pending());
  Session own70(b, sampled_seeded(GetParam(), "70%"));
  own70.run_to_end();
  waiting.run_to_end();
  expect_same_run(own70, waiting);
}

INSTANTIATE_TEST_SUITE_P(Policies, SharedPrefillEveryPolicy,
                         ::testing::Values(PolicyKind::Full, PolicyKind::Window, PolicyKind::Sink, PolicyKind::H2O,
                                           PolicyKind::TOVA, PolicyKind::Keyformer, PolicyKind::A2SF, PolicyKind::Cur,
                                           PolicyKind::LagKv, PolicyKind::Leverage, PolicyKind::Expected,
                                           PolicyKind::Random, PolicyKind::Ideal),
                         [](const auto& info) { return std::string(policy_name(info.param)); });

TEST(SharedPrefill, PoliciesWithoutAStatisticShareOnePass) {
  const auto b = test::bundle("llama_gqa");
  Session waiting(b, sampled_seeded(PolicyKind::Full, "100%"));
  waiting.run_prompt_forward();
  for (PolicyKind k : {PolicyKind::Window, PolicyKind::Sink, PolicyKind::Random}) {
    Session own(b, sampled_seeded(k, "50%"));
    own.run_to_end();
    Session shared(b, sampled_seeded(k, "50%"));
    ASSERT_TRUE(shared.can_share_prefill(waiting)) << policy_name(k);
    shared.prefill_from(waiting);
    shared.run_to_end();
    expect_same_run(own, shared);
  }
}

TEST(SharedPrefill, RefusedWhereThePassWouldDiffer) {
  const auto b = test::bundle("llama_gqa");
  Session h2o(b, sampled_seeded(PolicyKind::H2O, "50%"));
  h2o.run_prompt_forward();
  // Another statistic (TOVA keeps only the last row), another seed of
  // Keyformer's noise, another prompt, a streaming prefill, and a session
  // that has not run its pass: none can stand for the other.
  EXPECT_FALSE(Session(b, sampled_seeded(PolicyKind::TOVA, "50%")).can_share_prefill(h2o));
  Session kf1(b, sampled_seeded(PolicyKind::Keyformer, "50%", 1));
  kf1.run_prompt_forward();
  EXPECT_FALSE(Session(b, sampled_seeded(PolicyKind::Keyformer, "50%", 2)).can_share_prefill(kf1));
  EXPECT_TRUE(Session(b, sampled_seeded(PolicyKind::Keyformer, "30%", 1)).can_share_prefill(kf1));
  SessionConfig other = sampled_seeded(PolicyKind::H2O, "50%");
  other.prompt = "Another prompt entirely, of other tokens.";
  EXPECT_FALSE(Session(b, other).can_share_prefill(h2o));
  SessionConfig streaming = sampled_seeded(PolicyKind::H2O, "50%");
  streaming.policy.prefill = PrefillMode::Streaming;
  EXPECT_FALSE(Session(b, streaming).can_share_prefill(h2o));
  EXPECT_THROW(Session(b, streaming).run_prompt_forward(), Error);
  // The cache scores' own settings (LagKV's lag, CUR's window) are part of the pass.
  SessionConfig lag8 = sampled_seeded(PolicyKind::LagKv, "50%");
  lag8.policy.extra["lag"] = 8;
  Session lag(b, lag8);
  lag.run_prompt_forward();
  SessionConfig lag4 = lag8;
  lag4.policy.extra["lag"] = 4;
  EXPECT_FALSE(Session(b, lag4).can_share_prefill(lag));
  EXPECT_TRUE(Session(b, lag8).can_share_prefill(lag));
  // ExpectedAttention's future positions and sinks shape its scores.
  SessionConfig ea = sampled_seeded(PolicyKind::Expected, "50%");
  Session expected(b, ea);
  expected.run_prompt_forward();
  SessionConfig ea_future = ea;
  ea_future.policy.extra["future_positions"] = 64;
  EXPECT_FALSE(Session(b, ea_future).can_share_prefill(expected));
  SessionConfig ea_sinks = ea;
  ea_sinks.policy.sinks = 2;
  EXPECT_FALSE(Session(b, ea_sinks).can_share_prefill(expected));
  EXPECT_TRUE(Session(b, sampled_seeded(PolicyKind::Expected, "30%")).can_share_prefill(expected));
  Session not_run(b, sampled_seeded(PolicyKind::H2O, "50%"));
  Session tova(b, sampled_seeded(PolicyKind::TOVA, "50%"));
  EXPECT_FALSE(tova.can_share_prefill(not_run));
  EXPECT_THROW(tova.prefill_from(h2o), Error);
}

// The weights are prepared for the CPU once per model and settings: the
// next session of the same settings takes them from the bundle, another
// sharing layout or weight format prepares its own.
TEST(PreparedWeights, KeptOnTheBundleForTheNextSessionOfTheSameSettings) {
  const auto b = std::make_shared<const ModelBundle>(load_model_bundle(test::model_dir("llama_gqa")));
  EXPECT_EQ(b->prepared->value, nullptr);
  Session first(b, test::config(PolicyKind::H2O, "50%"));
  const std::shared_ptr<const void> kept = b->prepared->value;
  ASSERT_NE(kept, nullptr);
  Session second(b, test::config(PolicyKind::TOVA, "30%"));
  EXPECT_EQ(b->prepared->value, kept);
  SessionConfig f16 = test::config(PolicyKind::H2O, "50%");
  f16.weights = "f16";
  Session third(b, f16);
  EXPECT_NE(b->prepared->value, kept);
  SessionConfig mqa = test::config(PolicyKind::H2O, "50%");
  mqa.sharing = SharingLayout::parse("mqa");
  const std::shared_ptr<const void> f16_kept = b->prepared->value;
  Session fourth(b, mqa);
  EXPECT_NE(b->prepared->value, f16_kept);
  EXPECT_NE(b->prepared->value, kept);
}

bool same_double(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// A sweep's cells evaluated together (item by item, passes shared) give
// each cell's evaluation on its own, bit for bit.
TEST(EvaluateMany, EqualsEachConfigEvaluatedAlone) {
  const auto b = test::bundle("llama_gqa");
  const std::vector<EvalItem> items = {
      {"The quick brown fox jumps over the lazy dog. The quick brown", " fox jumps", "item 1"},
      {"Pack my box with five dozen jugs! Pack my box", " with five dozen", "item 2"},
      {"Sphinx of black quartz, judge my vow. Sphinx of black", " quartz", "item 3"},
  };
  std::vector<SessionConfig> configs;
  auto add = [&](PolicyKind k, const std::string& budget, uint64_t seed) {
    SessionConfig c = test::config(k, budget);
    c.seed = seed;
    configs.push_back(c);
  };
  add(PolicyKind::Full, "100%", 11);
  add(PolicyKind::Window, "50%", 11);
  add(PolicyKind::H2O, "30%", 11);
  add(PolicyKind::H2O, "60%", 11);
  add(PolicyKind::Keyformer, "40%", 11);
  add(PolicyKind::Keyformer, "40%", 12);
  add(PolicyKind::Random, "40%", 11);
  add(PolicyKind::Random, "40%", 12);
  add(PolicyKind::TOVA, "50%", 11);
  int calls = 0, last = 0;
  const auto together = evaluate_many(b, configs, items, [&](int done) {
    ++calls;
    last = done;
  });
  EXPECT_EQ(calls, static_cast<int>(configs.size() * items.size()));
  EXPECT_EQ(last, calls);
  ASSERT_EQ(together.size(), configs.size());
  for (std::size_t k = 0; k < configs.size(); ++k) {
    const EvalResult alone = evaluate(b, configs[k], items);
    const EvalResult& t = together[k];
    SCOPED_TRACE("config " + std::to_string(k) + " (" + policy_name(configs[k].policy.kind) + ")");
    EXPECT_EQ(t.correct, alone.correct);
    EXPECT_TRUE(same_double(t.answer_nll, alone.answer_nll));
    EXPECT_TRUE(same_double(t.text_nll, alone.text_nll));
    EXPECT_TRUE(same_double(t.kl, alone.kl));
    ASSERT_EQ(t.per_item.size(), items.size());
    for (std::size_t i = 0; i < items.size(); ++i) {
      EXPECT_TRUE(same_double(t.per_item[i].answer_nll, alone.per_item[i].answer_nll)) << "item " << i;
      EXPECT_TRUE(same_double(t.per_item[i].kv_bytes, alone.per_item[i].kv_bytes)) << "item " << i;
      EXPECT_TRUE(same_double(t.per_item[i].recall, alone.per_item[i].recall)) << "item " << i;
    }
  }
}

// The two means of an answer's NLL: over all tokens (eval's nats/token)
// and over items (a sweep's column), by hand on the per-item values.
TEST(EvaluateMany, ItemMeanAndTokenMeanOfTheAnswerNll) {
  const auto b = test::bundle("llama_gqa");
  const std::vector<EvalItem> items = {{"One two three four five six", " seven", "a"},
                                       {"Red green blue red green blue", " red green blue red", "b"}};
  const EvalResult r = evaluate(b, test::config(PolicyKind::H2O, "50%"), items);
  ASSERT_EQ(r.scored, 2);
  const double item_mean = (r.per_item[0].answer_nll + r.per_item[1].answer_nll) / 2;
  EXPECT_NEAR(r.mean_item_answer_nll(), item_mean, 1e-12);
  EXPECT_NEAR(r.mean_answer_nll(), r.answer_nll / r.answer_tokens, 1e-12);
  EXPECT_GT(r.answer_tokens, 2);  // answers of different lengths: the two means differ
  EXPECT_NE(r.mean_item_answer_nll(), r.mean_answer_nll());
}

}  // namespace
}  // namespace kvscope
