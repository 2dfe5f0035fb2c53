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
#include <vector>

#include "tokenizer/json_field.h"

namespace kvscope::tok {

// Hash that lets unordered_map<std::string, ...> be searched with a
// string_view, so lookups of pieces of a word do not allocate.
struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
using StringIdMap = std::unordered_map<std::string, int, StringHash, std::equal_to<>>;

class BpeModel {
 public:
  // Ids above this are refused: they would only waste memory in id tables.
  static constexpr int kMaxId = (1 << 24) - 1;

  // Reads model.{vocab, merges, unk_token, byte_fallback, fuse_unk,
  // ignore_merges, continuing_subword_prefix, end_of_word_suffix, dropout}.
  static std::unique_ptr<BpeModel> parse(const JsonField& model);

  // Appends the ids of one pre-token (what HF calls a word). Thread-safe.
  void tokenize(std::string_view word, std::vector<int>& ids) const;

  std::optional<int> token_to_id(std::string_view token) const;
  // nullptr for ids that are not in the vocabulary.
  const std::string* id_to_token(int id) const;
  int max_id() const { return static_cast<int>(by_id_.size()) - 1; }
  size_t size() const { return vocab_.size(); }

 private:
  struct MergeValue {
    uint32_t rank;
    int new_id;
  };
  struct Symbol {
    int id;
    int prev;
    int next;
    size_t len;  // bytes of the word this symbol covers; 0 once merged away
  };

  std::vector<Symbol> split_word(std::string_view word) const;
  void merge_all(std::vector<Symbol>& symbols) const;
  const MergeValue* find_merge(int a, int b) const;

  std::string source_;  // file name, for the error thrown when unk_token is missing
  StringIdMap vocab_;
  std::vector<const std::string*> by_id_;  // points into vocab_'s keys (stable)
  std::unordered_map<uint64_t, MergeValue> merges_;
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
