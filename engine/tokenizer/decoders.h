// tokenizer.json "decoder": turns the token strings of some ids back into
// text (byte-level bytes, SentencePiece's "▁", <0xXX> byte tokens, ...).
// Like HF, each decoder maps a list of strings to a list of strings and the
// result is concatenated.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tokenizer/json_field.h"

namespace kvscope::tok {

class Decoder {
 public:
  virtual ~Decoder() = default;
  virtual void decode_chain(std::vector<std::string>& tokens) const = 0;
};

// nullptr for JSON null. Supported: ByteLevel, Metaspace, Replace,
// ByteFallback, Fuse, Strip, BPEDecoder, Sequence.
std::unique_ptr<const Decoder> parse_decoder(const JsonField& j);

}  // namespace kvscope::tok
