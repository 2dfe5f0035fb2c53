// The host-side record of what every KV segment holds: for each slot, the
// absolute position of its token and the position its key was rotated to.
// Backends keep the K/V rows; this book says what they are, so policies,
// the recorder and the UI never read device memory to know the layout.
#pragma once

#include <span>
#include <vector>

#include "kv/kv_layout.h"

namespace kvscope {

class KvBook {
 public:
  KvBook() = default;
  KvBook(KvLayout layout, int capacity);

  const KvLayout& layout() const { return layout_; }
  int capacity() const { return capacity_; }
  int len(int seg) const { return static_cast<int>(pos_[seg].size()); }
  int max_len() const;
  int64_t total_slots() const;
  const std::vector<int>& positions(int seg) const { return pos_[seg]; }
  const std::vector<int>& rope_positions(int seg) const { return rope_pos_[seg]; }

  // Appends one token at absolute position `pos` to every segment, with its
  // key rotated to `rope_pos[seg]`. Throws when a segment is full.
  void append(int pos, std::span<const int> rope_pos_per_segment);
  // Keeps only `keep` (strictly ascending slot indices) of segment `seg`,
  // moving them to the front in order.
  void retain(int seg, std::span<const int> keep);
  // Sets the rotation position of every slot (after a re-rotation).
  void set_rope_positions(int seg, std::vector<int> rope_pos);
  void clear();

 private:
  KvLayout layout_;
  int capacity_ = 0;
  std::vector<std::vector<int>> pos_;
  std::vector<std::vector<int>> rope_pos_;
};

}  // namespace kvscope
