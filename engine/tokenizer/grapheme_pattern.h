// Oniguruma's \X (one extended grapheme cluster) as a PCRE2 pattern, so a
// tokenizer.json regex with \X splits like HF tokenizers.
//
// Why not PCRE2's own \X: Debian's PCRE2 (10.42) knows Unicode 14 where HF's
// Oniguruma knows 16, so newer marks (U+0CF3, U+0ECE, Kawi) fall off their
// base; and its \X joins an emoji ZWJ sequence to a pictograph after it
// with no joiner between (two families become one cluster) and across a
// doubled joiner. The classes come from onig_grapheme.inc (read out of HF's
// \X by tools/gen_tokenizer_grapheme_tables.py); the rules are UAX #29's
// extended grapheme cluster without GB9c (HF keeps क् and षि apart).
#pragma once

#include <string>

namespace kvscope::tok {

// A group (no captures) that matches exactly one cluster at the current
// position; never empty, never inside [...].
const std::string& grapheme_cluster_pattern();

}  // namespace kvscope::tok
