// Oniguruma's Unicode properties (\p{Han}, \p{Lu}, \p{So}, ...) and POSIX
// brackets ([[:alpha:]], ...) as PCRE2 class items, from tables read out of
// the HF tokenizers release kvscope matches (onig_properties.inc, made by
// tools/gen_tokenizer_unicode_tables.py).
//
// Why not PCRE2's own: Debian's PCRE2 knows Unicode 14 where HF's Oniguruma
// knows 16; PCRE2 reads a bare script name as Script_Extensions where
// Oniguruma reads Script; and the POSIX brackets mean different sets
// (Oniguruma's [[:alpha:]] is Alphabetic, PCRE2's is \p{L}).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace kvscope::tok::onig_properties {

// Items to put inside [...] for \p{name} (or \P{name} when `negate`), e.g.
// "\\x{3400}-\\x{4DBF}...". nullopt for names the table does not have (the
// caller then leaves the property to PCRE2). Names compare as Oniguruma
// compares them: case, spaces, '_' and '-' ignored.
std::optional<std::string> property_items(std::string_view name, bool negate);

// The same for a POSIX bracket name ("alpha", "digit", ...).
std::optional<std::string> posix_items(std::string_view name, bool negate);

}  // namespace kvscope::tok::onig_properties
