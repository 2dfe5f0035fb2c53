// tokenizer.json parsed with model.vocab and model.merges taken out while
// reading: what is taken, in which order, what the tree keeps, and that a
// tokenizer built that way equals one built from the whole tree.
#include <gtest/gtest.h>

#include <string>

#include "common/error.h"
#include "tiny_tokenizer.h"
#include "tokenizer/streamed_bpe.h"

namespace kvscope::tok {
namespace {

using nlohmann::json;

TEST(StreamedBpe, TakesTheVocabularyAndMergesInDocumentOrderAndLeavesTheRest) {
  const std::string text = R"({"version": "1.0", "added_tokens": [{"id": 0, "content": "b"}],
    "model": {"type": "BPE", "vocab": {"b": 0, "a": 1, "ab": 2}, "merges": ["a b", ["a", "b"]], "fuse_unk": true},
    "decoder": null})";
  StreamedBpe taken;
  const json doc = parse_streaming_bpe(text, taken);
  json want = json::parse(text);
  want["model"]["vocab"] = json::object();
  want["model"]["merges"] = json::array();
  EXPECT_EQ(doc, want);
  ASSERT_TRUE(taken.vocab);
  ASSERT_EQ(taken.vocab->size(), 3u);
  EXPECT_EQ((*taken.vocab)[0].first, "b");  // document order, not the tree's sorted keys
  EXPECT_EQ((*taken.vocab)[1], (std::pair<std::string, json>("a", 1)));
  EXPECT_EQ((*taken.vocab)[2], (std::pair<std::string, json>("ab", 2)));
  ASSERT_TRUE(taken.merges);
  EXPECT_EQ(*taken.merges, (std::vector<json>{"a b", json::array({"a", "b"})}));
}

TEST(StreamedBpe, OnlyTheModelsOwnMembersAreTaken) {
  const std::string text = R"({"vocab": {"x": 1}, "merges": ["x y"],
    "model": {"type": "BPE", "inner": {"vocab": {"y": 2}, "merges": []}}})";
  StreamedBpe taken;
  const json doc = parse_streaming_bpe(text, taken);
  EXPECT_EQ(doc, json::parse(text));
  EXPECT_FALSE(taken.vocab);
  EXPECT_FALSE(taken.merges);
}

TEST(StreamedBpe, ElementsOfAnyShapeAreTakenWhole) {
  // What a broken file puts there reaches the model's checks intact.
  const std::string text =
      R"({"model": {"vocab": {"a": [1, {"b": 2}], "c": {"d": []}, "e": null}, "merges": [[["x"]], {"y": 1}, 3]}})";
  StreamedBpe taken;
  (void)parse_streaming_bpe(text, taken);
  const json want = json::parse(text);
  ASSERT_TRUE(taken.vocab);
  ASSERT_EQ(taken.vocab->size(), 3u);
  EXPECT_EQ((*taken.vocab)[0].second, want["model"]["vocab"]["a"]);
  EXPECT_EQ((*taken.vocab)[1].second, want["model"]["vocab"]["c"]);
  EXPECT_EQ((*taken.vocab)[2].second, nullptr);
  ASSERT_TRUE(taken.merges);
  EXPECT_EQ(*taken.merges, (std::vector<json>(want["model"]["merges"].begin(), want["model"]["merges"].end())));
}

TEST(StreamedBpe, ALaterModelOrMemberReplacesAnEarlierOne) {
  StreamedBpe taken;
  (void)parse_streaming_bpe(
      R"({"model": {"vocab": {"a": 0}, "merges": ["a a"]}, "model": {"vocab": {"b": 1}, "vocab": {"c": 2}}})", taken);
  ASSERT_TRUE(taken.vocab);
  EXPECT_EQ(*taken.vocab, (std::vector<std::pair<std::string, json>>{{"c", 2}}));
  EXPECT_FALSE(taken.merges);  // the second model has none
}

TEST(StreamedBpe, BrokenJsonInsideTheVocabularyIsAParseError) {
  StreamedBpe taken;
  EXPECT_THROW((void)parse_streaming_bpe(R"({"model": {"vocab": {"a": 0,}}})", taken), json::exception);
  EXPECT_THROW((void)parse_streaming_bpe(R"({"model": {"merges": ["a b"})", taken), json::exception);
}

TEST(StreamedBpe, ASpellingListedTwiceKeepsItsLastIdAsInTheTree) {
  // The tree keeps the last of two equal keys; the taken list has both, in
  // order, and the model keeps the last.
  const std::string text = R"({"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "a": 2, "ab": 3},
    "merges": ["a b"]}, "added_tokens": [], "normalizer": null, "pre_tokenizer": null,
    "post_processor": null, "decoder": null})";
  const Tokenizer t = Tokenizer::from_json_string(text, "twice.json");
  EXPECT_EQ(t.token_id("a"), 2);
  EXPECT_EQ(t.encode("ab", false), std::vector<int>{3});
  EXPECT_EQ(t.encode("ba", false), (std::vector<int>{1, 2}));
  EXPECT_THROW((void)t.piece(0), Error);  // id 0 lost its spelling
}

// A tokenizer.json around a vocabulary given as text (so keys can repeat).
std::string with_vocab(const std::string& vocab) {
  return R"({"model": {"type": "BPE", "vocab": )" + vocab + R"(, "merges": []}})";
}

std::string load_error(const std::string& text) {
  try {
    (void)Tokenizer::from_json_string(text, "dup.json");
  } catch (const Error& e) {
    return e.what();
  }
  return "(loaded)";
}

TEST(StreamedBpe, AKeyListedTwiceCountsOnlyWithItsLastValue) {
  // Earlier copies are not checked (the tree never held them) ...
  EXPECT_EQ(Tokenizer::from_json_string(with_vocab(R"({"a": "x", "a": 0})"), "dup.json").token_id("a"), 0);
  EXPECT_EQ(Tokenizer::from_json_string(with_vocab(R"({"a": -1, "a": 0})"), "dup.json").token_id("a"), 0);
  const Tokenizer t = Tokenizer::from_json_string(with_vocab(R"({"a": 0, "b": 0, "a": 1})"), "dup.json");
  EXPECT_EQ(t.token_id("a"), 1);
  EXPECT_EQ(t.token_id("b"), 0);
  // ... and their ids do not count toward the vocabulary's size.
  EXPECT_EQ(Tokenizer::from_json_string(with_vocab(R"({"a": 5, "a": 0})"), "dup.json").vocab_size(), 1);
}

TEST(StreamedBpe, VocabularyErrorsComeInTheTreesOrder) {
  // The tree held members sorted by spelling; the first complaint is the
  // same one it gave.
  EXPECT_NE(load_error(with_vocab(R"({"b": 0, "a": 0})")).find("used by both \"a\" and \"b\""), std::string::npos);
  const std::string m = load_error(with_vocab(R"({"b": 0, "a": 0, "C": -1})"));
  EXPECT_NE(m.find("model.vocab[\"C\"]: id -1 out of range"), std::string::npos) << m;
}

TEST(StreamedBpe, AWrongValueInTheVocabularyIsNamedAsBefore) {
  const std::string text = R"({"model": {"type": "BPE", "vocab": {"a": 0, "b": [1]}, "merges": []}})";
  try {
    (void)Tokenizer::from_json_string(text, "bad/tokenizer.json");
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("bad/tokenizer.json"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("model.vocab[\"b\"]"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kvscope::tok
