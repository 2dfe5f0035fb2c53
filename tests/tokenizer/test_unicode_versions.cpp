// Where HF tokenizers' components and Debian's libraries disagree on
// Unicode, kvscope follows HF, component by component. Expected
// values are what HF tokenizers 0.23.3 gives; tools/probe_tokenizer_unicode.py
// checks every code point the same way.
//   normalizers  Unicode 9.0 (unicode-normalization-alignments), not utf8proc's 15
//   regexes      Oniguruma's Unicode 16 and its meaning of scripts and POSIX
//                brackets, not PCRE2 10.42's Unicode 14
//   Whitespace   Rust regex's \w; Digits: Rust std's char::is_numeric (Unicode 17)
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/error.h"
#include "tokenizer/json_field.h"
#include "tokenizer/normalizers.h"
#include "tokenizer/pre_tokenizers.h"
#include "tokenizer/regex.h"
#include "run_component.h"
#include "tiny_tokenizer.h"

namespace kvscope::tok {
namespace {

using test::pre_tokenize;
using test::Strings;

std::string normalize(const char* type, std::string text) { return test::normalize({{"type", type}}, std::move(text)); }

// HF's Split with behavior Isolated: matches and the text between them.
Strings split(const std::string& pattern, const std::string& text) {
  return pre_tokenize({{"type", "Split"}, {"pattern", {{"Regex", pattern}}}, {"behavior", "Isolated"},
                       {"invert", false}},
                      text);
}

TEST(UnicodeVersions, MarksNewerThanHfNormalizationTablesHaveNoCombiningClass) {
  // U+1DF6 (Unicode 10) has class 232 in utf8proc; HF's 9.0 tables give it
  // none, so it neither moves past U+0301 / U+0316 nor lets them compose.
  EXPECT_EQ(normalize("NFC", "e\u1df6\u0301"), "e\u1df6\u0301");
  EXPECT_EQ(normalize("NFD", "a\u1df6\u0316"), "a\u1df6\u0316");
  EXPECT_EQ(normalize("NFKC", "e\u0301\u1df6\u0323"), "\u00e9\u1df6\u0323");
  EXPECT_EQ(normalize("NFD", "\u1e0b\u1df6\u0323"), "d\u0307\u1df6\u0323");
}

TEST(UnicodeVersions, GeneralCategoriesAreOniguruma16) {
  EXPECT_EQ(split(R"(\p{Lu}+)", "a\u1c89b"), (Strings{"a", "\u1c89", "b"}));  // Unicode 16 capital
  // Emoji of Unicode 15 and 16 are symbols (PCRE2 10.42: unassigned).
  EXPECT_EQ(split(R"(\p{So}+)", "x\U0001FAE8\U0001FAE9y"), (Strings{"x", "\U0001FAE8\U0001FAE9", "y"}));
}

TEST(UnicodeVersions, ScriptsAreOnigurumaScriptNotScriptExtensions) {
  // "、" and "ー" and "،" are Common by Script; PCRE2's bare names use
  // Script_Extensions and would take them. U+2EBF0 is Unicode 15.1 Han,
  // U+0897 Unicode 16 Arabic.
  EXPECT_EQ(split(R"(\p{Han}+)", "\u4e2d\u3001\u6587\U0002EBF0x"),
            (Strings{"\u4e2d", "\u3001", "\u6587\U0002EBF0", "x"}));
  EXPECT_EQ(split(R"(\p{Katakana}+)", "\u30ab\u30fc\u30fb\u30ca"), (Strings{"\u30ab", "\u30fc\u30fb", "\u30ca"}));
  EXPECT_EQ(split(R"(\p{Arabic}+)", "\u0639\u0631\u0628\u064a\u060c\u0897\u064a"),
            (Strings{"\u0639\u0631\u0628\u064a", "\u060c", "\u0897\u064a"}));
}

TEST(UnicodeVersions, PosixBracketsMeanWhatOnigurumaMeans) {
  // alpha is Alphabetic (circled letters, U+0345) and punct has the ASCII
  // symbols; PCRE2 reads them as \p{L} and \p{P}.
  EXPECT_EQ(split("[[:alpha:]]+", "a\u24b6\u0345b1"), (Strings{"a\u24b6\u0345b", "1"}));
  EXPECT_EQ(split("[[:^alpha:]]+", "a\u24b6 1b"), (Strings{"a\u24b6", " 1", "b"}));
  EXPECT_EQ(split("[[:punct:]]+", "a$+<b"), (Strings{"a", "$+<", "b"}));
}

TEST(UnicodeVersions, WhitespacePreTokenizerUsesRustRegexWordClass) {
  // Join controls stay inside words; superscripts and fractions are not word
  // characters (Oniguruma's \w says the opposite of both).
  EXPECT_EQ(pre_tokenize({{"type", "Whitespace"}}, "a\u200db c\u200cd x\u00b2y \u00bd"),
            (Strings{"a\u200db", "c\u200cd", "x", "\u00b2", "y", "\u00bd"}));
}

TEST(UnicodeVersions, DigitsUseRustIsNumericOfUnicode17) {
  // Tolong Siki digits (U+11DE0...) and U+16FF4 arrived in Unicode 17.
  EXPECT_EQ(pre_tokenize({{"type", "Digits"}, {"individual_digits", false}}, "a\U00011DE0\U00011DE1b\U00016FF4"),
            (Strings{"a", "\U00011DE0\U00011DE1", "b", "\U00016FF4"}));
  EXPECT_EQ(pre_tokenize({{"type", "Digits"}, {"individual_digits", true}}, "a\U00011DE0\U00011DE1b"),
            (Strings{"a", "\U00011DE0", "\U00011DE1", "b"}));
}

TEST(UnicodeVersions, ClassNestedInAClassIsAUnionLikeOniguruma) {
  // BLOOM's pre-tokenizer pattern.
  EXPECT_EQ(split(" ?[^(\\s|[.,!?\u2026\u3002\uff0c\u3001\u0964\u06d4\u060c])]+", "hello, world(x)|y. ok"),
            (Strings{"hello", ",", " world", "(", "x", ")|", "y", ".", " ok"}));
}

TEST(UnicodeVersions, NegatedClassNestedInAClassIsRefusedNamingTheField) {
  nlohmann::json doc = test::tiny_doc({{"a", 0}}, nlohmann::json::array());
  doc["pre_tokenizer"] = {{"type", "Split"}, {"pattern", {{"Regex", "[a[^b]]"}}}, {"behavior", "Isolated"},
                          {"invert", false}};
  try {
    test::from_doc(doc);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("pre_tokenizer.pattern.Regex"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("nested"), std::string::npos) << e.what();
  }
}

TEST(UnicodeVersions, AddedTokenWhoseNormalizedFormIsEmptyNeverMatches) {
  // StripAccents turns "\u0301" into "": HF keeps the token in the
  // vocabulary but never matches it, and the accent is stripped from text.
  nlohmann::json doc = test::tiny_doc({{"a", 0}, {"e", 1}, {"x", 2}}, nlohmann::json::array());
  doc["normalizer"] = {{"type", "StripAccents"}};
  doc["added_tokens"] = {{{"id", 3}, {"content", "\u0301"}, {"single_word", false}, {"lstrip", false},
                          {"rstrip", false}, {"normalized", true}, {"special", false}}};
  Tokenizer t = test::from_doc(doc);
  EXPECT_EQ(t.encode("e\u0301x", false), (std::vector<int>{1, 2}));
  EXPECT_EQ(t.encode("\u0301", false), (std::vector<int>{}));
  EXPECT_EQ(t.vocab_size(), 4);
}

}  // namespace
}  // namespace kvscope::tok
