// A BPE vocabulary: each token's spelling by id, and the id of a spelling.
// Spellings sit end to end in one buffer and the index is an open-addressing
// table of 4-byte slots (an id and 7 bits of its spelling's hash), so a
// 262,144-token vocabulary (Gemma 3) takes ~6.5 MB and is built without one
// allocation per token (a node-based map took ~19 MB and most of the
// tokenizer's build time in cache misses).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kvscope::tok {

class TokenTable {
 public:
  // Room for `tokens` spellings of `bytes` bytes in all, so that adding them
  // reallocates nothing (optional).
  void reserve(std::size_t tokens, std::size_t bytes);

  // Gives `spelling` the id `id` (0 <= id < 2^25 - 1, else std::length_error;
  // the tokenizers refuse ids above BpeModel::kMaxId before they get here).
  // A spelling added again moves to the new id and leaves its old id without
  // a spelling, as a Python dict built from (spelling, id) pairs keeps the
  // last. When `id` already has another spelling nothing is added and that
  // spelling is returned (a copy: the caller names both in its error).
  std::optional<std::string> add(std::string_view spelling, int id);

  std::optional<int> find(std::string_view spelling) const;
  // The spelling of `id`, or nothing for an id no spelling has. The view is
  // valid until the next add().
  std::optional<std::string_view> spelling(int id) const;

  int max_id() const { return static_cast<int>(spans_.size()) - 1; }  // -1 when empty
  std::size_t size() const { return count_; }                         // ids that have a spelling
  // Bytes held, for the memory tests and notes.
  std::size_t bytes_held() const;

 private:
  struct Span {
    uint32_t offset;
    uint32_t length;  // kAbsent: the id has no spelling
  };
  // A slot: bits 25-31 the top 7 bits of the spelling's hash (checked
  // before the bytes), bits 0-24 the id + 1 (ids are below 2^24); 0: empty.
  using Slot = uint32_t;
  static constexpr int kIdBits = 25;
  static constexpr Slot kIdMask = (Slot(1) << kIdBits) - 1;
  static Slot tag_of(uint64_t h) { return static_cast<Slot>(h >> 57) << kIdBits; }
  static int id_in(Slot s) { return static_cast<int>(s & kIdMask) - 1; }
  static constexpr uint32_t kAbsent = UINT32_MAX;

  static uint64_t hash(std::string_view s);
  // The slot holding `spelling`, or the empty slot where it would go.
  std::size_t slot_of(std::string_view spelling, uint64_t h) const;
  void grow_index(std::size_t capacity);

  std::string text_;         // every spelling, in the order added
  std::vector<Span> spans_;  // by id
  std::vector<Slot> slots_;  // size a power of two, at most 5/8 full
  std::size_t count_ = 0;
};

}  // namespace kvscope::tok
