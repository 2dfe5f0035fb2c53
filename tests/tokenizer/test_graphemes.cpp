// \X in a tokenizer.json regex splits like HF tokenizers' Oniguruma: the
// golden splits of tests/data/tokenizers/grapheme_splits.json (made by
// tools/goldens_graphemes.py with HF tokenizers; ZWJ sequences, skin tones,
// regional indicators, Indic viramas, Hangul, marks of Unicode 15 and 16,
// and every ordered pair of grapheme classes).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tokenizer/regex.h"

namespace kvscope::tok {
namespace {

std::string code_points(const std::vector<std::string>& pieces) {
  return nlohmann::json(pieces).dump(-1, ' ', true);  // \uXXXX: readable in a failure
}

TEST(Graphemes, SplitLikeHfOnTheGoldenCorpus) {
  std::ifstream in(std::filesystem::path(KVSCOPE_TEST_DATA) / "tokenizers" / "grapheme_splits.json");
  ASSERT_TRUE(in) << "grapheme_splits.json missing";
  const auto golden = nlohmann::json::parse(in);
  const Regex x = Regex::compile(golden.at("pattern").get<std::string>());
  int differ = 0, total = 0;
  for (const auto& c : golden.at("cases")) {
    const std::string text = c.at("text").get<std::string>();
    const auto want = c.at("pieces").get<std::vector<std::string>>();
    // Isolated Split: the matches and the text between them (none for \X).
    std::vector<std::string> got;
    size_t at = 0;
    for (const Match& m : x.find_all(text)) {
      if (m.start > at) got.push_back(text.substr(at, m.start - at));
      got.push_back(text.substr(m.start, m.end - m.start));
      at = m.end;
    }
    if (at < text.size()) got.push_back(text.substr(at));
    ++total;
    if (got != want && ++differ <= 10) ADD_FAILURE() << "HF " << code_points(want) << "\nkv " << code_points(got);
  }
  EXPECT_GT(total, 1000);
  EXPECT_EQ(differ, 0) << differ << " of " << total << " strings split differently";
}

TEST(Graphemes, ClusterExamples) {
  const Regex x = Regex::compile("\\X");
  auto split = [&](const std::string& t) {
    std::vector<std::string> out;
    for (const Match& m : x.find_all(t)) out.push_back(t.substr(m.start, m.end - m.start));
    return out;
  };
  const std::string family = "\U0001F468\u200D\U0001F469\u200D\U0001F467";
  EXPECT_EQ(split(family + family), (std::vector<std::string>{family, family}));  // no joiner between
  EXPECT_EQ(split("\u0CF3\u0ECE"), (std::vector<std::string>{"\u0CF3\u0ECE"}));   // Unicode 15 marks extend
  EXPECT_EQ(split("\r\n\u0301"), (std::vector<std::string>{"\r\n", "\u0301"}));
  EXPECT_EQ(split("\U0001F1FA\U0001F1F8\U0001F1EC"), (std::vector<std::string>{"\U0001F1FA\U0001F1F8", "\U0001F1EC"}));
  EXPECT_THROW(Regex::compile("[\\X]"), std::invalid_argument);
}

}  // namespace
}  // namespace kvscope::tok
