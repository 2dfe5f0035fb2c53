// The regexes of tokenizer.json, run with PCRE2 but behaving like the
// Oniguruma engine HF tokenizers uses: the pattern is translated first
// (character classes, Ruby-syntax anchors), and matches are enumerated with
// Oniguruma's find_iter rule for empty matches.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace kvscope::tok {

struct Match {
  size_t start;
  size_t end;
};

class Regex {
 public:
  // Compiles an Oniguruma-syntax pattern. Throws std::invalid_argument with a
  // readable reason (the caller adds file and field).
  static Regex compile(const std::string& onig_pattern);
  // A pattern that matches `text` literally (HF's {"String": ...} patterns).
  static Regex literal(std::string_view text);

  // All non-overlapping matches, left to right, like onig's find_iter: an
  // empty match right where the previous match ended is skipped and the
  // search moves one character on. `text` must be valid UTF-8.
  // Safe to call from many threads at once.
  std::vector<Match> find_all(std::string_view text) const;

  // The pattern PCRE2 actually compiled (for tests and error messages).
  const std::string& pcre_pattern() const { return pcre_pattern_; }

  // Exposed for tests: the Oniguruma -> PCRE2 translation alone.
  static std::string translate(const std::string& onig_pattern);

 private:
  struct Code;
  static std::shared_ptr<const Code> compile_pcre(const std::string& pattern);
  std::shared_ptr<const Code> code_;
  std::string pcre_pattern_;
};

}  // namespace kvscope::tok
