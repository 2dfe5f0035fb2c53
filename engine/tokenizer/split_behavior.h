// How HF turns a list of matches into pieces (SplitDelimiterBehavior), shared
// by the Split, Digits, Punctuation, Metaspace and whitespace pre-tokenizers.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

#include "tokenizer/regex.h"

namespace kvscope::tok {

enum class SplitBehavior { Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous };

// Parses HF's spelling ("Isolated", ...); nullopt when unknown.
std::optional<SplitBehavior> parse_split_behavior(std::string_view name);

struct Span {
  size_t start;
  size_t end;
  bool is_match;
};

// The whole text as alternating non-match / match spans (HF's
// Pattern::find_matches for a regex); an empty text gives one empty span.
std::vector<Span> spans_from_matches(size_t text_size, const std::vector<Match>& matches);

// Same for a character predicate: every matching character is its own match.
template <typename Pred>
std::vector<Span> spans_from_chars(std::string_view text, Pred is_delimiter);

// Flips is_match (HF's Invert pattern).
void invert_spans(std::vector<Span>& spans);

// The byte ranges HF keeps for `behavior` (empty ranges included; callers
// drop them, as HF's PreTokenizedString::split does).
std::vector<Match> apply_split_behavior(const std::vector<Span>& spans, SplitBehavior behavior);

}  // namespace kvscope::tok

#include "tokenizer/utf8.h"

namespace kvscope::tok {

template <typename Pred>
std::vector<Span> spans_from_chars(std::string_view text, Pred is_delimiter) {
  std::vector<Span> spans;
  if (text.empty()) {
    spans.push_back({0, 0, false});
    return spans;
  }
  size_t last = 0, i = 0;
  while (i < text.size()) {
    size_t start = i;
    char32_t c = utf8::decode(text, i);
    if (is_delimiter(c)) {
      if (last < start) spans.push_back({last, start, false});
      spans.push_back({start, i, true});
      last = i;
    }
  }
  if (last < text.size()) spans.push_back({last, text.size(), false});
  return spans;
}

}  // namespace kvscope::tok
