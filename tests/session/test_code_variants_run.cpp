// The authors' code variants (docs/policies.md) in whole runs on a tiny
// checkpoint: the cache sizes they leave after the prompt and while
// generating, which the hand-set cases of tests/policy cannot show.
#include <gtest/gtest.h>

#include "session_fixture.h"

namespace kvscope {
namespace {

// The most slots any segment holds now.
int held(const Session& s) { return s.backend().kv().max_len(); }

TEST(CodeVariantsRun, KeyformerCodeKeepsKMinusOneAtEveryStep) {
  SessionConfig cfg = test::config(PolicyKind::Keyformer, "12", 6);
  cfg.policy.keyformer_variant = KeyformerVariant::Code;
  Session code(test::bundle("llama_gqa"), cfg);
  ASSERT_GT(code.prompt_length(), 12);
  EXPECT_EQ(code.policy().resolved().w, 3);  // 30% of 12, truncated
  code.prefill();
  EXPECT_EQ(held(code), 11);
  while (code.step()) EXPECT_EQ(held(code), 11);
  cfg.policy.keyformer_variant = KeyformerVariant::Paper;
  Session paper(test::bundle("llama_gqa"), cfg);
  paper.run_to_end();
  EXPECT_EQ(held(paper), 12);
}

TEST(CodeVariantsRun, A2sfLatestCompressesOnceThenGrows) {
  SessionConfig cfg = test::config(PolicyKind::A2SF, "8", 5);
  cfg.policy.window = Amount::parse("4", "window");
  cfg.policy.a2sf_revision = A2sfRevision::Latest;
  Session latest(test::bundle("llama_gqa"), cfg);
  latest.prefill();
  EXPECT_EQ(held(latest), 8);
  latest.run_to_end();
  EXPECT_EQ(held(latest), 8 + 5);
  cfg.policy.a2sf_revision = A2sfRevision::Earlier;
  Session earlier(test::bundle("llama_gqa"), cfg);
  earlier.run_to_end();
  EXPECT_EQ(held(earlier), 8);
}

}  // namespace
}  // namespace kvscope
