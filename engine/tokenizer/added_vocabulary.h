// tokenizer.json "added_tokens": tokens matched in the raw text before any
// normalization or pre-tokenization (special tokens like <|endoftext|>, and
// user-added ones), with HF's single_word / lstrip / rstrip / normalized rules.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "tokenizer/bpe_model.h"
#include "tokenizer/json_field.h"
#include "tokenizer/normalizers.h"
#include "tokenizer/piece.h"

namespace kvscope::tok {

struct AddedToken {
  int id = -1;
  std::string content;
  bool single_word = false;
  bool lstrip = false;
  bool rstrip = false;
  bool normalized = true;
  bool special = false;
  // What decode() and piece() use: HF hands the decoder the normalized form
  // of a normalized token (it matched normalized text), else the content.
  std::string decode_text;
};

class AddedVocabulary {
 public:
  // Reads the added_tokens array; ids must agree with the model vocabulary.
  static AddedVocabulary parse(const JsonField& list, const BpeModel& model, const Normalizer* normalizer);

  // HF's extract_and_normalize: splits out non-normalized tokens on the raw
  // text, normalizes the rest, then splits out normalized tokens.
  Pieces extract_and_normalize(std::string_view text, const Normalizer* normalizer) const;

  const AddedToken* by_id(int id) const;
  std::optional<int> id_of(std::string_view content) const;
  // HF decides "special" when decoding by the token's string.
  bool is_special_content(std::string_view s) const;
  int max_id() const { return max_id_; }
  const std::vector<AddedToken>& tokens() const { return tokens_; }

 private:
  // A byte trie for leftmost-longest matching (HF uses Aho-Corasick with the
  // same match kind). Built by insert(), then frozen into two flat arrays
  // for lookups: a node's children lie together in `edges`, sorted by byte.
  // (Gemma 3's 6,000-odd added tokens made ~1.2 MB of per-node vectors.)
  struct Trie {
    using Edge = std::pair<unsigned char, int>;  // byte, child node
    struct Node {
      uint32_t first_edge = 0, edges = 0;
      int token = -1;  // index into tokens_
    };
    std::vector<Node> nodes{Node{}};
    std::vector<Edge> edges;
    void insert(std::string_view pattern, int token);  // before freeze()
    void freeze();
    // Longest pattern starting at text[pos]: (token index, length) or token -1.
    std::pair<int, size_t> longest_at(std::string_view text, size_t pos) const;  // after freeze()
    bool empty() const { return nodes.size() == 1; }

   private:
    struct Growing {
      std::vector<Edge> children;  // sorted by byte
      int token = -1;
    };
    std::vector<Growing> growing_{Growing{}};
  };

  void split(Pieces& pieces, const Trie& trie) const;

  std::vector<AddedToken> tokens_;
  std::unordered_map<int, size_t> index_by_id_;
  std::unordered_map<std::string, int, StringHash, std::equal_to<>> id_by_content_;
  std::unordered_set<std::string, StringHash, std::equal_to<>> special_contents_;
  Trie raw_trie_;         // normalized == false, matched on raw text
  Trie normalized_trie_;  // normalized == true, matched on normalized text
  int max_id_ = -1;
};

}  // namespace kvscope::tok
