// Bad tokenizer.json files: every one must throw kvscope::Error whose message
// names the file and the field, and nothing may crash.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "common/error.h"
#include "tiny_tokenizer.h"

namespace kvscope::test {
namespace {

const nlohmann::json kVocab = {{"a", 0}, {"b", 1}, {"ab", 2}};

// Runs `load` and checks the message contains every expected fragment.
template <typename Fn>
void expect_error(Fn load, std::initializer_list<std::string> fragments) {
  try {
    load();
    ADD_FAILURE() << "expected kvscope::Error";
  } catch (const Error& e) {
    const std::string msg = e.what();
    for (const std::string& f : fragments) EXPECT_NE(msg.find(f), std::string::npos) << "missing \"" << f << "\" in: " << msg;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected kvscope::Error, got " << e.what();
  }
}

void expect_doc_error(const nlohmann::json& doc, std::initializer_list<std::string> fragments) {
  expect_error([&] { from_doc(doc, "bad/tokenizer.json"); }, fragments);
  expect_error([&] { from_doc(doc, "bad/tokenizer.json"); }, {"bad/tokenizer.json"});
}

TEST(BadInput, MissingFile) {
  expect_error([] { Tokenizer::load("/nonexistent/dir/tokenizer.json"); }, {"/nonexistent/dir/tokenizer.json", "cannot open"});
}

TEST(BadInput, DirectoryInsteadOfFile) {
  auto dir = std::filesystem::temp_directory_path();
  expect_error([&] { Tokenizer::load(dir); }, {dir.string(), "directory"});
}

TEST(BadInput, InvalidJson) {
  expect_error([] { Tokenizer::from_json_string("{\"model\": ", "broken.json"); }, {"broken.json", "invalid JSON"});
  expect_error([] { Tokenizer::from_json_string("[1, 2]", "array.json"); }, {"array.json", "JSON object"});
  expect_error([] { Tokenizer::from_json_string("", "empty.json"); }, {"empty.json", "invalid JSON"});
}

TEST(BadInput, InvalidJsonFileOnDisk) {
  auto path = std::filesystem::temp_directory_path() / "kvscope_bad_tokenizer.json";
  std::ofstream(path) << "{ not json";
  expect_error([&] { Tokenizer::load(path); }, {path.string(), "invalid JSON"});
  std::filesystem::remove(path);
}

TEST(BadInput, MissingModel) {
  nlohmann::json doc = tiny_doc(kVocab, {"a b"});
  doc.erase("model");
  expect_doc_error(doc, {"model", "missing"});
}

TEST(BadInput, ModelWithoutType) {
  nlohmann::json doc = tiny_doc(kVocab, {"a b"});
  doc["model"].erase("type");
  EXPECT_NO_THROW(from_doc(doc));  // old files: a model with merges is BPE
  doc["model"].erase("merges");
  expect_doc_error(doc, {"model.type", "missing"});
}

TEST(BadInput, UnknownModelType) {
  nlohmann::json doc = tiny_doc(kVocab, {"a b"});
  doc["model"]["type"] = "Unigram";
  expect_doc_error(doc, {"model.type", "Unigram"});
}

TEST(BadInput, ModelFieldsOfTheWrongKind) {
  expect_doc_error(tiny_doc(kVocab, "a b"), {"model.merges", "expected an array"});
  expect_doc_error(tiny_doc({{"a", "zero"}}, nlohmann::json::array()), {"model.vocab[\"a\"]", "integer"});
  expect_doc_error(tiny_doc({{"a", -3}}, nlohmann::json::array()), {"model.vocab[\"a\"]", "out of range"});
  expect_doc_error(tiny_doc({{"a", 0}, {"b", 0}}, nlohmann::json::array()), {"model.vocab", "used by both"});
  expect_doc_error(tiny_doc(kVocab, {"a b"}, {{"dropout", 0.5}}), {"model.dropout"});
  expect_doc_error(tiny_doc(kVocab, {"a b"}, {{"byte_fallback", "yes"}}), {"model.byte_fallback", "true or false"});
}

TEST(BadInput, UnknownPreTokenizer) {
  nlohmann::json doc = tiny_doc(kVocab, {"a b"});
  doc["pre_tokenizer"] = {{"type", "Sequence"}, {"pretokenizers", {{{"type", "ByteLevel"}}, {{"type", "Fancy"}}}}};
  expect_doc_error(doc, {"pre_tokenizer.pretokenizers[1].type", "Fancy"});
}

TEST(BadInput, UnknownNormalizerDecoderPostProcessor) {
  nlohmann::json doc = tiny_doc(kVocab, {"a b"});
  doc["normalizer"] = {{"type", "Precompiled"}, {"precompiled_charsmap", "AAAA"}};
  expect_doc_error(doc, {"normalizer.type", "Precompiled"});
  doc = tiny_doc(kVocab, {"a b"});
  doc["decoder"] = {{"type", "WordPiece"}};
  expect_doc_error(doc, {"decoder.type", "WordPiece"});
  doc = tiny_doc(kVocab, {"a b"});
  doc["post_processor"] = {{"type", "Mystery"}};
  expect_doc_error(doc, {"post_processor.type", "Mystery"});
  doc = tiny_doc(kVocab, {"a b"});
  doc["normalizer"] = {{"kind", "NFC"}};
  expect_doc_error(doc, {"normalizer.type", "missing"});
}

TEST(BadInput, BadRegexAndBehavior) {
  nlohmann::json doc = tiny_doc(kVocab, {"a b"});
  doc["pre_tokenizer"] = {{"type", "Split"}, {"pattern", {{"Regex", "(a"}}}, {"behavior", "Isolated"}, {"invert", false}};
  expect_doc_error(doc, {"pre_tokenizer.pattern.Regex", "does not compile"});
  doc["pre_tokenizer"] = {{"type", "Split"}, {"pattern", {{"Regex", "a"}}}, {"behavior", "Sideways"}, {"invert", false}};
  expect_doc_error(doc, {"pre_tokenizer.behavior", "Sideways"});
  doc["pre_tokenizer"] = {{"type", "Split"}, {"pattern", {{"Glob", "a"}}}, {"behavior", "Isolated"}};
  expect_doc_error(doc, {"pre_tokenizer.pattern", "String"});
  doc["pre_tokenizer"] = {{"type", "Metaspace"}, {"replacement", "ab"}};
  expect_doc_error(doc, {"pre_tokenizer.replacement", "one character"});
}

TEST(BadInput, MergeReferringToUnknownToken) {
  expect_doc_error(tiny_doc(kVocab, {"a b", "a x"}), {"model.merges[1]", "\"x\"", "not in model.vocab"});
  expect_doc_error(tiny_doc(kVocab, {"b a"}), {"model.merges[0]", "\"ba\"", "not in model.vocab"});
}

TEST(BadInput, MalformedMergeEntry) {
  expect_doc_error(tiny_doc(kVocab, {"a b", "ab"}), {"model.merges[1]", "expected \"a b\" or [\"a\",\"b\"]"});
  expect_doc_error(tiny_doc(kVocab, {"a b c"}), {"model.merges[0]", "expected \"a b\""});
  expect_doc_error(tiny_doc(kVocab, nlohmann::json::array({nlohmann::json::array({"a", "b", "c"})})),
                   {"model.merges[0]"});
  expect_doc_error(tiny_doc(kVocab, nlohmann::json::array({12})), {"model.merges[0]"});
}

nlohmann::json added(int id, const std::string& content, bool special = true) {
  return {{"id", id},         {"content", content}, {"single_word", false}, {"lstrip", false},
          {"rstrip", false}, {"normalized", false}, {"special", special}};
}

TEST(BadInput, AddedTokenIds) {
  nlohmann::json doc = tiny_doc(kVocab, {"a b"});
  doc["added_tokens"] = nlohmann::json::array({added(1, "<s>")});  // id 1 is the model's "b"
  expect_doc_error(doc, {"added_tokens[0].id", "collides", "\"b\""});
  doc["added_tokens"] = nlohmann::json::array({added(-1, "<s>")});
  expect_doc_error(doc, {"added_tokens[0].id", "out of range"});
  doc["added_tokens"] = nlohmann::json::array({added(1 << 30, "<s>")});
  expect_doc_error(doc, {"added_tokens[0].id", "out of range"});
  doc["added_tokens"] = {added(3, "<s>"), added(3, "</s>")};
  expect_doc_error(doc, {"added_tokens[1].id", "two added tokens"});
  doc["added_tokens"] = nlohmann::json::array({added(7, "ab")});  // "ab" is model id 2
  expect_doc_error(doc, {"added_tokens[0].id", "\"ab\"", "2"});
  doc["added_tokens"] = {added(3, "<s>"), added(4, "<s>")};
  expect_doc_error(doc, {"added_tokens[1].content", "twice"});
  doc["added_tokens"] = nlohmann::json::array({{{"content", "<s>"}}});
  expect_doc_error(doc, {"added_tokens[0].id", "missing"});
}

TEST(BadInput, PostProcessorTemplate) {
  nlohmann::json doc = tiny_doc(kVocab, {"a b"});
  doc["post_processor"] = {{"type", "TemplateProcessing"},
                           {"single", {{{"SpecialToken", {{"id", "<s>"}, {"type_id", 0}}}}, {{"Sequence", {{"id", "A"}, {"type_id", 0}}}}}},
                           {"special_tokens", nlohmann::json::object()}};
  expect_doc_error(doc, {"post_processor.single", "<s>"});
  doc["post_processor"]["single"] = nlohmann::json::array();
  expect_doc_error(doc, {"post_processor.single", "no sequence"});
}

TEST(BadInput, AbsurdNestingIsRefused) {
  // The nested text is built as a string: nlohmann's dump() recurses once per
  // level and would itself overflow the stack under AddressSanitizer, while
  // the file loader must cope with it.
  std::string normalizer = R"({"type":"Lowercase"})";
  for (int i = 0; i < 2000; ++i) normalizer = R"({"type":"Sequence","normalizers":[)" + normalizer + "]}";
  nlohmann::json doc = tiny_doc(kVocab, {"a b"});
  doc["normalizer"] = "PLACEHOLDER";
  std::string text = doc.dump();
  text.replace(text.find(R"("PLACEHOLDER")"), 13, normalizer);
  expect_error([&] { Tokenizer::from_json_string(text, "bad/tokenizer.json"); },
               {"bad/tokenizer.json", "normalizer.normalizers[0]", "nested too deeply"});
}

TEST(BadInput, InvalidUtf8InputIsRepairedNotFatal) {
  Tokenizer t = from_doc(tiny_doc(kVocab, {"a b"}, {{"unk_token", nullptr}}));
  EXPECT_EQ(t.encode(std::string("ab\xff\xfe" "a"), false), (std::vector<int>{2, 0}));
  EXPECT_EQ(t.decode(std::vector<int>{0, 99, -5, 2}), "a ab");  // unknown ids are skipped
}

TEST(BadInput, UnknownIdInPiece) {
  Tokenizer t = from_doc(tiny_doc(kVocab, {"a b"}));
  expect_error([&] { t.piece(42); }, {"tiny/tokenizer.json", "42"});
}

}  // namespace
}  // namespace kvscope::test
