// Character classes written the way HF tokenizers' regex engines define them
// (Oniguruma for tokenizer.json patterns, Rust's regex crate for added-token
// single_word), as items for a PCRE2 character class.
//
// Why: HF's engines know Unicode 16, while Debian's PCRE2 10.42 knows
// Unicode 14. Letters and digits added since (e.g. U+A7CB, CJK extension H)
// would otherwise split differently. PCRE2's own property is kept and the
// missing ranges are added, so a newer PCRE2 stays correct too. \s and \w
// also differ in definition, not only in version (see below).
#pragma once

#include <string>

namespace kvscope::tok::unicode_classes {

// Items to put inside [...] (no brackets), e.g. "\\p{L}\\x{1C89}-\\x{1C8A}...".
const std::string& letter();          // \p{L}
const std::string& number();          // \p{N}
const std::string& decimal_number();  // \p{Nd}, Oniguruma's \d
// Oniguruma's \w: Alphabetic | Mark | Decimal_Number | Connector_Punctuation
// (PCRE2's is only letters, numbers and underscore).
const std::string& word();
// Rust regex's \w (UTS #18: Alphabetic | Mark | Decimal_Number |
// Connector_Punctuation | Join_Control), which HF's single_word uses. Unlike
// Oniguruma's it excludes other numbers such as "²".
const std::string& rust_word();
// Oniguruma's \s: exactly Unicode White_Space (PCRE2 adds U+180E).
const std::string& space();

}  // namespace kvscope::tok::unicode_classes
