// GPT-2's byte-level alphabet: every byte 0..255 has a printable Unicode
// character, so byte strings can live in a JSON vocabulary. Bytes that are
// already printable (and not space) map to themselves; the other 68 map to
// U+0100 onwards, in byte order ("Ġ" is the space, "Ċ" the newline).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace kvscope::tok::byte_level {

// UTF-8 of the character that stands for byte b.
const std::string& char_of(uint8_t b);

// The byte a character stands for, or nullopt when it is not in the alphabet.
std::optional<uint8_t> byte_of(char32_t c);

// Maps every byte of `bytes` to its character (the ByteLevel pre-tokenizer).
std::string encode(std::string_view bytes);

// Inverse of encode() for one token: nullopt when some character is not in
// the alphabet (HF then keeps the token's own bytes).
std::optional<std::string> decode(std::string_view token);

}  // namespace kvscope::tok::byte_level
