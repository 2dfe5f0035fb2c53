// The authors' code as an option (docs/policies.md, "Where kvscope follows
// the paper and where the authors' code differs"): Keyformer's released
// attention.py (`--keyformer-variant code`) and the latest A2SF revision
// (`--a2sf-revision latest`). Each Keyformer test pins one of the code's
// four departures from the paper: it checks the code's choice and that
// switching that one behaviour back to the paper's (the others kept)
// changes the choice, so a regression in any one of them fails its own
// test. Also the tie rule, for every scored policy.
#include <gtest/gtest.h>

#include <optional>

#include "common/error.h"
#include "kv_book_fixture.h"
#include "policy/selection.h"

namespace kvscope {
namespace {

using test::book_of;

// A book holding only `positions` (ascending) in every segment.
KvBook book_holding(const std::vector<int>& positions, int g = 1) {
  KvBook b = book_of(positions.back() + 1, g);
  for (int s = 0; s < b.layout().n_segments(); ++s) b.retain(s, positions);  // slot j holds position j
  return b;
}

PolicyParams keyformer(const std::string& budget, std::optional<std::string> window,
                       KeyformerVariant v = KeyformerVariant::Code) {
  PolicyParams p;
  p.kind = PolicyKind::Keyformer;
  p.keyformer_variant = v;
  p.budget = Amount::parse(budget, "budget");
  if (window) p.window = Amount::parse(*window, "window");
  return p;
}

std::vector<int> kept(const Policy& pol, const KvBook& b, const std::vector<float>& S, int step, int seg = 0) {
  const int newest = b.positions(seg).back();
  const auto c = choose_slots(pol, b, [&](int) -> const std::vector<float>& { return S; }, newest, step);
  std::vector<int> out;
  for (int j : c.keep[seg]) out.push_back(b.positions(seg)[j]);
  return out;
}

// The code's resolution with one quirk switched back to the paper's rule.
std::unique_ptr<Policy> without(const PolicyParams& p, int prompt_len, bool ChoiceQuirks::*quirk) {
  ResolvedPolicy r = resolve_policy(p, prompt_len, 1000);
  EXPECT_TRUE(r.quirks.*quirk);
  r.quirks.*quirk = false;
  return make_policy(r);
}

using Positions = std::vector<int>;

// (a) The budget counts a slot held for the next token: k - 1 stay, the
// newest w - 1 protected; and nothing goes until the sequence outgrows k.
TEST(KeyformerCode, ReservedSlotKeepsKMinusOne) {
  const KvBook b = book_of(10);
  const std::vector<float> S = {9, 8, 7, 6, 5, 4, 3, 2, 1, 0};  // older is better: only counts matter
  const PolicyParams p = keyformer("6", "2");
  const auto code = make_policy(resolve_policy(p, 10, 1000));
  // Position 9 protected, 8 just out of the window (dropped), 4 key tokens.
  EXPECT_EQ(kept(*code, b, S, 0), (Positions{0, 1, 2, 3, 9}));
  // Without the held slot: k = 6 stay, the window is 8 and 9.
  EXPECT_EQ(kept(*without(p, 10, &ChoiceQuirks::reserved_slot), b, S, 0), (Positions{0, 1, 2, 3, 8, 9}));

  // A cache of exactly k slots after the prompt's cut plus one generated
  // token: the code drops one more (the sequence is longer than k)...
  const KvBook held = book_holding({0, 1, 2, 3, 9, 10});
  const std::vector<float> T = {9, 8, 7, 6, 5, 4};
  EXPECT_EQ(kept(*code, held, T, 1), (Positions{0, 1, 2, 3, 10}));
  EXPECT_EQ(kept(*without(p, 10, &ChoiceQuirks::reserved_slot), held, T, 1), (Positions{0, 1, 2, 3, 9, 10}));
  // ...but a sequence no longer than k keeps everything, k slots included.
  const KvBook six = book_of(6);
  EXPECT_EQ(kept(*code, six, S, 0), (Positions{0, 1, 2, 3, 4, 5}));
}

// (b) The slot that has just left the window never competes: at the prompt
// the one just outside it goes whatever its score, and in generation each
// token sliding out is dropped, so the key tokens chosen after the prompt
// stay frozen.
TEST(KeyformerCode, SlotLeavingTheWindowIsDroppedNotCompared) {
  const PolicyParams p = keyformer("6", "2");
  const auto code = make_policy(resolve_policy(p, 10, 1000));
  const auto competing = without(p, 10, &ChoiceQuirks::window_exit_dropped);
  // Prompt: position 8 has the top score but sits just out of the window.
  const KvBook b = book_of(10);
  const std::vector<float> S = {5, 4, 3, 2, 1, 0.5f, 0.4f, 0.3f, 100, 0};
  EXPECT_EQ(kept(*code, b, S, 0), (Positions{0, 1, 2, 3, 9}));
  EXPECT_EQ(kept(*competing, b, S, 0), (Positions{0, 1, 2, 8, 9}));
  // Generation: key tokens 0..3 held; 9 leaves the window with a score
  // above all of them and still goes.
  const KvBook held = book_holding({0, 1, 2, 3, 9, 10});
  const std::vector<float> T = {5, 4, 3, 2, 100, 1};
  EXPECT_EQ(kept(*code, held, T, 1), (Positions{0, 1, 2, 3, 10}));
  EXPECT_EQ(kept(*competing, held, T, 1), (Positions{0, 1, 2, 9, 10}));
  // The rank column puts the dropped slot last in its unit.
  const auto c = choose_slots(*code, held, [&](int) -> const std::vector<float>& { return T; }, 10, 1);
  EXPECT_EQ(c.rank[0][4], 6);
  // Shared decisions (layer granularity, two KV heads) follow the same rule.
  PolicyParams shared = p;
  shared.granularity = Granularity::Layer;
  const auto layer = make_policy(resolve_policy(shared, 10, 1000));
  const KvBook two = book_holding({0, 1, 2, 3, 9, 10}, 2);
  EXPECT_EQ(kept(*layer, two, T, 1, 0), (Positions{0, 1, 2, 3, 10}));
  EXPECT_EQ(kept(*layer, two, T, 1, 1), (Positions{0, 1, 2, 3, 10}));
}

// (c) A recent window of 0 never evicts, at the prompt or after.
TEST(KeyformerCode, ZeroWindowNeverEvicts) {
  const PolicyParams p = keyformer("4", "0");
  const auto code = make_policy(resolve_policy(p, 10, 1000));
  const KvBook b = book_of(10);
  const std::vector<float> S = {9, 8, 7, 6, 5, 4, 3, 2, 1, 0};
  EXPECT_EQ(kept(*code, b, S, 0).size(), 10u);
  EXPECT_EQ(kept(*code, book_of(14), std::vector<float>(14, 1.0f), 4).size(), 14u);
  // Evicting as usual, it keeps k - 1 by score.
  EXPECT_EQ(kept(*without(p, 10, &ChoiceQuirks::zero_window_holds), b, S, 0), (Positions{0, 1, 2}));
  // The default window, 30% truncated, is 0 for a budget under 4 tokens.
  const auto small = resolve_policy(keyformer("3", std::nullopt), 10, 1000);
  EXPECT_EQ(small.w, 0);
  EXPECT_EQ(kept(*make_policy(small), b, S, 0).size(), 10u);
}

// (d) Percentages are truncated, as int() does in the code, not rounded.
TEST(KeyformerCode, PercentagesAreTruncated) {
  // 50% of a 17-token prompt: 8.5 -> 8 (the paper's reading: 9); the
  // default window, 30% of 9: 2.7 -> 2 (3).
  EXPECT_EQ(resolve_policy(keyformer("50%", std::nullopt), 17, 1000).k, 8);
  EXPECT_EQ(resolve_policy(keyformer("50%", std::nullopt, KeyformerVariant::Paper), 17, 1000).k, 9);
  EXPECT_EQ(resolve_policy(keyformer("9", std::nullopt), 17, 1000).w, 2);
  EXPECT_EQ(resolve_policy(keyformer("9", std::nullopt, KeyformerVariant::Paper), 17, 1000).w, 3);
  EXPECT_EQ(resolve_policy(keyformer("9", "50%"), 17, 1000).w, 4);
  EXPECT_EQ(resolve_policy(keyformer("9", "50%", KeyformerVariant::Paper), 17, 1000).w, 5);
  // Counts are taken as they are.
  EXPECT_EQ(resolve_policy(keyformer("9", "3"), 17, 1000).w, 3);
}

// The paper's rules stay the default and untouched by the variant's code.
TEST(KeyformerCode, PaperVariantIsTheDefaultAndUnchanged) {
  EXPECT_EQ(PolicyParams{}.keyformer_variant, KeyformerVariant::Paper);
  const PolicyParams p = keyformer("6", "2", KeyformerVariant::Paper);
  const ResolvedPolicy r = resolve_policy(p, 10, 1000);
  EXPECT_FALSE(r.quirks.reserved_slot || r.quirks.window_exit_dropped || r.quirks.zero_window_holds ||
               r.quirks.prompt_only);
  const auto paper = make_policy(r);
  const std::vector<float> S = {5, 4, 3, 2, 1, 0.5f, 0.4f, 0.3f, 100, 0};
  EXPECT_EQ(kept(*paper, book_of(10), S, 0), (Positions{0, 1, 2, 3, 8, 9}));
  // In generation a slot leaving the window competes with the key tokens.
  EXPECT_EQ(kept(*paper, book_holding({0, 1, 2, 3, 8, 9, 10}), std::vector<float>{5, 4, 3, 2, 100, 0.1f, 1}, 1),
            (Positions{0, 1, 2, 8, 9, 10}));
  // A zero window evicts, filling the budget by score.
  EXPECT_EQ(kept(*make_policy(resolve_policy(keyformer("4", "0", KeyformerVariant::Paper), 10, 1000)), book_of(10),
                 std::vector<float>{9, 8, 7, 6, 5, 4, 3, 2, 1, 0}, 0),
            (Positions{0, 1, 2, 3}));
}

TEST(KeyformerCode, NamesAndRefusals) {
  EXPECT_EQ(parse_keyformer_variant("code"), KeyformerVariant::Code);
  EXPECT_STREQ(keyformer_variant_name(KeyformerVariant::Paper), "paper");
  try {
    parse_keyformer_variant("released");
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("policy.keyformer_variant"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("paper, code"), std::string::npos) << e.what();
  }
  // With a window the code keeps k - 1: a budget of 1 would keep nothing.
  try {
    resolve_policy(keyformer("1", "1"), 10, 1000);
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("policy.budget"), std::string::npos) << e.what();
  }
  // Other policies ignore the setting (the CLI refuses the flag for them).
  PolicyParams h = keyformer("6", "2");
  h.kind = PolicyKind::H2O;
  const ResolvedPolicy r = resolve_policy(h, 10, 1000);
  EXPECT_FALSE(r.quirks.reserved_slot);
}

PolicyParams a2sf(const std::string& budget, A2sfRevision rev, std::optional<std::string> window = {}) {
  PolicyParams p;
  p.kind = PolicyKind::A2SF;
  p.a2sf_revision = rev;
  p.budget = Amount::parse(budget, "budget");
  if (window) p.window = Amount::parse(*window, "window");
  return p;
}

// The latest A2SF code compresses once, after the prompt, keeping its 16
// newest tokens, and drops nothing while generating.
TEST(A2sfRevisions, LatestCompressesOnceAfterThePrompt) {
  EXPECT_EQ(PolicyParams{}.a2sf_revision, A2sfRevision::Earlier);
  const ResolvedPolicy r = resolve_policy(a2sf("20", A2sfRevision::Latest), 40, 1000);
  EXPECT_EQ(r.w, 16);
  EXPECT_TRUE(r.quirks.prompt_only);
  const ResolvedPolicy earlier = resolve_policy(a2sf("20", A2sfRevision::Earlier), 40, 1000);
  EXPECT_EQ(earlier.w, 0);
  EXPECT_FALSE(earlier.quirks.prompt_only);

  std::vector<float> S(40);
  for (int j = 0; j < 40; ++j) S[j] = static_cast<float>(40 - j);
  const auto latest = make_policy(r);
  // After the prompt: 16 newest (24..39) and the 4 best of the rest.
  Positions want = {0, 1, 2, 3};
  for (int j = 24; j < 40; ++j) want.push_back(j);
  EXPECT_EQ(kept(*latest, book_of(40), S, 0), want);
  // Generating: the cache grows past k and nothing goes.
  EXPECT_EQ(kept(*latest, book_of(25), std::vector<float>(25, 1.0f), 3).size(), 25u);
  // The earlier revision evicts at every step.
  EXPECT_EQ(kept(*make_policy(earlier), book_of(25), S, 3).size(), 20u);
  // A streaming prefill's choices come before the prompt's end, so they evict.
  EXPECT_EQ(kept(*latest, book_of(25), S, streaming_prefill_step(24)).size(), 20u);
  // Its window does not fit a budget under 16, unless one is given.
  EXPECT_THROW(resolve_policy(a2sf("8", A2sfRevision::Latest), 40, 1000), Error);
  EXPECT_EQ(resolve_policy(a2sf("8", A2sfRevision::Latest, "4"), 40, 1000).w, 4);
  EXPECT_EQ(parse_a2sf_revision("latest"), A2sfRevision::Latest);
  EXPECT_STREQ(a2sf_revision_name(A2sfRevision::Earlier), "earlier");
}

// The tie rule: when statistics tie at the k-th place, the newer slot stays,
// for every scored policy, in per-head and shared decisions alike.
TEST(TieRule, NewerSlotWinsForEveryScoredPolicy) {
  // Positions 0..5, window 1 (position 5), budget 3: position 0 is best,
  // then 1 and 3 tie for the last place; 3 is newer and stays.
  const std::vector<float> S = {0.9f, 0.5f, 0.1f, 0.5f, 0.2f, 0.0f};
  struct Case {
    const char* what;
    PolicyParams p;
    Positions want;
  };
  auto params = [](PolicyKind k) {
    PolicyParams p;
    p.kind = k;
    p.budget = Amount::parse("3", "budget");
    p.window = Amount::parse("1", "window");
    return p;
  };
  std::vector<Case> cases = {
      {"h2o", params(PolicyKind::H2O), {0, 3, 5}},
      {"tova (layer)", params(PolicyKind::TOVA), {0, 3, 5}},
      {"keyformer", params(PolicyKind::Keyformer), {0, 3, 5}},
      // The code keeps k - 1 = 2: its window of 1 is the held slot, so the
      // newest token goes too.
      {"keyformer code", keyformer("3", "1"), {0, 3}},
      {"a2sf", params(PolicyKind::A2SF), {0, 3, 5}},
      {"a2sf latest", a2sf("3", A2sfRevision::Latest, "1"), {0, 3, 5}},
  };
  PolicyParams model = params(PolicyKind::H2O);
  model.granularity = Granularity::Model;
  cases.push_back({"h2o (model)", model, {0, 3, 5}});
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    const auto pol = make_policy(resolve_policy(c.p, 6, 1000));
    const KvBook b = book_of(6, 2);
    EXPECT_EQ(kept(*pol, b, S, 0, 0), c.want);
    EXPECT_EQ(kept(*pol, b, S, 0, 1), c.want);
  }
  // ideal evicts nothing; its mask marks the same top k.
  const auto ideal = make_policy(resolve_policy(params(PolicyKind::Ideal), 6, 1000));
  const auto c = choose_slots(*ideal, book_of(6), [&](int) -> const std::vector<float>& { return S; }, 5, 0);
  EXPECT_EQ(c.state[0][1], kDropped);
  EXPECT_EQ(c.state[0][3], kKept);
}

}  // namespace
}  // namespace kvscope
