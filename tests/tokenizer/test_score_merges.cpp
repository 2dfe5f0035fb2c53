// Merges ranked by a SentencePiece vocabulary's scores on demand
// (ScoreMerges) against the list transformers' generate_merges writes out,
// built here from its definition: every split of a token into two tokens,
// ordered within a token by the pieces' ids, then all by (score, left
// length, right length) descending with ties in that order, tokens visited
// in the order of their first listing with the id (and score) of the last.
// Both models must split every word into the same ids, on vocabularies with
// tied scores, -0 and 0, spellings listed twice and multi-byte characters,
// ordered by scores and (Gemma) by position.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <cstdint>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "tokenizer/bpe_model.h"
#include "tokenizer/merge_table.h"
#include "tokenizer/score_merges.h"
#include "tokenizer/token_table.h"
#include "tokenizer/utf8.h"

namespace kvscope::tok {
namespace {

TokenTable table_of(const std::vector<std::string>& tokens) {
  TokenTable t;
  for (std::size_t i = 0; i < tokens.size(); ++i) t.add(tokens[i], static_cast<int>(i));
  return t;
}

double score_of(const std::vector<double>& scores, int id) { return scores.empty() ? -double(id) : scores[id]; }

// transformers' generate_merges, written out.
std::vector<BpeMerge> listed_merges(const std::vector<std::string>& tokens, const std::vector<double>& scores) {
  const TokenTable vocab = table_of(tokens);
  struct Merge {
    BpeMerge m;
    double score;
    std::size_t left_chars, right_chars;
  };
  std::vector<Merge> all;
  std::vector<bool> visited(tokens.size(), false);
  for (const std::string& t : tokens) {
    const int last = *vocab.find(t);
    if (visited[last]) continue;
    visited[last] = true;
    std::vector<std::size_t> starts;
    for (std::size_t at = 0; at < t.size();) {
      starts.push_back(at);
      utf8::decode(t, at);
    }
    std::vector<Merge> local;
    for (std::size_t k = 1; k < starts.size(); ++k) {
      const auto l = vocab.find(t.substr(0, starts[k])), r = vocab.find(t.substr(starts[k]));
      if (l && r) local.push_back({{*l, *r, last}, score_of(scores, last), k, starts.size() - k});
    }
    std::stable_sort(local.begin(), local.end(), [](const Merge& a, const Merge& b) {
      return a.m.left != b.m.left ? a.m.left < b.m.left : a.m.right < b.m.right;
    });
    all.insert(all.end(), local.begin(), local.end());
  }
  std::stable_sort(all.begin(), all.end(), [](const Merge& a, const Merge& b) {
    if (a.score != b.score) return a.score > b.score;
    if (a.left_chars != b.left_chars) return a.left_chars > b.left_chars;
    return a.right_chars > b.right_chars;
  });
  std::vector<BpeMerge> out;
  for (const Merge& m : all) out.push_back(m.m);
  return out;
}

BpeOptions spm_options() {
  BpeOptions o;
  o.unk_token = "<unk>";
  o.fuse_unk = true;
  o.byte_fallback = true;
  return o;
}

// Random tokens over a few characters of 1 to 3 bytes, every character a
// token but two: "x" has a byte token only, "y" neither (it is <unk>). Some
// tokens hold the byte token or <unk> (so they merge too), one spelling is
// empty, and some spellings are listed two or three times.
std::vector<std::string> random_vocabulary(std::mt19937& rng, int extra) {
  const std::vector<std::string> chars = {"a", "b", "c", "d", "\xE2\x96\x81", "\xC3\xA9", "\xE4\xB8\xAD"};
  const std::vector<std::string> pieces = {"a",      "b",    "c", "d", "\xE2\x96\x81", "\xC3\xA9", "\xE4\xB8\xAD",
                                           "<0x78>", "<unk>"};
  std::vector<std::string> tokens = {"<unk>", "<0x78>", ""};
  for (const auto& c : chars) tokens.push_back(c);
  for (int i = 0; i < extra; ++i) {
    std::string t;
    const int len = 2 + int(rng() % 5);
    for (int k = 0; k < len; ++k) t += rng() % 8 == 0 ? pieces[7 + rng() % 2] : chars[rng() % chars.size()];
    tokens.push_back(t);
    if (rng() % 12 == 0) {  // listed again, now and then a third time
      const std::string again = tokens[3 + rng() % (tokens.size() - 3)];
      tokens.push_back(again);
      if (rng() % 3 == 0) tokens.push_back(again);
    }
  }
  return tokens;
}

std::vector<double> random_scores(std::mt19937& rng, std::size_t n) {
  // Few distinct values, so that most merges tie on the score.
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> values = {-inf, -3.5, -2.0, -1.0, -0.0, 0.0, 1.25, inf};
  std::vector<double> s(n);
  for (auto& v : s) v = values[rng() % values.size()];
  return s;
}

std::string random_word(std::mt19937& rng) {
  const std::vector<std::string> chars = {"a", "b", "c", "d", "x", "y", "\xE2\x96\x81", "\xC3\xA9", "\xE4\xB8\xAD"};
  std::string w;
  const int len = 1 + int(rng() % 14);
  for (int k = 0; k < len; ++k) w += chars[rng() % chars.size()];
  return w;
}

void expect_same_splits(const std::vector<std::string>& tokens, const std::vector<double>& scores, std::mt19937& rng) {
  const BpeModel listed("listed.gguf", spm_options(), table_of(tokens), MergeTable(listed_merges(tokens, scores)));
  const BpeModel ranked("ranked.gguf", spm_options(), table_of(tokens),
                        ScoreMerges::of_listing(tokens, table_of(tokens), scores));
  for (int i = 0; i < 400; ++i) {
    const std::string word = random_word(rng);
    std::vector<int> a, b;
    listed.tokenize(word, a);
    ranked.tokenize(word, b);
    ASSERT_EQ(a, b) << "word '" << word << "'";
  }
  // Every token spelled out merges back as the listed merges make it.
  for (const std::string& t : tokens) {
    if (t == "<unk>" || t == "<0x78>" || t.empty()) continue;
    std::vector<int> a, b;
    listed.tokenize(t, a);
    ranked.tokenize(t, b);
    ASSERT_EQ(a, b) << "token '" << t << "'";
  }
}

TEST(ScoreMerges, SplitWordsAsTheListedMergesOrderedByScore) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 40; ++trial) {
    const auto tokens = random_vocabulary(rng, 30 + trial * 5);
    expect_same_splits(tokens, random_scores(rng, tokens.size()), rng);
  }
}

TEST(ScoreMerges, SplitWordsAsTheListedMergesOrderedByPosition) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 40; ++trial) expect_same_splits(random_vocabulary(rng, 30 + trial * 5), {}, rng);
}

TEST(ScoreMerges, RankOrdersByScoreThenLengthsThenListingThenIds) {
  using R = ScoreMerges::Rank;
  EXPECT_TRUE((R{2.0, 1, 1, 9, 9, 9} < R{1.0, 5, 5, 0, 0, 0}));  // a higher score first
  EXPECT_TRUE((R{1.0, 3, 1, 9, 9, 9} < R{1.0, 2, 5, 0, 0, 0}));  // then a longer left piece
  EXPECT_TRUE((R{1.0, 2, 4, 9, 9, 9} < R{1.0, 2, 3, 0, 0, 0}));  // then a longer right piece
  EXPECT_TRUE((R{1.0, 2, 3, 4, 9, 9} < R{1.0, 2, 3, 5, 0, 0}));  // then the earlier listing
  EXPECT_TRUE((R{1.0, 2, 3, 4, 1, 9} < R{1.0, 2, 3, 4, 2, 0}));  // then the pieces' ids
  EXPECT_TRUE((R{1.0, 2, 3, 4, 1, 1} < R{1.0, 2, 3, 4, 1, 2}));
  EXPECT_FALSE((R{-0.0, 1, 1, 1, 1, 1} < R{0.0, 1, 1, 1, 1, 1}));  // -0 ties with 0
  EXPECT_FALSE((R{0.0, 1, 1, 1, 1, 1} < R{-0.0, 1, 1, 1, 1, 1}));
}

TEST(ScoreMerges, FindsAMergeOnlyWhereTheConcatenationIsAToken) {
  const std::vector<std::string> tokens = {"a", "b", "ab", "c", "abc"};
  const TokenTable vocab = table_of(tokens);
  const ScoreMerges m = ScoreMerges::of_listing(tokens, vocab, {0.0, 0.0, -1.0, 0.0, -2.0});
  const auto ab = m.find(vocab, 0, 1);
  ASSERT_TRUE(ab);
  EXPECT_EQ(ab->merged, 2);
  EXPECT_EQ(ab->rank.score, -1.0);
  ASSERT_TRUE(m.find(vocab, 2, 3));
  EXPECT_EQ(m.find(vocab, 2, 3)->merged, 4);
  EXPECT_FALSE(m.find(vocab, 1, 0));   // "ba"
  EXPECT_FALSE(m.find(vocab, 1, 3));   // "bc"
  EXPECT_FALSE(m.find(vocab, 0, 99));  // no such id
  EXPECT_THROW(ScoreMerges::of_listing(tokens, vocab, {0.0, 1.0}), std::invalid_argument);  // not one per token
}

// A spelling listed again ranks where it was listed first, with the id and
// the score of its last listing (dict(zip(tokens, scores)) in the order of
// the first keys).
TEST(ScoreMerges, ARepeatedSpellingRanksByItsFirstListing) {
  const std::vector<std::string> tokens = {"a", "b", "c", "bc", "ab", "bc"};
  const TokenTable vocab = table_of(tokens);
  const ScoreMerges m = ScoreMerges::of_listing(tokens, vocab, {0, 0, 0, 1.0, 5.0, -1.0});
  const auto bc = m.find(vocab, 1, 2);
  ASSERT_TRUE(bc);
  EXPECT_EQ(bc->merged, 5);              // the last id
  EXPECT_EQ(bc->rank.score, -1.0);       // and its score
  EXPECT_EQ(bc->rank.first_listed, 3u);  // listed first at 3
  EXPECT_EQ(m.find(vocab, 0, 1)->rank.first_listed, 4u);
}

}  // namespace
}  // namespace kvscope::tok
