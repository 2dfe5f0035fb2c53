// The public API around encode/decode: vocabulary queries, special tokens,
// post-processor ids, sharing between threads, and a speed report.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "test_util.h"
#include "tokenizer/tokenizer.h"

namespace kvscope {
namespace {

Tokenizer load(const char* name) {
  return Tokenizer::load((test::data_dir() / "tokenizers") / name / "tokenizer.json");
}

std::string paragraph() {
  std::ifstream in((test::data_dir() / "tokenizers") / "hard_strings.json");
  auto strings = nlohmann::json::parse(in);
  return strings.back().get<std::string>();  // the ~5 KB paragraph comes last
}

TEST(TokenizerApi, Llama2Vocabulary) {
  Tokenizer t = load("llama2_sentencepiece");
  EXPECT_EQ(t.vocab_size(), 1156);
  EXPECT_EQ(t.piece(0), "<unk>");
  EXPECT_EQ(t.piece(1), "<s>");
  EXPECT_EQ(t.piece(3), "<0x00>");
  EXPECT_EQ(t.piece(258), "<0xFF>");
  EXPECT_EQ(t.token_id("<s>"), 1);
  EXPECT_EQ(t.token_id("\u2581the"), 559);
  EXPECT_EQ(t.token_id("no such piece"), std::nullopt);
  EXPECT_TRUE(t.is_special(1));
  EXPECT_FALSE(t.is_special(559));
  EXPECT_EQ(t.prefix_ids(), (std::vector<int>{1}));
  EXPECT_TRUE(t.suffix_ids().empty());
  EXPECT_EQ(t.token_text(559), "the");  // alone, the Strip decoder eats the leading space
  EXPECT_EQ(t.token_text(1), "<s>");
}

TEST(TokenizerApi, ByteLevelVocabulary) {
  Tokenizer t = load("gpt2_bytelevel");
  EXPECT_EQ(t.vocab_size(), 600);
  EXPECT_EQ(t.piece(270), "\u0120the");
  EXPECT_EQ(t.token_text(270), " the");
  EXPECT_EQ(t.token_id("<|endoftext|>"), 0);
  EXPECT_TRUE(t.is_special(0));
  EXPECT_TRUE(t.prefix_ids().empty());
  EXPECT_EQ(t.decode(std::vector<int>{0, 270}, true), " the");
  EXPECT_EQ(t.decode(std::vector<int>{0, 270}, false), "<|endoftext|> the");

  Tokenizer l3 = load("llama3_bytelevel");
  EXPECT_EQ(l3.prefix_ids(), (std::vector<int>{0}));
  EXPECT_EQ(l3.token_id("\u0120kvscope"), 700);  // only reachable through ignore_merges
  EXPECT_EQ(l3.encode(" kvscope", false), (std::vector<int>{700}));
}

TEST(TokenizerApi, NormalizedAddedTokenShowsItsNormalizedForm) {
  // NeoX's "cafe\u0301" is normalized=true: HF matches and reports it as NFC.
  Tokenizer t = load("neox_bytelevel");
  EXPECT_EQ(t.token_id("cafe\u0301"), 603);
  EXPECT_EQ(t.piece(603), "caf\u00e9");
  EXPECT_FALSE(t.is_special(603));
  EXPECT_TRUE(t.is_special(600));  // <mask>
  EXPECT_EQ(t.encode("cafe\u0301", false), (std::vector<int>{603}));
  EXPECT_EQ(t.encode("caf\u00e9", false), (std::vector<int>{603}));
}

TEST(TokenizerApi, CopiesAndMovesShareOneTokenizer) {
  Tokenizer a = load("qwen2_bytelevel");
  Tokenizer b = a;
  Tokenizer c = std::move(a);
  EXPECT_EQ(b.encode("<|im_start|>hi"), c.encode("<|im_start|>hi"));
  EXPECT_EQ(b.source(), ((test::data_dir() / "tokenizers") / "qwen2_bytelevel" / "tokenizer.json").string());
}

TEST(TokenizerApi, ConcurrentEncodesAgree) {
  Tokenizer t = load("llama3_bytelevel");
  const std::string text = paragraph();
  const std::vector<int> expected = t.encode(text);
  std::vector<std::vector<int>> results(8);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < results.size(); ++i)
    threads.emplace_back([&, i] {
      for (int k = 0; k < 5; ++k) results[i] = t.encode(text + std::to_string(k % 2 ? 0 : k));
      results[i] = t.encode(text);
    });
  for (auto& th : threads) th.join();
  for (const auto& r : results) EXPECT_EQ(r, expected);
}

// Not an assertion (speed is measured by benchmarks, never asserted): prints
// how long encoding takes, for the record.
TEST(TokenizerApi, SpeedReport) {
  const std::string para = paragraph();
  std::string big;
  while (big.size() < 100 * 1024) big += para;
  for (const char* name : {"gpt2_bytelevel", "llama3_bytelevel", "qwen2_bytelevel", "llama2_sentencepiece",
                           "mistral_metaspace"}) {
    Tokenizer t = load(name);
    auto time = [&](const std::string& text, size_t& n) {
      auto start = std::chrono::steady_clock::now();
      n = t.encode(text).size();
      return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    };
    size_t n1 = 0, n2 = 0;
    double cold = time(para, n1);
    double warm = time(para, n1);
    double large = time(big, n2);
    std::printf("[ speed    ] %-22s 5 KB: %6.2f ms cold, %6.2f ms warm (%zu ids); 100 KB: %7.2f ms (%zu ids)\n", name,
                cold, warm, n1, large, n2);
    RecordProperty(std::string(name) + "_100KB_ms", std::to_string(large));
  }
}

}  // namespace
}  // namespace kvscope
