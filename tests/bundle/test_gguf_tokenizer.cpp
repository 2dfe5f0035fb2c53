// The tokenizer a Gemma GGUF describes, built from the file's metadata alone
// (no weights loaded), against transformers loading the same file:
// tests/data/gguf/tiny_gemma3.gguf and its golden (tools/goldens_gguf.py).
// transformers hands a "llama" (SentencePiece) vocabulary of a gemma, gemma2
// or gemma3 file to GemmaTokenizer instead of LlamaTokenizer: whitespace-run
// tokens respelled with U+2581, merges ordered by token position rather than
// by score, spaces replaced by a normalizer (no prefix space), no strip in
// decode, and "<mask>" among its special tokens. The Llama shape gets most of
// these strings wrong, so every part is covered by the golden comparison.
#include <gtest/gtest.h>

#include "bundle/gguf_tokenizer.h"
#include "io/gguf.h"
#include "io/json_file.h"
#include "test_util.h"
#include "tokenizer/tokenizer.h"

namespace kvscope {
namespace {

const std::filesystem::path kFile = test::data_dir() / "gguf" / "tiny_gemma3.gguf";

Tokenizer tiny_gemma3_tokenizer() {
  const GgufFile f = GgufFile::open(kFile);
  return gguf_tokenizer(f);
}

nlohmann::json golden() { return read_json_file(test::data_dir() / "gguf" / "tiny_gemma3.golden.json"); }

TEST(GgufGemmaTokenizer, IdsMatchTransformersOnTheHardStrings) {
  const Tokenizer tok = tiny_gemma3_tokenizer();
  const auto g = golden();
  int n = 0;
  for (const auto& s : g.at("strings")) {
    const auto text = s.at("text").get<std::string>();
    SCOPED_TRACE(text);
    EXPECT_EQ(tok.encode(text, true), s.at("ids").get<std::vector<int>>());
    EXPECT_EQ(tok.encode(text, false), s.at("ids_no_special").get<std::vector<int>>());
    ++n;
  }
  EXPECT_GT(n, 300);  // the hard strings and the Gemma-specific ones
  EXPECT_EQ(tok.encode(g.at("prompt_text").get<std::string>()), g.at("prompt").get<std::vector<int>>());
}

TEST(GgufGemmaTokenizer, DecodeMatchesTransformers) {
  const Tokenizer tok = tiny_gemma3_tokenizer();
  const auto g = golden();
  int n = 0;
  for (const auto& s : g.at("strings")) {
    SCOPED_TRACE(s.at("text").get<std::string>());
    const auto ids = s.at("ids").get<std::vector<int>>();
    EXPECT_EQ(tok.decode(ids), s.at("decoded").get<std::string>());
    EXPECT_EQ(tok.decode(ids, true), s.at("decoded_skip_special").get<std::string>());
    ++n;
  }
  EXPECT_GT(n, 300);
}

// What the golden comparison rests on, by name (ids as tools/goldens_gguf.py
// lays out the vocabulary).
TEST(GgufGemmaTokenizer, HasGemmasShape) {
  const Tokenizer tok = tiny_gemma3_tokenizer();
  // Whitespace runs stored as spaces are looked up as U+2581 runs; the
  // spaces themselves are not added tokens.
  EXPECT_EQ(tok.token_id("\u2581\u2581"), 10);
  EXPECT_EQ(tok.token_id("\u2581\u2581\u2581"), 11);
  EXPECT_EQ(tok.token_id("  "), std::nullopt);
  EXPECT_EQ(tok.encode("  ", false), std::vector<int>{10});
  // No prefix space: a leading word is not "▁word", and decode strips nothing.
  EXPECT_NE(tok.piece(tok.encode("hello", false).front()).rfind("\u2581", 0), 0u);
  EXPECT_EQ(tok.decode(tok.encode(" hello", false)), " hello");
  // BOS in front; control tokens special, user-defined ones not; "<mask>" special.
  EXPECT_EQ(tok.prefix_ids(), std::vector<int>{2});
  EXPECT_TRUE(tok.is_special(4));  // <mask>
  EXPECT_TRUE(tok.is_special(6));  // <start_of_turn>
  EXPECT_FALSE(tok.is_special(5));  // [multimodal], user-defined
  EXPECT_EQ(tok.encode("<start_of_turn>[multimodal]\n", false), (std::vector<int>{6, 5, 8}));
}

}  // namespace
}  // namespace kvscope
