#include "tokenizer/score_merges.h"

#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>

#include "tokenizer/utf8.h"

namespace kvscope::tok {

namespace {

// Code points as transformers' generate_merges counts a piece (Python's len).
uint32_t code_points(std::string_view s) {
  uint32_t n = 0;
  for (std::size_t at = 0; at < s.size(); ++n) utf8::decode(s, at);
  return n;
}

}  // namespace

bool ScoreMerges::Rank::operator<(const Rank& o) const {
  // Scores compare as numbers (-0 equals 0), as the sort's key does.
  if (score != o.score) return score > o.score;
  if (left_chars != o.left_chars) return left_chars > o.left_chars;
  if (right_chars != o.right_chars) return right_chars > o.right_chars;
  if (first_listed != o.first_listed) return first_listed < o.first_listed;
  if (left != o.left) return left < o.left;
  return right < o.right;
}

ScoreMerges::ScoreMerges(std::vector<double> scores, std::unordered_map<int, uint32_t> first_listed)
    : scores_(std::move(scores)), first_listed_(std::move(first_listed)) {
  scores_.shrink_to_fit();
}

ScoreMerges ScoreMerges::of_listing(const std::vector<std::string>& tokens, const TokenTable& vocab,
                                    std::vector<double> scores) {
  if (!scores.empty() && scores.size() != tokens.size())
    throw std::invalid_argument("ScoreMerges: " + std::to_string(scores.size()) + " scores for " +
                                std::to_string(tokens.size()) + " tokens");
  // transformers visits the tokens in the order of their first listing.
  std::unordered_map<int, uint32_t> first_listed;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    const auto kept = vocab.find(tokens[i]);
    if (kept && static_cast<std::size_t>(*kept) != i) first_listed.try_emplace(*kept, static_cast<uint32_t>(i));
  }
  return ScoreMerges(std::move(scores), std::move(first_listed));
}

std::optional<ScoreMerges::Found> ScoreMerges::find(const TokenTable& vocab, int left, int right) const {
  const auto l = vocab.spelling(left), r = vocab.spelling(right);
  if (!l || !r) return std::nullopt;
  // Tokens are short; the rare long pair goes through the heap.
  char local[256];
  std::string heap;
  std::string_view whole;
  if (l->size() + r->size() <= sizeof local) {
    std::memcpy(local, l->data(), l->size());
    std::memcpy(local + l->size(), r->data(), r->size());
    whole = std::string_view(local, l->size() + r->size());
  } else {
    heap.reserve(l->size() + r->size());
    heap.append(*l).append(*r);
    whole = heap;
  }
  const auto merged = vocab.find(whole);
  if (!merged) return std::nullopt;
  const auto m = static_cast<std::size_t>(*merged);
  const double score = scores_.empty() ? -static_cast<double>(*merged) : scores_[m];
  uint32_t first = static_cast<uint32_t>(*merged);
  if (!first_listed_.empty())
    if (const auto listed = first_listed_.find(*merged); listed != first_listed_.end()) first = listed->second;
  return Found{Rank{score, code_points(*l), code_points(*r), first, left, right}, *merged};
}

}  // namespace kvscope::tok
