// tokenizer.json "pre_tokenizer": cuts normalized text into the words BPE
// sees (and, for ByteLevel / Metaspace, rewrites them).
#pragma once

#include <memory>

#include "tokenizer/json_field.h"
#include "tokenizer/piece.h"

namespace kvscope::tok {

class PreTokenizer {
 public:
  virtual ~PreTokenizer() = default;
  // Splits every piece that is not an added token.
  virtual void pre_tokenize(Pieces& pieces) const = 0;
};

// nullptr for JSON null. Supported: ByteLevel, Split, Metaspace, Digits,
// Whitespace, WhitespaceSplit, Punctuation, BertPreTokenizer,
// CharDelimiterSplit, Sequence; anything else is an error naming the field.
std::unique_ptr<const PreTokenizer> parse_pre_tokenizer(const JsonField& j);

// GPT-2's split regex, which ByteLevel uses when use_regex is true.
extern const char kGpt2SplitPattern[];

}  // namespace kvscope::tok
