// The {"String": "..."} / {"Regex": "..."} patterns of tokenizer.json
// (Split pre-tokenizer, Replace normalizer and decoder).
#pragma once

#include "tokenizer/json_field.h"
#include "tokenizer/regex.h"

namespace kvscope::tok {

// A String pattern matches literally; a Regex pattern uses Oniguruma syntax.
// Fails naming the field when neither is given or the regex is invalid.
Regex parse_pattern(const JsonField& j);

}  // namespace kvscope::tok
