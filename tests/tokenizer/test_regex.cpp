// The Oniguruma -> PCRE2 layer: pattern translation and Oniguruma's rule for
// enumerating matches.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "tokenizer/regex.h"

namespace kvscope::tok {
namespace {

std::vector<std::string> matches(const Regex& re, const std::string& text) {
  std::vector<std::string> out;
  for (const Match& m : re.find_all(text)) out.push_back(text.substr(m.start, m.end - m.start));
  return out;
}

std::vector<size_t> starts(const Regex& re, const std::string& text) {
  std::vector<size_t> out;
  for (const Match& m : re.find_all(text)) out.push_back(m.start);
  return out;
}

TEST(Regex, Gpt2Pattern) {
  Regex re = Regex::compile(R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)");
  EXPECT_EQ(matches(re, "Hello world's  123!!\n"),
            (std::vector<std::string>{"Hello", " world", "'s", " ", " 123", "!!", "\n"}));
}

TEST(Regex, WhitespaceIsUnicodeWhiteSpaceOnly) {
  Regex re = Regex::compile(R"(\s+)");
  EXPECT_EQ(matches(re, "a\u00a0\u2009\u3000b"), (std::vector<std::string>{"\u00a0\u2009\u3000"}));
  // U+180E stopped being whitespace in Unicode 6.3; PCRE2 still says \s.
  EXPECT_TRUE(re.find_all("a\u180eb").empty());
}

TEST(Regex, ClassesInsideBrackets) {
  Regex re = Regex::compile(R"([^\s\p{L}\p{N}]+)");
  EXPECT_EQ(matches(re, "ab!?\u180e12"), (std::vector<std::string>{"!?\u180e"}));
  // A letter from Unicode 16 is a letter.
  EXPECT_TRUE(Regex::compile(R"(\p{L})").find_all("\ua7cb").size() == 1);
}

TEST(Regex, EmptyMatchesFollowOniguruma) {
  // After an empty match right where the last one ended, move one character.
  Regex star = Regex::compile("x*");
  EXPECT_EQ(starts(star, "abxxc"), (std::vector<size_t>{0, 1, 2, 5}));
  Regex empty = Regex::compile("");
  EXPECT_EQ(starts(empty, "\u00e9\U0001F600a"), (std::vector<size_t>{0, 2, 6, 7}));
}

TEST(Regex, LiteralEscapesEverything) {
  Regex re = Regex::literal("a.b*(c)");
  EXPECT_EQ(matches(re, "xa.b*(c)ya-b"), (std::vector<std::string>{"a.b*(c)"}));
  EXPECT_EQ(matches(Regex::literal("\u2581"), "\u2581a\u2581\u2581"),
            (std::vector<std::string>{"\u2581", "\u2581", "\u2581"}));
}

TEST(Regex, TranslationOfRubySyntax) {
  EXPECT_EQ(matches(Regex::compile(R"(\h+)"), "zz0fA9g"), (std::vector<std::string>{"0fA9"}));
  EXPECT_EQ(matches(Regex::compile(R"(\u00e9)"), "caf\u00e9"), (std::vector<std::string>{"\u00e9"}));
  EXPECT_EQ(matches(Regex::compile(R"(\p{^L}+)"), "ab12cd"), (std::vector<std::string>{"12"}));
  EXPECT_EQ(matches(Regex::compile(R"([]a]+)"), "x]a]y"), (std::vector<std::string>{"]a]"}));
  EXPECT_EQ(matches(Regex::compile(R"(^a)"), "ab\nab"), (std::vector<std::string>{"a", "a"}));  // Ruby: ^ per line
}

TEST(Regex, UnsupportedOrInvalidPatternsThrow) {
  EXPECT_THROW(Regex::compile("(unclosed"), std::invalid_argument);
  EXPECT_THROW(Regex::compile("[a-z&&[^aeiou]]"), std::invalid_argument);
  EXPECT_THROW(Regex::compile("abc\\"), std::invalid_argument);
  EXPECT_THROW(Regex::compile("[abc"), std::invalid_argument);
}

TEST(Regex, LongWhitespaceRunDoesNotOverflow) {
  Regex re = Regex::compile(R"(\s+(?!\S)|\s+)");
  std::string text(200000, ' ');
  text += "x";
  auto m = re.find_all(text);
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0].end, 199999u);
}

}  // namespace
}  // namespace kvscope::tok
