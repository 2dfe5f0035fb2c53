// Where HF's Rust Unicode tables and utf8proc / PCRE2 disagree, HF wins:
// kvscope must produce HF's tokens. Found by running every code point through
// HF's Lowercase, NFD, NFKD, StripAccents and Punctuation and comparing.
#pragma once

#include <optional>

namespace kvscope::tok::unicode_fixups {

// Lowercase mappings HF (Unicode 16) has and utf8proc does not.
std::optional<char32_t> added_lowercase(char32_t c);

// Characters HF leaves alone although utf8proc decomposes them: its
// normalization tables predate these decompositions.
bool keeps_canonical(char32_t c);       // NFC / NFD
bool keeps_compatibility(char32_t c);   // NFKC / NFKD

// HF's StripAccents set (General_Category Mark, from the older Unicode
// tables of the unicode-normalization crate).
bool is_combining_mark(char32_t c);

// HF's Punctuation / BertPreTokenizer set: ASCII punctuation plus General
// Category P*, from the older tables of the unicode_categories crate.
bool is_punctuation(char32_t c);

}  // namespace kvscope::tok::unicode_fixups
