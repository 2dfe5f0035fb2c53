#include "tokenizer/split_behavior.h"

#include <algorithm>

namespace kvscope::tok {

std::optional<SplitBehavior> parse_split_behavior(std::string_view name) {
  if (name == "Removed") return SplitBehavior::Removed;
  if (name == "Isolated") return SplitBehavior::Isolated;
  if (name == "MergedWithPrevious") return SplitBehavior::MergedWithPrevious;
  if (name == "MergedWithNext") return SplitBehavior::MergedWithNext;
  if (name == "Contiguous") return SplitBehavior::Contiguous;
  return std::nullopt;
}

std::vector<Span> spans_from_matches(size_t text_size, const std::vector<Match>& matches) {
  std::vector<Span> spans;
  if (text_size == 0) {
    spans.push_back({0, 0, false});
    return spans;
  }
  size_t prev = 0;
  for (const Match& m : matches) {
    if (prev != m.start) spans.push_back({prev, m.start, false});
    spans.push_back({m.start, m.end, true});
    prev = m.end;
  }
  if (prev != text_size) spans.push_back({prev, text_size, false});
  return spans;
}

void invert_spans(std::vector<Span>& spans) {
  for (Span& s : spans) s.is_match = !s.is_match;
}

std::vector<Match> apply_split_behavior(const std::vector<Span>& spans, SplitBehavior behavior) {
  std::vector<Match> out;
  out.reserve(spans.size());
  switch (behavior) {
    case SplitBehavior::Isolated:
      for (const Span& s : spans) out.push_back({s.start, s.end});
      break;
    case SplitBehavior::Removed:
      for (const Span& s : spans)
        if (!s.is_match) out.push_back({s.start, s.end});
      break;
    case SplitBehavior::Contiguous: {
      // Runs of equal kind merge; the first span always opens a piece.
      bool prev = false;
      for (const Span& s : spans) {
        if (s.is_match == prev && !out.empty())
          out.back().end = s.end;
        else
          out.push_back({s.start, s.end});
        prev = s.is_match;
      }
      break;
    }
    case SplitBehavior::MergedWithPrevious: {
      bool prev = false;
      for (const Span& s : spans) {
        if (s.is_match && !prev && !out.empty())
          out.back().end = s.end;
        else
          out.push_back({s.start, s.end});
        prev = s.is_match;
      }
      break;
    }
    case SplitBehavior::MergedWithNext: {
      // Same walk from the right: a match joins the piece that follows it.
      bool prev = false;
      for (auto it = spans.rbegin(); it != spans.rend(); ++it) {
        if (it->is_match && !prev && !out.empty())
          out.back().start = it->start;
        else
          out.push_back({it->start, it->end});
        prev = it->is_match;
      }
      std::reverse(out.begin(), out.end());
      break;
    }
  }
  return out;
}

}  // namespace kvscope::tok
