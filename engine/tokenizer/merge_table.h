// BPE merges by rank and the rank of a pair of ids, as a tokenizer.json or
// a GGUF file lists them. The merges lie in one array in rank order and the
// index is an open-addressing table of ranks: 17-23 bytes a merge where a
// node-based map took ~40 (Gemma 3's tokenizer.json lists 514,847; its
// GGUF file lists none: score_merges.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace kvscope::tok {

struct BpeMerge {
  int left;
  int right;
  int merged;  // the id of the token the two become
};

class MergeTable {
 public:
  MergeTable() = default;
  // `by_rank[r]` has rank r. A pair listed twice keeps its last rank, as HF's
  // map insertion does.
  explicit MergeTable(std::vector<BpeMerge> by_rank);

  // The merge of `left` followed by `right`, or nullptr.
  const BpeMerge* find(int left, int right) const;
  uint32_t rank_of(const BpeMerge* m) const { return static_cast<uint32_t>(m - by_rank_.data()); }

  std::size_t size() const { return by_rank_.size(); }
  std::size_t bytes_held() const;

 private:
  static uint64_t hash(int left, int right);

  std::vector<BpeMerge> by_rank_;
  std::vector<uint32_t> slots_;  // rank + 1; 0: empty. Size a power of two, at most 3/4 full
};

}  // namespace kvscope::tok
