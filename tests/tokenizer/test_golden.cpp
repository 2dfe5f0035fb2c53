// Every golden tokenizer x every hard string, against what HF tokenizers
// 0.23 produced (tools/goldens_tokenizers.py): ids and token strings with and
// without special tokens, decode with and without skipping specials, and the
// round trip decode(encode(s)).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "test_util.h"
#include "tokenizer/tokenizer.h"

namespace kvscope {
namespace {

nlohmann::json read_json(const std::filesystem::path& p) {
  std::ifstream in(p);
  if (!in) throw std::runtime_error("cannot open " + p.string());
  return nlohmann::json::parse(in);
}

// Short, printable label for a failing string.
std::string label(const std::string& s) {
  std::string out = nlohmann::json(s).dump();
  if (out.size() > 60) out = out.substr(0, 57) + "...";
  return out;
}

struct GoldenParam {
  const char* name;
  bool exact_round_trip;  // no normalizer and no stripping added tokens: decode(encode(s)) == s
};

class Golden : public ::testing::TestWithParam<GoldenParam> {
 protected:
  void SetUp() override {
    tok_ = std::make_unique<Tokenizer>(
        Tokenizer::load((test::data_dir() / "tokenizers") / GetParam().name / "tokenizer.json"));
    golden_ = read_json((test::data_dir() / "tokenizers") / GetParam().name / "golden.json");
  }
  std::unique_ptr<Tokenizer> tok_;
  nlohmann::json golden_;
};

TEST_P(Golden, CoversTheHardStrings) {
  auto strings = read_json((test::data_dir() / "tokenizers") / "hard_strings.json");
  ASSERT_EQ(golden_["cases"].size(), strings.size());
  EXPECT_GE(strings.size(), 80u);
}

TEST_P(Golden, IdsAndTokensWithSpecialTokens) {
  for (const auto& c : golden_["cases"]) {
    const std::string text = c["text"];
    Encoding e = tok_->encode_with_tokens(text, true);
    EXPECT_EQ(e.ids, c["ids"].get<std::vector<int>>()) << label(text);
    EXPECT_EQ(e.tokens, c["tokens"].get<std::vector<std::string>>()) << label(text);
    EXPECT_EQ(tok_->encode(text), e.ids) << label(text);
  }
}

TEST_P(Golden, IdsAndTokensWithoutSpecialTokens) {
  for (const auto& c : golden_["cases"]) {
    const std::string text = c["text"];
    Encoding e = tok_->encode_with_tokens(text, false);
    EXPECT_EQ(e.ids, c["ids_no_special"].get<std::vector<int>>()) << label(text);
    EXPECT_EQ(e.tokens, c["tokens_no_special"].get<std::vector<std::string>>()) << label(text);
  }
}

TEST_P(Golden, Decode) {
  for (const auto& c : golden_["cases"]) {
    const std::string text = c["text"];
    auto ids = c["ids"].get<std::vector<int>>();
    EXPECT_EQ(tok_->decode(ids, false), c["decoded"].get<std::string>()) << label(text);
    EXPECT_EQ(tok_->decode(ids, true), c["decoded_skip_special"].get<std::string>()) << label(text);
  }
}

TEST_P(Golden, RoundTrip) {
  for (const auto& c : golden_["cases"]) {
    const std::string text = c["text"];
    std::string back = tok_->decode(tok_->encode(text, false));
    EXPECT_EQ(back, c["roundtrip"].get<std::string>()) << label(text);
    if (GetParam().exact_round_trip) {
      EXPECT_EQ(back, text) << label(text);
    }
  }
}

TEST_P(Golden, PiecesMatchTheVocabulary) {
  // token_id(piece(id)) == id for every model id (no normalized added
  // tokens whose form changes in these files... except neox's "café", see
  // the API tests), and token_text is decode of one id.
  for (int id = 0; id < tok_->vocab_size(); ++id) {
    if (!tok_->token_id(tok_->piece(id))) continue;
    EXPECT_EQ(tok_->token_text(id), tok_->decode(std::vector<int>{id}));
  }
}

std::string param_name(const ::testing::TestParamInfo<GoldenParam>& info) { return info.param.name; }

INSTANTIATE_TEST_SUITE_P(Tokenizers, Golden,
                         ::testing::Values(GoldenParam{"gpt2_bytelevel", true},
                                           GoldenParam{"neox_bytelevel", false},
                                           GoldenParam{"llama3_bytelevel", true},
                                           GoldenParam{"qwen2_bytelevel", false},
                                           GoldenParam{"llama2_sentencepiece", false},
                                           GoldenParam{"mistral_metaspace", false}),
                         param_name);

}  // namespace
}  // namespace kvscope
