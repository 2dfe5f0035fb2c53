// ExpectedAttention while decoding: the queries' moments grow with every
// call, so a prompt followed by m decode steps must score every slot as a
// prompt of those n + m tokens scores it at once (the same queries summed,
// the same keys and values, the same next position). Nothing is evicted
// (a budget of 100%), so both runs hold the same tokens; they differ only
// in rounding (decode's matrix-vector path against the prompt's matrix
// products), far below the tolerance.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "session_fixture.h"

namespace kvscope {
namespace {

void expect_same_scores(const Session& a, const Session& b, const std::string& when) {
  const KvLayout& lay = a.recorder().layout();
  for (int seg = 0; seg < lay.n_segments(); ++seg) {
    const auto& sa = a.backend().slot_stats(seg);
    const auto& sb = b.backend().slot_stats(seg);
    ASSERT_EQ(sa.size(), sb.size()) << when << ", segment " << seg;
    for (std::size_t j = 0; j < sa.size(); ++j)
      EXPECT_NEAR(sa[j], sb[j], 1e-4 * std::fabs(sb[j]) + 1e-9) << when << ", segment " << seg << " slot " << j;
  }
}

TEST(ExpectedDecode, StepsScoreAsOnePromptOfTheSameTokens) {
  for (const char* model : {"llama_gqa", "qwen2_fp16_sharded"}) {
    SCOPED_TRACE(model);
    // A budget of every token the run will hold: the prompt's and six more.
    SessionConfig probe = test::config(PolicyKind::Full, "100%", 6);
    Session measure(test::bundle(model), probe);
    measure.prefill();
    const int n = static_cast<int>(measure.tokens().size());
    SessionConfig stepped = test::config(PolicyKind::Expected, std::to_string(n + 6), 6);
    stepped.policy.sinks = 2;
    stepped.policy.extra["future_positions"] = 64;
    stepped.recording.metrics = false;
    Session s(test::bundle(model), stepped);
    s.prefill();
    const std::vector<int> prompt = s.tokens();
    for (int t = 0; t < 6; ++t) s.step();
    // The same tokens as one prompt: the prompt and the six it fed.
    ASSERT_EQ(s.tokens().size(), prompt.size() + 6);
    SessionConfig whole = stepped;
    whole.prompt.clear();
    whole.prompt_ids = s.tokens();
    whole.max_new_tokens = 1;
    whole.policy.budget = Amount{double(n + 6), false};
    Session w(test::bundle(model), whole);
    w.prefill();
    expect_same_scores(s, w, "after 6 steps");
    // And the scores moved with the steps: the prompt's alone differ.
    SessionConfig just_prompt = whole;
    just_prompt.prompt_ids = prompt;
    just_prompt.policy.budget = Amount{double(n), false};
    Session p(test::bundle(model), just_prompt);
    p.prefill();
    const auto& a = p.backend().slot_stats(0);
    const auto& b = s.backend().slot_stats(0);
    double moved = 0;
    for (std::size_t j = 0; j < a.size(); ++j) moved = std::max(moved, double(std::fabs(a[j] - b[j])));
    EXPECT_GT(moved, 1e-4) << "the decode steps changed no score";
  }
}

}  // namespace
}  // namespace kvscope
