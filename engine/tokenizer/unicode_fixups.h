// Where HF's Rust Unicode tables and utf8proc / PCRE2 disagree, HF wins:
// kvscope must produce HF's tokens. Found by running every code point through
// HF's Lowercase, NFD, NFKD, StripAccents and Punctuation and comparing.
#pragma once

#include <optional>

namespace kvscope::tok::unicode_fixups {

// Lowercase mappings HF (Unicode 16) has and utf8proc does not.
std::optional<char32_t> added_lowercase(char32_t c);

// Characters HF's normalization leaves alone although utf8proc would not:
// they are newer than its Unicode 9.0 tables, so HF gives them no
// decomposition and combining class 0 (they block reordering and
// composition). Generated: normalization_newer.inc.
bool keeps_canonical(char32_t c);       // NFC / NFD
bool keeps_compatibility(char32_t c);   // NFKC / NFKD

// Rust std's char::is_numeric (General_Category N), which HF's Digits uses:
// Unicode 17, newer than both PCRE2 and Oniguruma. Generated: rust_numeric.inc.
bool is_numeric(char32_t c);

// HF's StripAccents set (General_Category Mark, from the older Unicode
// tables of the unicode-normalization crate).
bool is_combining_mark(char32_t c);

// HF's Punctuation / BertPreTokenizer set: ASCII punctuation plus General
// Category P*, from the older tables of the unicode_categories crate.
bool is_punctuation(char32_t c);

}  // namespace kvscope::tok::unicode_fixups
