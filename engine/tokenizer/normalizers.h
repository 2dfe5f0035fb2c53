// tokenizer.json "normalizer": rewrites a piece of text before it is
// pre-tokenized (NFC, lowercasing, SentencePiece's space -> "▁", ...).
#pragma once

#include <memory>
#include <string>

#include "tokenizer/json_field.h"

namespace kvscope::tok {

class Normalizer {
 public:
  virtual ~Normalizer() = default;
  virtual void normalize(std::string& text) const = 0;

  // normalize(), also updating how many leading bytes HF would align to the
  // start of the input (see Piece::origin_bytes).
  void normalize_piece(std::string& text, size_t& origin_bytes) const;

  // origin_bytes after normalizing `before`. By default the normalized form
  // of the origin prefix alone, which holds for normalizers that work
  // character by character; others override.
  virtual size_t origin_after(const std::string& before, size_t origin_bytes) const;
};

// Builds the normalizer described by `j`; nullptr for JSON null. Supported:
// NFC, NFD, NFKC, NFKD, Lowercase, Strip, StripAccents, Replace, Prepend,
// ByteLevel, Sequence. Anything else is an error naming the field.
std::unique_ptr<const Normalizer> parse_normalizer(const JsonField& j);

}  // namespace kvscope::tok
