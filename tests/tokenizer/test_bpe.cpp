// BPE merge order and the model options, on hand-built vocabularies. The
// expected tokens are what HF tokenizers 0.23 gives for the same files.
#include <gtest/gtest.h>

#include "common/error.h"
#include "tiny_tokenizer.h"

namespace kvscope::test {
namespace {

const nlohmann::json kAbc = {{"a", 0}, {"b", 1}, {"c", 2}, {"aa", 3}, {"ab", 4}, {"bc", 5}, {"abc", 6}, {"aaa", 7}};

TEST(BpeMerge, LowestRankFirstThenLeftmost) {
  Tokenizer t = from_doc(tiny_doc(kAbc, {"a a", "a b", "b c"}));
  EXPECT_EQ(pieces(t, "aaa"), (Strings{"aa", "a"}));  // leftmost pair of equal rank wins
  EXPECT_EQ(pieces(t, "aaaa"), (Strings{"aa", "aa"}));
  EXPECT_EQ(pieces(t, "aaaaa"), (Strings{"aa", "aa", "a"}));
  EXPECT_EQ(pieces(t, "abab"), (Strings{"ab", "ab"}));
  EXPECT_EQ(pieces(t, "abc"), (Strings{"ab", "c"}));  // "a b" outranks "b c"
  EXPECT_EQ(pieces(t, "cab"), (Strings{"c", "ab"}));
}

TEST(BpeMerge, RankDecidesNotPosition) {
  Tokenizer t = from_doc(tiny_doc(kAbc, {"b c", "a b"}));
  EXPECT_EQ(pieces(t, "abc"), (Strings{"a", "bc"}));
}

TEST(BpeMerge, MergesChainIntoLongerTokens) {
  Tokenizer t = from_doc(tiny_doc(kAbc, {"a b", "b c", "ab c"}));
  EXPECT_EQ(pieces(t, "abc"), (Strings{"abc"}));
  Tokenizer u = from_doc(tiny_doc(kAbc, {"b c", "a bc", "a b", "ab c"}));
  EXPECT_EQ(pieces(u, "abcabc"), (Strings{"abc", "abc"}));
}

TEST(BpeMerge, BothMergeSpellingsAreTheSame) {
  Tokenizer legacy = from_doc(tiny_doc(kAbc, {"a a", "a b", "b c"}));
  using nlohmann::json;
  Tokenizer pairs = from_doc(tiny_doc(kAbc, json::array({json::array({"a", "a"}), json::array({"a", "b"}),
                                                        json::array({"b", "c"})})));
  for (const char* s : {"aaa", "abcab", "cabbage", "bcbcaa"})
    EXPECT_EQ(legacy.encode(s, false), pairs.encode(s, false)) << s;
}

TEST(BpeMerge, RepeatedMergeKeepsItsLastRank) {
  // "a a" appears again after "a b": its rank is now the later one.
  Tokenizer t = from_doc(tiny_doc(kAbc, {"a a", "a b", "a a"}));
  EXPECT_EQ(pieces(t, "aab"), (Strings{"a", "ab"}));
}

TEST(BpeMerge, LongWordWithoutPreTokenizerIsFast) {
  // One 20k-character "word" (SentencePiece style): a heap, not rescans.
  Tokenizer t = from_doc(tiny_doc(kAbc, {"a a", "a b", "b c"}));
  std::string word;
  for (int i = 0; i < 10000; ++i) word += "ab";
  auto ids = t.encode(word, false);
  ASSERT_EQ(ids.size(), 10000u);
  EXPECT_EQ(ids.front(), 4);
  EXPECT_EQ(ids.back(), 4);
}

const nlohmann::json kBytes = {{"<unk>", 0}, {"a", 1}, {"<0xC3>", 2}, {"<0xA9>", 3}, {"<0xE4>", 4}};

TEST(BpeOptions, ByteFallbackSpellsUnknownCharactersAsBytes) {
  Tokenizer t = from_doc(tiny_doc(kBytes, nlohmann::json::array(),
                                  {{"unk_token", "<unk>"}, {"byte_fallback", true}, {"fuse_unk", true}}));
  // "é" has both bytes; "中" lacks two of its three, so it is unknown.
  EXPECT_EQ(pieces(t, "aéa中中a"), (Strings{"a", "<0xC3>", "<0xA9>", "a", "<unk>", "a"}));
}

TEST(BpeOptions, FuseUnk) {
  Tokenizer fused = from_doc(tiny_doc(kBytes, nlohmann::json::array(), {{"unk_token", "<unk>"}, {"fuse_unk", true}}));
  EXPECT_EQ(pieces(fused, "aéé中a"), (Strings{"a", "<unk>", "a"}));
  Tokenizer apart = from_doc(tiny_doc(kBytes, nlohmann::json::array(), {{"unk_token", "<unk>"}, {"fuse_unk", false}}));
  EXPECT_EQ(pieces(apart, "aéé中a"), (Strings{"a", "<unk>", "<unk>", "<unk>", "a"}));
}

TEST(BpeOptions, UnknownCharactersWithoutUnkTokenAreDropped) {
  Tokenizer t = from_doc(tiny_doc(kBytes, nlohmann::json::array()));
  EXPECT_EQ(pieces(t, "aéé中a"), (Strings{"a", "a"}));
}

TEST(BpeOptions, UnkTokenMissingFromVocabFailsWhenNeeded) {
  Tokenizer t = from_doc(tiny_doc(kBytes, nlohmann::json::array(), {{"unk_token", "<nope>"}}));
  EXPECT_EQ(pieces(t, "aa"), (Strings{"a", "a"}));
  try {
    t.encode("a中");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("model.unk_token"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("tiny/tokenizer.json"), std::string::npos) << e.what();
  }
}

const nlohmann::json kHello = {{"h", 0}, {"e", 1}, {"l", 2}, {"o", 3}, {"he", 4}, {"ll", 5}, {"hello", 6}, {"lo", 7}};

TEST(BpeOptions, IgnoreMergesTakesWholeWordsFromTheVocab) {
  Tokenizer with = from_doc(tiny_doc(kHello, {"h e", "l l"}, {{"ignore_merges", true}}));
  EXPECT_EQ(pieces(with, "hello"), (Strings{"hello"}));
  EXPECT_EQ(pieces(with, "hellohello"), (Strings{"he", "ll", "o", "he", "ll", "o"}));
  Tokenizer without = from_doc(tiny_doc(kHello, {"h e", "l l"}));
  EXPECT_EQ(pieces(without, "hello"), (Strings{"he", "ll", "o"}));
}

TEST(BpeOptions, ContinuingSubwordPrefix) {
  nlohmann::json vocab = {{"a", 0}, {"##b", 1}, {"##c", 2}, {"##bc", 3}};
  Tokenizer t = from_doc(tiny_doc(vocab, {"##b ##c"}, {{"continuing_subword_prefix", "##"}}));
  EXPECT_EQ(pieces(t, "abc"), (Strings{"a", "##bc"}));
}

TEST(BpeOptions, EndOfWordSuffix) {
  nlohmann::json vocab = {{"a", 0}, {"b", 1}, {"c</w>", 2}, {"bc</w>", 3}, {"ab", 4}};
  Tokenizer t = from_doc(tiny_doc(vocab, {"b c</w>", "a b"}, {{"end_of_word_suffix", "</w>"}}));
  EXPECT_EQ(pieces(t, "abc"), (Strings{"a", "bc</w>"}));
}

TEST(BpeOptions, DropoutZeroOrNullIsAccepted) {
  EXPECT_NO_THROW(from_doc(tiny_doc(kAbc, {"a b"}, {{"dropout", nullptr}})));
  EXPECT_NO_THROW(from_doc(tiny_doc(kAbc, {"a b"}, {{"dropout", 0.0}})));
  EXPECT_THROW(from_doc(tiny_doc(kAbc, {"a b"}, {{"dropout", 0.1}})), Error);
}

TEST(BpeOptions, CacheGivesTheSameAnswerTwice) {
  Tokenizer t = from_doc(tiny_doc(kAbc, {"a a", "a b", "b c"}));
  auto first = t.encode("aaab", false);
  EXPECT_EQ(t.encode("aaab", false), first);
}

}  // namespace
}  // namespace kvscope::test
