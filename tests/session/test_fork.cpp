// Snapshots of a running session (Session::fork) and replays to a row
// (Session::replay_to): what the window's Fork, its timeline and "step
// from a scrubbed row" are built on. A fork continued with the same
// settings must reproduce the original bit for bit — caches, slot
// statistics, policy state, recorder, metrics run and the sampler's draws.
#include <gtest/gtest.h>

#include <functional>

#include "session/fork_session.h"
#include "session/session_config.h"
#include "same_run.h"
#include "session_fixture.h"

namespace kvscope {
namespace {

using test::expect_same_bits;
using test::expect_same_run;

// Sampled so the draws matter, with each policy whose state lives somewhere
// different: accumulated statistics (H2O), none (TOVA), per-step noise
// (Keyformer), a discounted sum (A2SF).
SessionConfig sampled_on(PolicyKind kind, const std::string& budget, const std::string& device = "cpu") {
  SessionConfig c = test::sampled_config(kind, budget, 14);
  c.device = device;
  return c;
}

class ForkEveryPolicy : public ::testing::TestWithParam<PolicyKind> {};

TEST_P(ForkEveryPolicy, ContinuedWithTheSameSettingsReproducesTheOriginalBitForBit) {
  Session a(test::bundle("llama_gqa"), sampled_on(GetParam(), "40%"));
  a.prefill();
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(a.step());
  std::unique_ptr<Session> b = a.fork();
  expect_same_run(a, *b);
  a.run_to_end();
  b->run_to_end();
  expect_same_run(a, *b);
  EXPECT_GT(a.recorder().events().size(), 0u) << "the budget must make the policy evict, or nothing is tested";
}

INSTANTIATE_TEST_SUITE_P(Policies, ForkEveryPolicy,
                         ::testing::Values(PolicyKind::H2O, PolicyKind::TOVA, PolicyKind::Keyformer, PolicyKind::A2SF,
                                           PolicyKind::Random),
                         [](const auto& info) { return std::string(policy_name(info.param)); });

TEST(Fork, IsIndependentOfTheOriginal) {
  // Stepping the fork must not move the original (no shared cache).
  Session a(test::bundle("llama_gqa"), sampled_on(PolicyKind::H2O, "40%"));
  a.prefill();
  a.step();
  auto b = a.fork();
  const auto masks_before = a.recorder().masks();
  b->run_to_end();
  EXPECT_EQ(a.current_row(), 1);
  expect_same_bits(a.recorder().masks(), masks_before, "the original's masks after the fork ran");
  a.run_to_end();
  expect_same_run(a, *b);
}

TEST(Fork, WithANewPolicyEqualsTheSessionFileFork) {
  // The window's "fork at step 4 under TOVA" and a session file's
  // {"fork": {"at_step": 4, "policy": tova}} give the same run B.
  SessionConfig cfg = sampled_on(PolicyKind::H2O, "40%");
  PolicyParams tova = cfg.policy;
  tova.kind = PolicyKind::TOVA;
  Session a(test::bundle("llama_gqa"), cfg);
  a.prefill();
  for (int i = 0; i < 4; ++i) a.step();
  auto b = a.fork();
  b->set_policy(tova);
  b->run_to_end();

  cfg.fork = ForkConfig{4, tova};
  Session c(test::bundle("llama_gqa"), fork_branch_config(cfg));
  c.run_to_end();
  expect_same_run(*b, c);
  // And it is a different run from A's (else the test shows nothing).
  a.run_to_end();
  EXPECT_NE(a.recorder().masks(), b->recorder().masks());
}

// session/fork_session.h, what both front ends build B with: the window's
// branch off a running A (a snapshot at A's row, or a replay to an earlier
// one) and the CLI's B run from the prompt are one run.
TEST(ForkSession, TheWindowsBranchAndTheClisSessionAreOneRun) {
  SessionConfig cfg = sampled_on(PolicyKind::H2O, "40%");
  PolicyParams tova = cfg.policy;
  tova.kind = PolicyKind::TOVA;
  cfg.fork = ForkConfig{3, tova};
  Session a(test::bundle("llama_gqa"), cfg);
  std::unique_ptr<Session> from_prompt = fork_session_from_prompt(test::bundle("llama_gqa"), a);
  a.prefill();
  for (int i = 0; i < 3; ++i) a.step();
  std::unique_ptr<Session> snapshot = branch_session(a, 3, tova);
  for (int i = 0; i < 3; ++i) a.step();
  std::unique_ptr<Session> replayed = branch_session(a, 3, tova);  // A is past step 3: a replay to it
  ASSERT_TRUE(snapshot && replayed);
  from_prompt->run_to_end();
  snapshot->run_to_end();
  replayed->run_to_end();
  expect_same_run(*from_prompt, *snapshot);
  expect_same_run(*from_prompt, *replayed);
}

TEST(ForkSession, ChecksNameTheForkBlockForBothFrontEnds) {
  SessionConfig cfg = sampled_on(PolicyKind::H2O, "40%");
  cfg.source = "s.json";
  Session a(test::bundle("llama_gqa"), cfg);
  auto message = [](const std::function<void()>& f) {
    try {
      f();
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  EXPECT_EQ(message([&] { check_fork(a, 99, cfg.policy); }), "s.json: fork.at_step: step 99 is outside the run (0..14)");
  PolicyParams huge = cfg.policy;
  huge.budget = Amount::parse("100000", "budget");
  const std::string m = message([&] { check_fork(a, 2, huge); });
  EXPECT_EQ(m.rfind("s.json: fork.policy.budget: ", 0), 0u) << m;
  // The CLI's B checks the same before anything runs.
  cfg.fork = ForkConfig{2, huge};
  Session with_fork(test::bundle("llama_gqa"), cfg);
  EXPECT_EQ(message([&] { fork_session_from_prompt(test::bundle("llama_gqa"), with_fork); }), m);
}

TEST(ReplayTo, GivesTheStateOfThatRowAndGoesOnTheSameWay) {
  SessionConfig cfg = sampled_on(PolicyKind::Keyformer, "40%");
  Session a(test::bundle("llama_gqa"), cfg);
  a.prefill();
  for (int i = 0; i < 3; ++i) a.step();
  PolicyParams later = cfg.policy;
  later.kind = PolicyKind::H2O;
  a.set_policy(later);  // a change at step 4, which a replay to row 6 keeps
  a.run_to_end();

  std::unique_ptr<Session> r = a.replay_to(6);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->current_row(), 6);
  EXPECT_EQ(r->config().policy_changes.size(), 1u);
  const size_t cells = size_t(7) * r->recorder().layout().n_segments() * r->recorder().positions();
  EXPECT_EQ(std::memcmp(r->recorder().masks().data(), a.recorder().masks().data(), cells), 0);
  r->run_to_end();
  expect_same_run(a, *r);
}

TEST(ReplayTo, DropsPolicyChangesAfterTheRow) {
  SessionConfig cfg = sampled_on(PolicyKind::H2O, "40%");
  Session a(test::bundle("llama_gqa"), cfg);
  a.prefill();
  for (int i = 0; i < 8; ++i) a.step();
  PolicyParams tova = cfg.policy;
  tova.kind = PolicyKind::TOVA;
  a.set_policy(tova);  // from step 9
  a.run_to_end();
  auto r = a.replay_to(5);
  EXPECT_TRUE(r->config().policy_changes.empty());
  r->run_to_end();
  Session plain(test::bundle("llama_gqa"), cfg);
  plain.run_to_end();
  expect_same_run(plain, *r);
}

TEST(ReplayTo, CanBeCancelledAndRefusesRowsNotRun) {
  Session a(test::bundle("llama_gqa"), sampled_on(PolicyKind::H2O, "40%"));
  a.prefill();
  for (int i = 0; i < 6; ++i) a.step();
  int calls = 0;
  EXPECT_EQ(a.replay_to(6, [&](int row) { ++calls; return row < 2; }), nullptr);
  EXPECT_EQ(calls, 3);  // rows 0, 1, 2: cancelled at the third report
  EXPECT_THROW(a.replay_to(7), Error);
  EXPECT_THROW(a.replay_to(-1), Error);
}

TEST(ForkCuda, ContinuedWithTheSameSettingsReproducesTheOriginalBitForBit) {
  std::string why;
  if (!cuda_available(&why)) GTEST_SKIP() << "no CUDA device: " << why;
  Session a(test::bundle("llama_gqa"), sampled_on(PolicyKind::Keyformer, "40%", "cuda"));
  a.prefill();
  for (int i = 0; i < 5; ++i) a.step();
  auto b = a.fork();
  a.run_to_end();
  b->run_to_end();
  expect_same_run(a, *b);
}

TEST(SessionFileFork, RoundTripsAndIsValidated) {
  SessionConfig cfg = sampled_on(PolicyKind::H2O, "40%");
  PolicyParams tova = cfg.policy;
  tova.kind = PolicyKind::TOVA;
  cfg.fork = ForkConfig{3, tova};
  cfg.view.layer = 1;
  cfg.view.mode = "mask";
  cfg.view.bookmarks = {2, 5};
  cfg.lesson = LessonConfig{"H2O vs TOVA", "caption", "look"};
  const SessionConfig back = SessionConfig::from_json(cfg.to_json(), "s.json");
  ASSERT_TRUE(back.fork.has_value());
  EXPECT_EQ(back.fork->at_step, 3);
  EXPECT_EQ(back.fork->policy.kind, PolicyKind::TOVA);
  EXPECT_EQ(back.view, cfg.view);
  EXPECT_EQ(back.lesson, cfg.lesson);
  EXPECT_EQ(back.to_json(), cfg.to_json());

  auto message = [&](nlohmann::json j) {
    try {
      SessionConfig::from_json(j, "s.json");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  nlohmann::json j = cfg.to_json();
  j["fork"]["at_step"] = 99;
  EXPECT_NE(message(j).find("s.json: fork.at_step"), std::string::npos) << message(j);
  j = cfg.to_json();
  j["view"]["mode"] = "sideways";
  EXPECT_NE(message(j).find("s.json: view.mode"), std::string::npos) << message(j);
  j = cfg.to_json();
  j["fork"]["policy"]["name"] = "nope";
  EXPECT_NE(message(j).find("fork.policy"), std::string::npos) << message(j);
  j = cfg.to_json();
  j["lesson"]["colour"] = "red";
  EXPECT_NE(message(j).find("lesson"), std::string::npos) << message(j);
}

}  // namespace
}  // namespace kvscope
