// The merges of a SentencePiece BPE vocabulary that lists none (a GGUF file
// with tokenizer.ggml.scores, or Gemma's, ordered by position), ranked
// without being listed. transformers makes them by splitting every token
// into two tokens of the vocabulary and sorting all the splits (Gemma 3:
// 514,847 of them, 10 MB as a merge table held for the tokenizer's life and
// ~40 MB while sorted). A split is a merge exactly when its two pieces are
// tokens and their concatenation is one, so the pair of ids a word's merge
// step asks about is answered by looking the concatenation up in the
// vocabulary, and its rank by the key the sort orders by.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "tokenizer/token_table.h"

namespace kvscope::tok {

class ScoreMerges {
 public:
  // Where a merge stands in transformers' list: by the score of the token
  // it makes (higher first), the lengths in code points of its left and
  // right pieces (longer first), the position where the token it makes is
  // first listed, then the pieces' ids. A lower Rank merges first.
  struct Rank {
    double score;
    uint32_t left_chars;
    uint32_t right_chars;
    uint32_t first_listed;
    int left;
    int right;
    bool operator<(const Rank& o) const;
  };
  struct Found {
    Rank rank;
    int merged;
  };

  // The merges of the vocabulary `tokens` (listed by id; `vocab` holds them,
  // a spelling listed twice keeping its last id). `scores[id]`: the score
  // of token `id`, one per token; empty: the score of `id` is -id (Gemma:
  // merges in the order of the tokens' positions). Throws
  // std::invalid_argument when the scores are neither empty nor one per
  // token.
  static ScoreMerges of_listing(const std::vector<std::string>& tokens, const TokenTable& vocab,
                                std::vector<double> scores);

  // The merge of `left` followed by `right`, tokens of `vocab` (the table
  // the scores are by id of), or nothing when their concatenation is not a
  // token.
  std::optional<Found> find(const TokenTable& vocab, int left, int right) const;

 private:
  ScoreMerges(std::vector<double> scores, std::unordered_map<int, uint32_t> first_listed);

  std::vector<double> scores_;
  // Where each token whose spelling is listed more than once is listed
  // first (for the others it is its id); usually empty.
  std::unordered_map<int, uint32_t> first_listed_;
};

}  // namespace kvscope::tok
