#include "kv/kv_book.h"

#include <algorithm>

#include "common/error.h"

namespace kvscope {

KvBook::KvBook(KvLayout layout, int capacity)
    : layout_(std::move(layout)), capacity_(capacity), pos_(layout_.n_segments()), rope_pos_(layout_.n_segments()) {
  for (auto& p : pos_) p.reserve(capacity);
  for (auto& p : rope_pos_) p.reserve(capacity);
}

int KvBook::max_len() const {
  int m = 0;
  for (const auto& p : pos_) m = std::max(m, static_cast<int>(p.size()));
  return m;
}

int64_t KvBook::total_slots() const {
  int64_t n = 0;
  for (const auto& p : pos_) n += static_cast<int64_t>(p.size());
  return n;
}

void KvBook::append(int pos, std::span<const int> rope_pos) {
  for (int s = 0; s < layout_.n_segments(); ++s) {
    if (len(s) >= capacity_)
      throw Error("kv cache", "capacity", "segment full (" + std::to_string(capacity_) + " slots)");
    pos_[s].push_back(pos);
    rope_pos_[s].push_back(rope_pos[s]);
  }
}

void KvBook::retain(int seg, std::span<const int> keep) {
  auto& p = pos_[seg];
  auto& r = rope_pos_[seg];
  int prev = -1;
  for (std::size_t i = 0; i < keep.size(); ++i) {
    const int slot = keep[i];
    if (slot <= prev || slot >= static_cast<int>(p.size()))
      throw Error("kv cache", "retain", "slot list must be strictly ascending and inside the segment");
    prev = slot;
    p[i] = p[slot];
    r[i] = r[slot];
  }
  p.resize(keep.size());
  r.resize(keep.size());
}

void KvBook::set_rope_positions(int seg, std::vector<int> rope_pos) { rope_pos_[seg] = std::move(rope_pos); }

void KvBook::clear() {
  for (auto& p : pos_) p.clear();
  for (auto& p : rope_pos_) p.clear();
}

}  // namespace kvscope
