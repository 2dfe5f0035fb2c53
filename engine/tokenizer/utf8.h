// UTF-8 helpers the tokenizer pipeline shares. Text inside the pipeline is
// always valid UTF-8 (encode() repairs its input first), so decoding does not
// re-check; the checks live in is_valid() and lossy().
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace kvscope::tok::utf8 {

// Number of bytes of the sequence that starts with `lead` (1 for ASCII and,
// defensively, for stray continuation bytes).
inline size_t sequence_length(unsigned char lead) {
  if (lead < 0x80) return 1;
  if (lead >= 0xF0) return 4;
  if (lead >= 0xE0) return 3;
  if (lead >= 0xC0) return 2;
  return 1;
}

// Decodes the character at s[i] and advances i past it. Expects valid UTF-8;
// a truncated sequence yields U+FFFD and stops at the end of s.
char32_t decode(std::string_view s, size_t& i);

void append(std::string& out, char32_t c);
std::string encode(char32_t c);

bool is_valid(std::string_view bytes);

// Rust's String::from_utf8_lossy, which HF's decoders use: each maximal
// invalid subpart of the input becomes one U+FFFD.
std::string lossy(std::string_view bytes);

// Unicode White_Space, i.e. Rust's char::is_whitespace (what HF's Strip,
// WhitespaceSplit and added-token lstrip/rstrip use).
bool is_whitespace(char32_t c);

// Number of characters (code points) in valid UTF-8.
size_t char_count(std::string_view s);

// Byte offset where the character that ends just before `end` starts.
size_t previous_char_start(std::string_view s, size_t end);

// Length of the whitespace (is_whitespace) run that starts `s`.
size_t leading_whitespace(std::string_view s);
// Offset where the whitespace run that ends `s` starts (s.size() if none).
size_t trailing_whitespace_start(std::string_view s);

}  // namespace kvscope::tok::utf8
