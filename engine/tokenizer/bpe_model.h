// tokenizer.json "model" of type BPE: vocabulary, ranked merges, and HF's
// exact merge order (lowest rank first, leftmost among equal ranks).
#pragma once

#include <array>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <variant>
#include <vector>

#include "tokenizer/json_field.h"
#include "tokenizer/merge_table.h"
#include "tokenizer/score_merges.h"
#include "tokenizer/streamed_bpe.h"
#include "tokenizer/token_table.h"

namespace kvscope::tok {

// Hash that lets unordered_map<std::string, ...> be searched with a
// string_view, so lookups of pieces of a word do not allocate.
struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

// A BPE model's merges: listed, or ranked by its vocabulary's scores.
using BpeMerges = std::variant<MergeTable, ScoreMerges>;

// What tokenizer.json's model says besides its vocabulary and merges.
struct BpeOptions {
  std::optional<std::string> unk_token;
  bool byte_fallback = false;
  bool fuse_unk = false;
  bool ignore_merges = false;
  std::string continuing_subword_prefix;
  std::string end_of_word_suffix;
};

class BpeModel {
 public:
  // Ids above this are refused: they would only waste memory in id tables.
  static constexpr int kMaxId = (1 << 24) - 1;

  // Reads model.{vocab, merges, unk_token, byte_fallback, fuse_unk,
  // ignore_merges, continuing_subword_prefix, end_of_word_suffix, dropout}
  // of a document read by parse_streaming_bpe: the vocabulary and merges
  // from `taken`, where that parse put them.
  static std::unique_ptr<BpeModel> parse(const JsonField& model, const StreamedBpe& taken);

  // A model from parts read elsewhere (a GGUF file's metadata); `source`
  // names the file in errors thrown while tokenizing. The merges are listed
  // (MergeTable) or ranked by the vocabulary's scores (ScoreMerges).
  BpeModel(std::string source, BpeOptions options, TokenTable vocab, BpeMerges merges);

  // The ids of merge "left right" and of the token it makes (left followed by
  // right without its continuing_subword_prefix); else what is wrong, naming
  // the vocabulary as `vocab_name`.
  static std::variant<BpeMerge, std::string> resolve_merge(const TokenTable& vocab, std::string_view left,
                                                           std::string_view right, std::string_view prefix,
                                                           std::string_view vocab_name);

  // Appends the ids of one pre-token (what HF calls a word). Thread-safe.
  void tokenize(std::string_view word, std::vector<int>& ids) const;

  std::optional<int> token_to_id(std::string_view token) const { return vocab_.find(token); }
  // Nothing for ids that are not in the vocabulary.
  std::optional<std::string_view> id_to_token(int id) const { return vocab_.spelling(id); }
  int max_id() const { return vocab_.max_id(); }
  size_t size() const { return vocab_.size(); }

 private:
  struct Symbol {
    int id;
    int prev;
    int next;
    size_t len;  // bytes of the word this symbol covers; 0 once merged away
  };

  std::vector<Symbol> split_word(std::string_view word) const;
  void merge_all(std::vector<Symbol>& symbols) const;
  template <class Merges>
  void merge_all_by(const Merges& merges, std::vector<Symbol>& symbols) const;
  // Looks up the ids the options name (unk_token, the "<0xXX>" byte tokens).
  void find_named_ids();

  std::string source_;  // file name, for the error thrown when unk_token is missing
  TokenTable vocab_;
  BpeMerges merges_;
  std::optional<std::string> unk_token_;
  std::optional<int> unk_id_;
  bool byte_fallback_ = false;
  bool fuse_unk_ = false;
  bool ignore_merges_ = false;
  std::string prefix_;  // continuing_subword_prefix
  std::string suffix_;  // end_of_word_suffix
  std::array<int, 256> byte_ids_{};  // id of "<0xXX>", -1 when absent

  // Words seen before (HF keeps the same kind of cache). Guarded so concurrent
  // encodes are safe; bounded so memory stays flat.
  static constexpr size_t kCacheCapacity = 10000;
  static constexpr size_t kCacheMaxWordBytes = 256;
  mutable std::shared_mutex cache_mutex_;
  mutable std::unordered_map<std::string, std::vector<int>, StringHash, std::equal_to<>> cache_;
};

}  // namespace kvscope::tok
