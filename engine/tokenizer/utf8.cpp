#include "tokenizer/utf8.h"

namespace kvscope::tok::utf8 {

char32_t decode(std::string_view s, size_t& i) {
  auto b0 = static_cast<unsigned char>(s[i]);
  size_t n = sequence_length(b0);
  if (n == 1) {
    ++i;
    return b0 < 0x80 ? b0 : 0xFFFD;
  }
  if (i + n > s.size()) {
    i = s.size();
    return 0xFFFD;
  }
  char32_t c = b0 & (0x7F >> n);
  for (size_t k = 1; k < n; ++k) c = (c << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
  i += n;
  return c;
}

void append(std::string& out, char32_t c) {
  if (c < 0x80) {
    out += static_cast<char>(c);
  } else if (c < 0x800) {
    out += static_cast<char>(0xC0 | (c >> 6));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    out += static_cast<char>(0xE0 | (c >> 12));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (c >> 18));
    out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  }
}

std::string encode(char32_t c) {
  std::string s;
  append(s, c);
  return s;
}

namespace {

// Length of the valid sequence at s[i], or 0 when invalid; `prefix` gets the
// length of the longest valid prefix (the "maximal subpart" that one U+FFFD
// replaces). Follows Unicode Table 3-7 (no overlongs, no surrogates, <= U+10FFFF).
size_t valid_sequence(std::string_view s, size_t i, size_t& prefix) {
  auto b = [&](size_t k) { return static_cast<unsigned char>(s[i + k]); };
  unsigned char b0 = b(0);
  prefix = 1;
  if (b0 < 0x80) return 1;
  size_t n;
  unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    n = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    n = 3;
    if (b0 == 0xE0) lo = 0xA0;
    if (b0 == 0xED) hi = 0x9F;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    n = 4;
    if (b0 == 0xF0) lo = 0x90;
    if (b0 == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  for (size_t k = 1; k < n; ++k) {
    if (i + k >= s.size()) return 0;
    unsigned char c = b(k);
    unsigned char l = k == 1 ? lo : 0x80, h = k == 1 ? hi : 0xBF;
    if (c < l || c > h) return 0;
    prefix = k + 1;
  }
  return n;
}

}  // namespace

bool is_valid(std::string_view bytes) {
  size_t i = 0, prefix = 0;
  while (i < bytes.size()) {
    size_t n = valid_sequence(bytes, i, prefix);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

std::string lossy(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  size_t i = 0, prefix = 0;
  while (i < bytes.size()) {
    size_t n = valid_sequence(bytes, i, prefix);
    if (n == 0) {
      out += "\xEF\xBF\xBD";
      i += prefix;
    } else {
      out.append(bytes.substr(i, n));
      i += n;
    }
  }
  return out;
}

bool is_whitespace(char32_t c) {
  if (c <= 0x20) return c == 0x20 || (c >= 0x09 && c <= 0x0D);
  switch (c) {
    case 0x85: case 0xA0: case 0x1680: case 0x2028: case 0x2029:
    case 0x202F: case 0x205F: case 0x3000:
      return true;
    default:
      return c >= 0x2000 && c <= 0x200A;
  }
}

size_t char_count(std::string_view s) {
  size_t n = 0;
  for (unsigned char b : s) n += (b & 0xC0) != 0x80;
  return n;
}

size_t previous_char_start(std::string_view s, size_t end) {
  size_t at = end - 1;
  while (at > 0 && (static_cast<unsigned char>(s[at]) & 0xC0) == 0x80) --at;
  return at;
}

size_t leading_whitespace(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    size_t at = i;
    if (!is_whitespace(decode(s, i))) return at;
  }
  return i;
}

size_t trailing_whitespace_start(std::string_view s) {
  size_t end = s.size();
  while (end > 0) {
    size_t at = previous_char_start(s, end);
    size_t i = at;
    if (!is_whitespace(decode(s, i))) break;
    end = at;
  }
  return end;
}

}  // namespace kvscope::tok::utf8
