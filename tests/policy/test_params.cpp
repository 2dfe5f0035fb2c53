// Policy settings: defaults per policy (docs/policies.md) and the bad inputs the
// CLI and session files must refuse with a message naming the setting by
// its neutral field (each front end renames it: a flag, a JSON path, a label).
#include <gtest/gtest.h>

#include "common/error.h"
#include "policy/params.h"

namespace kvscope {
namespace {

std::string error_of(const PolicyParams& p, int prompt = 100, int context = 512) {
  try {
    resolve_policy(p, prompt, context);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Params, DefaultsFollowThePapers) {
  PolicyParams p;
  p.budget = Amount::parse("50%", "b");
  p.kind = PolicyKind::H2O;
  auto r = resolve_policy(p, 100, 512);
  EXPECT_EQ(r.k, 50);
  EXPECT_EQ(r.w, 25);  // k/2
  p.kind = PolicyKind::Keyformer;
  EXPECT_EQ(resolve_policy(p, 100, 512).w, 15);  // 30% of k
  p.kind = PolicyKind::TOVA;
  r = resolve_policy(p, 100, 512);
  EXPECT_EQ(r.granularity, Granularity::Layer);
  EXPECT_EQ(r.w, 0);
  p.kind = PolicyKind::Sink;
  EXPECT_EQ(resolve_policy(p, 100, 512).s, 4);
  p.kind = PolicyKind::A2SF;
  r = resolve_policy(p, 100, 512);
  EXPECT_EQ(r.w, 0);
  EXPECT_FLOAT_EQ(r.params.alpha, 0.2f);
  p.kind = PolicyKind::Full;
  EXPECT_FALSE(resolve_policy(p, 100, 512).evicts);
  p.kind = PolicyKind::Ideal;
  EXPECT_FALSE(resolve_policy(p, 100, 512).evicts);
}

TEST(Params, BadSettingsAreRefused) {
  PolicyParams p;
  p.kind = PolicyKind::H2O;
  p.budget = Amount::parse("10", "b");
  p.window = Amount::parse("8", "w");
  p.sinks = 4;
  EXPECT_NE(error_of(p).find("policy.budget: 10 is smaller than the recent window (8) plus the sinks (4)"), std::string::npos)
      << error_of(p);
  p = {};
  p.kind = PolicyKind::A2SF;
  p.budget = Amount::parse("50%", "b");
  p.alpha = 1.5f;
  EXPECT_NE(error_of(p).find("policy.alpha: must be in [0, 1]"), std::string::npos);
  p.alpha = 0.2f;
  p.tau_init = 0;
  EXPECT_NE(error_of(p).find("policy.tau_init: must be > 0"), std::string::npos);
  p.tau_init = 1;
  p.tau_end = -1;
  EXPECT_NE(error_of(p).find("policy.tau_end: must be > 0"), std::string::npos);
  p = {};
  p.kind = PolicyKind::H2O;
  p.budget = Amount::parse("600", "b");
  EXPECT_NE(error_of(p).find("policy.budget: 600 tokens is larger than the context (512 tokens)"), std::string::npos);
  p.budget = Amount::parse("0%", "b");
  EXPECT_NE(error_of(p).find("keeps no token"), std::string::npos);
  EXPECT_THROW(parse_policy("lru"), Error);
  try {
    parse_policy("lru");
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("policy.name: unknown policy 'lru' (choose from full, window, sink, h2o"), std::string::npos);
  }
  EXPECT_THROW(Amount::parse("abc", "--budget"), Error);
  EXPECT_THROW(Amount::parse("150%", "--budget"), Error);
  EXPECT_THROW(Amount::parse("2.5", "--budget"), Error);
  EXPECT_THROW(parse_granularity("head"), Error);
  EXPECT_THROW(parse_noise("uniform"), Error);
}

TEST(Params, AmountsAreCountsOrPercentages) {
  EXPECT_EQ(Amount::parse("64", "x").of(1000), 64);
  EXPECT_EQ(Amount::parse("25%", "x").of(200), 50);
  EXPECT_EQ(Amount::parse("30%", "x").of(15), 5);  // 4.5 rounds to nearest (away from zero)
  EXPECT_EQ(Amount::parse("12.5%", "x").str(), "12.5%");
}

}  // namespace
}  // namespace kvscope
