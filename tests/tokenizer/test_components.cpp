// Each normalizer, pre-tokenizer and decoder type on small inputs. Expected
// values are what HF tokenizers 0.23 gives (normalize_str, pre_tokenize_str,
// decode) for the same settings.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tokenizer/decoders.h"
#include "tokenizer/json_field.h"
#include "tokenizer/normalizers.h"
#include "tokenizer/pre_tokenizers.h"
#include "run_component.h"

namespace kvscope::tok {
namespace {

using test::decode;
using test::normalize;
using test::pre_tokenize;
using test::Strings;

TEST(Normalizers, UnicodeForms) {
  EXPECT_EQ(normalize({{"type", "NFC"}}, "cafe\u0301 A\u030a"), "caf\u00e9 \u00c5");
  EXPECT_EQ(normalize({{"type", "NFD"}}, "caf\u00e9"), "cafe\u0301");
  EXPECT_EQ(normalize({{"type", "NFKC"}}, "\ufb01 \u2460 \u00b2"), "fi 1 2");
  EXPECT_EQ(normalize({{"type", "NFKD"}}, "\ufb01\u00e9"), "fie\u0301");
  // HF's tables leave U+32FF (square era name Reiwa) alone; utf8proc would not.
  EXPECT_EQ(normalize({{"type", "NFKC"}}, "\u32ff"), "\u32ff");
}

TEST(Normalizers, Lowercase) {
  EXPECT_EQ(normalize({{"type", "Lowercase"}}, "HeLLo \u0130STANBUL \u03a3\u0391\u03a3 \u01c4"),
            "hello i\u0307stanbul \u03c3\u03b1\u03c3 \u01c6");
  EXPECT_EQ(normalize({{"type", "Lowercase"}}, "\ua7cb"), "\u0264");  // Unicode 16 mapping
}

TEST(Normalizers, StripAndStripAccents) {
  EXPECT_EQ(normalize({{"type", "Strip"}, {"strip_left", true}, {"strip_right", true}}, " \t hi  \u3000"), "hi");
  EXPECT_EQ(normalize({{"type", "Strip"}, {"strip_left", false}, {"strip_right", true}}, "  hi  "), "  hi");
  EXPECT_EQ(normalize({{"type", "StripAccents"}}, "cafe\u0301"), "cafe");
}

TEST(Normalizers, ReplacePrependSequence) {
  EXPECT_EQ(normalize({{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", "\u2581"}}, "a b  c"),
            "a\u2581b\u2581\u2581c");
  EXPECT_EQ(normalize({{"type", "Replace"}, {"pattern", {{"Regex", "\\s+"}}}, {"content", " "}}, "a \t\n b"), "a b");
  // An empty-matching regex: Oniguruma's iteration, one replacement per gap.
  EXPECT_EQ(normalize({{"type", "Replace"}, {"pattern", {{"Regex", "x*"}}}, {"content", "-"}}, "abxxc"), "-a-b-c-");
  EXPECT_EQ(normalize({{"type", "Prepend"}, {"prepend", "\u2581"}}, "hi"), "\u2581hi");
  EXPECT_EQ(normalize({{"type", "Prepend"}, {"prepend", "\u2581"}}, ""), "");
  nlohmann::json llama = {{"type", "Sequence"},
                          {"normalizers",
                           {{{"type", "Prepend"}, {"prepend", "\u2581"}},
                            {{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", "\u2581"}}}}};
  EXPECT_EQ(normalize(llama, "Hey you"), "\u2581Hey\u2581you");
}

TEST(PreTokenizers, ByteLevel) {
  nlohmann::json bl = {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", true}};
  EXPECT_EQ(pre_tokenize(bl, "Hello world's 123  end\n"),
            (Strings{"Hello", "\u0120world", "'s", "\u0120123", "\u0120", "\u0120end", "\u010a"}));
  bl["add_prefix_space"] = true;
  EXPECT_EQ(pre_tokenize(bl, "Hello"), (Strings{"\u0120Hello"}));
  bl = {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", false}};
  EXPECT_EQ(pre_tokenize(bl, "a b"), (Strings{"a\u0120b"}));
}

TEST(PreTokenizers, SplitBehaviors) {
  auto split = [](const char* behavior) {
    return pre_tokenize({{"type", "Split"}, {"pattern", {{"String", "-"}}}, {"behavior", behavior}, {"invert", false}},
                        "the-final--countdown-");
  };
  EXPECT_EQ(split("Removed"), (Strings{"the", "final", "countdown"}));
  EXPECT_EQ(split("Isolated"), (Strings{"the", "-", "final", "-", "-", "countdown", "-"}));
  EXPECT_EQ(split("MergedWithPrevious"), (Strings{"the-", "final-", "-", "countdown-"}));
  EXPECT_EQ(split("MergedWithNext"), (Strings{"the", "-final", "-", "-countdown", "-"}));
  EXPECT_EQ(split("Contiguous"), (Strings{"the", "-", "final", "--", "countdown", "-"}));
  EXPECT_EQ(pre_tokenize({{"type", "Split"}, {"pattern", {{"Regex", "\\d+"}}}, {"behavior", "Isolated"}, {"invert", true}},
                         "ab12cd345"),
            (Strings{"ab", "12", "cd", "345"}));
}

TEST(PreTokenizers, Metaspace) {
  nlohmann::json m = {{"type", "Metaspace"}, {"replacement", "\u2581"}, {"prepend_scheme", "always"}, {"split", true}};
  EXPECT_EQ(pre_tokenize(m, "Hey  friend!"), (Strings{"\u2581Hey", "\u2581", "\u2581friend!"}));
  m["prepend_scheme"] = "never";
  EXPECT_EQ(pre_tokenize(m, "Hey friend"), (Strings{"Hey", "\u2581friend"}));
  m = {{"type", "Metaspace"}, {"replacement", "\u2581"}, {"prepend_scheme", "first"}, {"split", false}};
  EXPECT_EQ(pre_tokenize(m, "Hey friend"), (Strings{"\u2581Hey\u2581friend"}));
  // The spelling before prepend_scheme existed.
  m = {{"type", "Metaspace"}, {"replacement", "\u2581"}, {"add_prefix_space", false}};
  EXPECT_EQ(pre_tokenize(m, "Hey friend"), (Strings{"Hey", "\u2581friend"}));
}

TEST(PreTokenizers, DigitsWhitespacePunctuation) {
  EXPECT_EQ(pre_tokenize({{"type", "Digits"}, {"individual_digits", true}}, "ab123c4"),
            (Strings{"ab", "1", "2", "3", "c", "4"}));
  EXPECT_EQ(pre_tokenize({{"type", "Digits"}, {"individual_digits", false}}, "ab123c4"),
            (Strings{"ab", "123", "c", "4"}));
  EXPECT_EQ(pre_tokenize({{"type", "Whitespace"}}, "Hello, world!! x_y \u00b2"),
            (Strings{"Hello", ",", "world", "!!", "x_y", "\u00b2"}));
  EXPECT_EQ(pre_tokenize({{"type", "WhitespaceSplit"}}, " Hello,\tworld!!\u3000x "),
            (Strings{"Hello,", "world!!", "x"}));
  EXPECT_EQ(pre_tokenize({{"type", "Punctuation"}, {"behavior", "Isolated"}}, "Hey, you!? ok"),
            (Strings{"Hey", ",", " you", "!", "?", " ok"}));
  EXPECT_EQ(pre_tokenize({{"type", "Punctuation"}, {"behavior", "Contiguous"}}, "Hey,, you!?"),
            (Strings{"Hey", ",,", " you", "!?"}));
  EXPECT_EQ(pre_tokenize({{"type", "BertPreTokenizer"}}, "Hey, you!"), (Strings{"Hey", ",", "you", "!"}));
  EXPECT_EQ(pre_tokenize({{"type", "CharDelimiterSplit"}, {"delimiter", "x"}}, "axbxxc"), (Strings{"a", "b", "c"}));
  nlohmann::json seq = {{"type", "Sequence"},
                        {"pretokenizers", {{{"type", "WhitespaceSplit"}}, {{"type", "Digits"}, {"individual_digits", true}}}}};
  EXPECT_EQ(pre_tokenize(seq, "ab12 c3"), (Strings{"ab", "1", "2", "c", "3"}));
}

TEST(PreTokenizers, Llama3AndQwen2RegexesSplitLikeOniguruma) {
  const char* llama3 =
      "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|"
      "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
  nlohmann::json split = {{"type", "Split"}, {"pattern", {{"Regex", llama3}}}, {"behavior", "Isolated"}, {"invert", false}};
  EXPECT_EQ(pre_tokenize(split, "I'LL pay 1234567 \u20ac!!\n\n  ok"),
            (Strings{"I", "'LL", " pay", " ", "123", "456", "7", " \u20ac!!\n\n", " ", " ok"}));
  // Case-insensitive contractions follow Unicode case folding ("\u017f" is a long s).
  EXPECT_EQ(pre_tokenize(split, "a'\u017f"), (Strings{"a", "'\u017f"}));
  // Letters newer than PCRE2's Unicode tables (U+A7CB, CJK extension H) are letters.
  EXPECT_EQ(pre_tokenize(split, " \ua7cb\U00031350x"), (Strings{" \ua7cb\U00031350x"}));
}

TEST(Decoders, ByteLevel) {
  nlohmann::json bl = {{"type", "ByteLevel"}};
  EXPECT_EQ(decode(bl, {"Hello", "\u0120world", "\u010a", "\u00e4\u00b8\u0143"}), "Hello world\n\u4e2d");
  EXPECT_EQ(decode(bl, {"\u00e4\u00b8"}), "\ufffd");  // one U+FFFD per maximal invalid run
}

TEST(Decoders, Metaspace) {
  EXPECT_EQ(decode({{"type", "Metaspace"}, {"replacement", "\u2581"}, {"prepend_scheme", "always"}},
                   {"\u2581Hey", "\u2581friend", "!"}),
            "Hey friend!");
  EXPECT_EQ(decode({{"type", "Metaspace"}, {"replacement", "\u2581"}, {"prepend_scheme", "never"}},
                   {"\u2581Hey", "\u2581friend"}),
            " Hey friend");
}

TEST(Decoders, ReplaceByteFallbackFuseStrip) {
  EXPECT_EQ(decode({{"type", "Replace"}, {"pattern", {{"String", "\u2581"}}}, {"content", " "}}, {"\u2581a\u2581b"}),
            " a b");
  // A run of byte tokens that is not valid UTF-8 gives one U+FFFD per byte;
  // "<0x+A>" parses like Rust's from_str_radix.
  EXPECT_EQ(decode({{"type", "ByteFallback"}},
                   {"<0x61>", "b", "<0xE4>", "<0xB8>", "<0xAD>", "<0xE4>", "<0xB8>", "c", "<0x+A>", "<0xZZ>"}),
            "ab\ufffd\ufffd\ufffd\ufffd\ufffdc\n<0xZZ>");
  EXPECT_EQ(decode({{"type", "Fuse"}}, {"a", "b", "c"}), "abc");
  EXPECT_EQ(decode({{"type", "Strip"}, {"content", " "}, {"start", 1}, {"stop", 0}}, {"  a", " b "}), " ab ");
  EXPECT_EQ(decode({{"type", "Strip"}, {"content", "x"}, {"start", 0}, {"stop", 2}}, {"axxx"}), "ax");
  // HF panics here; kvscope gives an empty token.
  EXPECT_EQ(decode({{"type", "Strip"}, {"content", " "}, {"start", 1}, {"stop", 1}}, {" "}), "");
  nlohmann::json llama = {{"type", "Sequence"},
                          {"decoders",
                           {{{"type", "Replace"}, {"pattern", {{"String", "\u2581"}}}, {"content", " "}},
                            {{"type", "ByteFallback"}},
                            {{"type", "Fuse"}},
                            {{"type", "Strip"}, {"content", " "}, {"start", 1}, {"stop", 0}}}}};
  EXPECT_EQ(decode(llama, {"\u2581Hey", "\u2581", "<0xE4>", "<0xB8>", "<0xAD>"}), "Hey \u4e2d");
  EXPECT_EQ(decode({{"type", "BPEDecoder"}, {"suffix", "</w>"}}, {"hel", "lo</w>", "wor", "ld</w>"}), "hello world");
}

}  // namespace
}  // namespace kvscope::tok
