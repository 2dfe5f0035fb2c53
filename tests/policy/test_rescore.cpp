// Policies that rank by a function of their statistic, worked by hand:
// H2O's mean score (kvpress's ObservedAttention) and SnapKV's pooling; and
// the default window in tokens that shrinks to a small budget.
#include <gtest/gtest.h>

#include "common/error.h"
#include "kv_book_fixture.h"
#include "policy/selection.h"

namespace kvscope {
namespace {

using test::book_of;
using test::kept_positions;

TEST(Rescore, H2OMeanDividesByTheQueriesThatSawEachKey) {
  // 6 positions, newest 5: key j was seen by 6 - j queries. Sums favour
  // the early keys; the means favour 4 (1.5 / 2 = 0.75) and 2 (2.0 / 4).
  const KvBook b = book_of(6);
  const std::vector<float> S = {3.0f, 2.4f, 2.0f, 0.6f, 1.5f, 0.2f};
  PolicyParams p;
  p.kind = PolicyKind::H2O;
  p.budget = Amount{2, false};
  p.window = Amount{0, false};
  auto stats = [&](int) -> const std::vector<float>& { return S; };
  const auto sum = make_policy(resolve_policy(p, 6, 100));
  EXPECT_EQ(kept_positions(b, choose_slots(*sum, b, stats, 5, 0)), (std::vector<int>{0, 1}));
  p.h2o_score = H2oScore::Mean;
  const auto mean = make_policy(resolve_policy(p, 6, 100));
  const SlotChoice c = choose_slots(*mean, b, stats, 5, 0);
  // means: 0.5, 0.48, 0.5, 0.2, 0.75, 0.2 -> 4, then 2 (ties with 0 on 0.5: the newer wins)
  EXPECT_EQ(kept_positions(b, c), (std::vector<int>{2, 4}));
  EXPECT_FLOAT_EQ(c.score[0][4], 0.75f);  // the views show the score that ranked
  EXPECT_FLOAT_EQ(c.score[0][1], 0.48f);
}

TEST(Rescore, SnapKvPoolsOverTheCompetingSlotsWithZeroPadding) {
  // 10 positions, window 3 (7, 8, 9 protected), kernel 3, k = 5: two of
  // positions 0..6 stay, ranked by the mean of S over j-1..j+1 inside
  // [0, 7), counting outside as 0 and dividing by 3 always.
  const KvBook b = book_of(10);
  const std::vector<float> S = {0.0f, 0.0f, 0.9f, 0.0f, 0.0f, 0.3f, 0.6f, 5.0f, 5.0f, 5.0f};
  PolicyParams p;
  p.kind = PolicyKind::SnapKV;
  p.budget = Amount{5, false};
  p.window = Amount{3, false};
  p.extra["kernel"] = 3;
  const auto pol = make_policy(resolve_policy(p, 10, 100));
  EXPECT_EQ(pol->stat_rule(StepContext{}).last_rows, 3);
  const SlotChoice c = choose_slots(
      *pol, b, [&](int) -> const std::vector<float>& { return S; }, 9, 0);
  // pooled: 0, .3, .3, .3, .1, .3, .3 (6 has no right neighbour: the window's
  // 5.0 is not pooled in), then divided by the window's 3 queries (their
  // mean, kvpress's scale). Ties at 0.1 go to the newer: 6 and 5.
  EXPECT_EQ(kept_positions(b, c), (std::vector<int>{5, 6, 7, 8, 9}));
  EXPECT_FLOAT_EQ(c.score[0][6], 0.1f);
  EXPECT_FLOAT_EQ(c.score[0][4], 0.1f / 3);
  EXPECT_FLOAT_EQ(c.score[0][8], 5.0f);  // protected: its statistic as it is
  // Without pooling the two largest single scores stay.
  p.extra["kernel"] = 1;
  const auto plain = make_policy(resolve_policy(p, 10, 100));
  EXPECT_EQ(kept_positions(b, choose_slots(
                                  *plain, b, [&](int) -> const std::vector<float>& { return S; }, 9, 0)),
            (std::vector<int>{2, 6, 7, 8, 9}));
}

TEST(Rescore, SnapKvRefusesAnEvenKernel) {
  PolicyParams p;
  p.kind = PolicyKind::SnapKV;
  p.budget = Amount{50, true};
  p.extra["kernel"] = 4;
  try {
    make_policy(resolve_policy(p, 100, 1000));
    FAIL() << "an even kernel was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("policy.kernel"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("odd"), std::string::npos) << e.what();
  }
}

TEST(Rescore, ADefaultWindowInTokensShrinksToTheBudgetButASetOneDoesNot) {
  PolicyParams p;
  p.kind = PolicyKind::SnapKV;
  p.budget = Amount{20, false};
  EXPECT_EQ(resolve_policy(p, 100, 1000).w, 20);  // default 64, k = 20
  p.budget = Amount{80, false};
  EXPECT_EQ(resolve_policy(p, 100, 1000).w, 64);
  p.budget = Amount{20, false};
  p.sinks = 4;
  EXPECT_EQ(resolve_policy(p, 100, 1000).w, 16);
  p.window = Amount{64, false};
  EXPECT_THROW(resolve_policy(p, 100, 1000), Error);
}

TEST(Rescore, PyramidKvBudgetsFollowKvpresssFormula) {
  // q = 80, w = 8, mean m = 40, beta 20: min = 2, max = 78 >= q - w, so
  // max = 72 and min = 2m - 72 = 8; layers on a line from 72 down to 8.
  PolicyParams p;
  p.kind = PolicyKind::PyramidKV;
  p.budget = Amount{50, true};
  p.window = Amount{8, false};
  const auto pol = make_policy(resolve_policy(p, 80, 1000));
  EXPECT_EQ(pol->layer_budget(0, 2), 72);
  EXPECT_EQ(pol->layer_budget(1, 2), 8);
  EXPECT_EQ(pol->layer_budget(1, 3), 40);
  EXPECT_EQ(pol->layer_budget(0, 1), 72);
  // q = 162, w = 16, 30%: m = 48.6, min = 2.43 < w: every layer keeps round(m).
  p.budget = Amount{30, true};
  p.window = Amount{16, false};
  const auto flat = make_policy(resolve_policy(p, 162, 1000));
  for (int l = 0; l < 30; ++l) EXPECT_EQ(flat->layer_budget(l, 30), 49);
  // beta 2: min = 24.3, max = 72.9; layer 29 of 30 keeps round(24.3) = 24.
  p.extra["beta"] = 2;
  const auto steep = make_policy(resolve_policy(p, 162, 1000));
  EXPECT_EQ(steep->layer_budget(0, 30), 73);
  EXPECT_EQ(steep->layer_budget(29, 30), 24);
  // Halves round to even, as Python's round(): m = 12.5 (25% of 50) in the
  // fallback (min = 0.625 < w = 4) keeps 12, not 13.
  p.extra.erase("beta");
  p.budget = Amount{25, true};
  p.window = Amount{4, false};
  EXPECT_EQ(make_policy(resolve_policy(p, 50, 1000))->layer_budget(0, 4), 12);
}

}  // namespace
}  // namespace kvscope
