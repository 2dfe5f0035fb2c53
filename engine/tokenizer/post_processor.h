// tokenizer.json "post_processor": the special tokens put around an encoded
// sequence when add_special_tokens is true (Llama's BOS, BERT's [CLS]/[SEP]).
// kvscope encodes single sequences only, so every supported processor comes
// down to fixed tokens before and after the text.
#pragma once

#include <string>
#include <vector>

#include "tokenizer/json_field.h"

namespace kvscope::tok {

struct SpecialPiece {
  int id;
  std::string token;
};

struct PostProcessing {
  std::vector<SpecialPiece> prefix;
  std::vector<SpecialPiece> suffix;
};

// Supported: TemplateProcessing (its "single" template), RobertaProcessing,
// BertProcessing, ByteLevel (adds nothing), Sequence, null.
PostProcessing parse_post_processor(const JsonField& j);

}  // namespace kvscope::tok
