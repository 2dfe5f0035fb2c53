#include "tokenizer/byte_level_alphabet.h"

#include <array>

#include "tokenizer/utf8.h"

namespace kvscope::tok::byte_level {

namespace {

bool printable(int b) { return (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE; }

struct Tables {
  std::array<std::string, 256> chars;
  // Characters are below U+0100 + 68; -1 marks "not in the alphabet".
  std::array<int16_t, 0x100 + 68> bytes;
  Tables() {
    bytes.fill(-1);
    int next = 0;
    for (int b = 0; b < 256; ++b) {
      char32_t c = printable(b) ? static_cast<char32_t>(b) : static_cast<char32_t>(0x100 + next++);
      chars[b] = utf8::encode(c);
      bytes[c] = static_cast<int16_t>(b);
    }
  }
};

const Tables& tables() {
  static const Tables t;
  return t;
}

}  // namespace

const std::string& char_of(uint8_t b) { return tables().chars[b]; }

std::optional<uint8_t> byte_of(char32_t c) {
  const Tables& t = tables();
  if (c >= t.bytes.size() || t.bytes[c] < 0) return std::nullopt;
  return static_cast<uint8_t>(t.bytes[c]);
}

std::string encode(std::string_view bytes) {
  const Tables& t = tables();
  std::string out;
  out.reserve(bytes.size() * 2);
  for (char ch : bytes) out += t.chars[static_cast<uint8_t>(ch)];
  return out;
}

std::optional<std::string> decode(std::string_view token) {
  std::string out;
  out.reserve(token.size());
  size_t i = 0;
  while (i < token.size()) {
    auto b = byte_of(utf8::decode(token, i));
    if (!b) return std::nullopt;
    out += static_cast<char>(*b);
  }
  return out;
}

}  // namespace kvscope::tok::byte_level
