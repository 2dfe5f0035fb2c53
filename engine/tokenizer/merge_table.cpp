#include "tokenizer/merge_table.h"

namespace kvscope::tok {

uint64_t MergeTable::hash(int left, int right) {
  // splitmix64's finalizer on the pair: every bit of both ids reaches the
  // low bits the table indexes by.
  uint64_t x = (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right);
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

MergeTable::MergeTable(std::vector<BpeMerge> by_rank) : by_rank_(std::move(by_rank)) {
  by_rank_.shrink_to_fit();  // held for the life of the tokenizer
  std::size_t capacity = 16;
  while (capacity * 3 < by_rank_.size() * 4) capacity *= 2;
  slots_.assign(capacity, 0);
  const std::size_t mask = capacity - 1;
  for (std::size_t r = 0; r < by_rank_.size(); ++r) {
    const BpeMerge& m = by_rank_[r];
    std::size_t i = hash(m.left, m.right) & mask;
    for (;; i = (i + 1) & mask) {
      if (slots_[i] == 0) break;
      const BpeMerge& there = by_rank_[slots_[i] - 1];
      if (there.left == m.left && there.right == m.right) break;  // listed again: the later rank wins
    }
    slots_[i] = static_cast<uint32_t>(r + 1);
  }
}

const BpeMerge* MergeTable::find(int left, int right) const {
  if (by_rank_.empty()) return nullptr;
  const std::size_t mask = slots_.size() - 1;
  for (std::size_t i = hash(left, right) & mask;; i = (i + 1) & mask) {
    const uint32_t s = slots_[i];
    if (s == 0) return nullptr;
    const BpeMerge& m = by_rank_[s - 1];
    if (m.left == left && m.right == right) return &m;
  }
}

std::size_t MergeTable::bytes_held() const {
  return by_rank_.capacity() * sizeof(BpeMerge) + slots_.capacity() * sizeof(uint32_t);
}

}  // namespace kvscope::tok
