// The BPE model's vocabulary and merge tables: lookups both ways, the
// last-wins rules transformers' Python dicts give, growth past any reserve,
// and what they hold for a vocabulary of Gemma 3's size; a model built from
// them (as from a GGUF file) against the same model read from JSON.
#include <gtest/gtest.h>

#include <array>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/error.h"
#include "tiny_tokenizer.h"
#include "tokenizer/bpe_model.h"
#include "tokenizer/merge_table.h"
#include "tokenizer/token_table.h"

namespace kvscope::tok {
namespace {

TEST(TokenTable, FindsSpellingsAndIdsBothWays) {
  TokenTable t;
  EXPECT_EQ(t.max_id(), -1);
  EXPECT_FALSE(t.find("a"));
  EXPECT_FALSE(t.add("b", 7));
  EXPECT_FALSE(t.add("a", 2));
  EXPECT_FALSE(t.add("", 0));  // an empty spelling is a spelling
  EXPECT_EQ(t.find("a"), 2);
  EXPECT_EQ(t.find("b"), 7);
  EXPECT_EQ(t.find(""), 0);
  EXPECT_FALSE(t.find("ab"));
  EXPECT_EQ(t.spelling(7), "b");
  EXPECT_EQ(t.spelling(0), "");
  EXPECT_FALSE(t.spelling(1));  // a gap
  EXPECT_FALSE(t.spelling(8));
  EXPECT_FALSE(t.spelling(-1));
  EXPECT_EQ(t.max_id(), 7);
  EXPECT_EQ(t.size(), 3u);
}

TEST(TokenTable, ASpellingAddedAgainMovesToItsLastId) {
  TokenTable t;
  EXPECT_FALSE(t.add("x", 0));
  EXPECT_FALSE(t.add("y", 1));
  EXPECT_FALSE(t.add("x", 2));
  EXPECT_EQ(t.find("x"), 2);
  EXPECT_FALSE(t.spelling(0));
  EXPECT_EQ(t.spelling(2), "x");
  EXPECT_EQ(t.size(), 2u);
  EXPECT_FALSE(t.add("x", 2));  // the same pair again changes nothing
  EXPECT_EQ(t.size(), 2u);
}

TEST(TokenTable, AnIdThatHasASpellingIsNotGivenAnother) {
  TokenTable t;
  EXPECT_FALSE(t.add("x", 4));
  EXPECT_EQ(t.add("z", 4), std::optional<std::string>("x"));
  EXPECT_EQ(t.find("x"), 4);
  EXPECT_FALSE(t.find("z"));
}

TEST(TokenTable, GrowsPastItsReserveAndKeepsEveryEntry) {
  TokenTable t;
  t.reserve(10, 10);
  const int n = 100000;
  for (int i = 0; i < n; ++i) ASSERT_FALSE(t.add("tok" + std::to_string(i * 7919 % n), i));
  for (int i = 0; i < n; ++i) {
    ASSERT_EQ(t.find("tok" + std::to_string(i * 7919 % n)), i);
    ASSERT_EQ(t.spelling(i), "tok" + std::to_string(i * 7919 % n));
  }
  EXPECT_FALSE(t.find("tok" + std::to_string(n)));
}

TEST(TokenTable, AGemmaSizedVocabularyHoldsItsTextAndAFewBytesAToken) {
  const int n = 262144;
  TokenTable t;
  std::size_t text = 0;
  for (int i = 0; i < n; ++i) text += ("w" + std::to_string(i)).size();
  t.reserve(n, text);
  for (int i = 0; i < n; ++i) t.add("w" + std::to_string(i), i);
  // 8 bytes of span and 8 of index per token (2^19 slots of 4 bytes, half
  // full); a node-based map of std::string keys held ~80.
  EXPECT_LE(t.bytes_held(), text + 16u * n);
  EXPECT_EQ(t.find("w262143"), n - 1);
}

// (An id as high as 2^25 - 2 fits too, but its table of spans by id would
// take 256 MB here.)
TEST(TokenTable, IdsPastItsSlotsBitsThrow) {
  TokenTable t;
  EXPECT_THROW(t.add("over", (1 << 25) - 1), std::length_error);
  EXPECT_THROW(t.add("negative", -1), std::length_error);
  EXPECT_FALSE(t.find("over"));
}

TEST(MergeTable, FindsAPairsMergeAndRank) {
  const MergeTable m({{0, 1, 5}, {1, 2, 6}, {5, 2, 7}});
  ASSERT_NE(m.find(1, 2), nullptr);
  EXPECT_EQ(m.find(1, 2)->merged, 6);
  EXPECT_EQ(m.rank_of(m.find(1, 2)), 1u);
  EXPECT_EQ(m.rank_of(m.find(5, 2)), 2u);
  EXPECT_EQ(m.find(2, 1), nullptr);  // order matters
  EXPECT_EQ(m.find(0, 2), nullptr);
  EXPECT_EQ(MergeTable().find(0, 1), nullptr);
}

TEST(MergeTable, APairListedTwiceKeepsItsLastRank) {
  const MergeTable m({{0, 1, 5}, {1, 2, 6}, {0, 1, 5}});
  EXPECT_EQ(m.rank_of(m.find(0, 1)), 2u);
  EXPECT_EQ(m.rank_of(m.find(1, 2)), 1u);
}

TEST(MergeTable, HalfAMillionMergesAreAllFoundInABoundedTable) {
  std::vector<BpeMerge> merges;
  const int n = 514847;  // Gemma 3's tokenizer.json lists as many
  for (int r = 0; r < n; ++r) merges.push_back({r % 1021, r / 1021, r});
  const MergeTable m(merges);
  for (int r = 0; r < n; ++r) {
    const BpeMerge* found = m.find(r % 1021, r / 1021);
    ASSERT_NE(found, nullptr);
    ASSERT_EQ(found->merged, r);
    ASSERT_EQ(m.rank_of(found), static_cast<uint32_t>(r));
  }
  EXPECT_EQ(m.find(1020, n / 1021 + 1), nullptr);
  // 12 bytes a merge and under 11 of index (a table 3/8 to 3/4 full of
  // 4-byte slots); the node map it replaced held ~40.
  EXPECT_LE(m.bytes_held(), 23u * n);
}

// The document's stages without its model, and the model from parts.
Tokenizer with_parts(const nlohmann::json& doc, const std::vector<std::string>& vocab,
                     const std::vector<std::array<int, 3>>& merges, BpeOptions options = {}) {
  TokenTable t;
  for (std::size_t i = 0; i < vocab.size(); ++i) t.add(vocab[i], static_cast<int>(i));
  std::vector<BpeMerge> m;
  for (const auto& [l, r, merged] : merges) m.push_back({l, r, merged});
  nlohmann::json head = doc;
  head.erase("model");
  return Tokenizer::with_model(
      head.dump(), "parts.gguf",
      std::make_unique<BpeModel>("parts.gguf", std::move(options), std::move(t), MergeTable(std::move(m))));
}

TEST(BpeModelFromParts, EncodesAndDecodesAsTheSameModelReadFromJson) {
  const nlohmann::json vocab = {{"a", 0}, {"b", 1}, {"c", 2}, {"ab", 3}, {"bc", 4}, {"abc", 5}, {"<0x7A>", 6}};
  const nlohmann::json doc = test::tiny_doc(vocab, {"b c", "a b", "a bc"}, {{"byte_fallback", true}});
  const Tokenizer json = test::from_doc(doc);
  BpeOptions options;
  options.byte_fallback = true;
  const Tokenizer parts =
      with_parts(doc, {"a", "b", "c", "ab", "bc", "abc", "<0x7A>"}, {{1, 2, 4}, {0, 1, 3}, {0, 4, 5}}, options);
  for (const char* text : {"abc", "abcab", "cab", "bcbca", "zab", "aaz"}) {
    SCOPED_TRACE(text);
    EXPECT_EQ(parts.encode(text), json.encode(text));
    EXPECT_EQ(parts.decode(parts.encode(text)), json.decode(json.encode(text)));
  }
  EXPECT_EQ(parts.encode("abc"), std::vector<int>{5});
  EXPECT_EQ(parts.piece(4), "bc");
  EXPECT_EQ(parts.vocab_size(), 7);
}

TEST(BpeModelFromParts, ADocumentThatHasAModelTooIsRefused) {
  const nlohmann::json doc = test::tiny_doc({{"a", 0}}, nlohmann::json::array());
  try {
    (void)Tokenizer::with_model(doc.dump(), "both.gguf",
                                std::make_unique<BpeModel>("both.gguf", BpeOptions{}, TokenTable{}, MergeTable{}));
    FAIL() << "accepted two models";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("both.gguf"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("model"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kvscope::tok
