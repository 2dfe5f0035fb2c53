// The absolute positions one KV segment holds at a step, as a bitmap, for
// copying the segment's per-slot values (its heads' attention rows, its
// statistic) into the recorder's rows, which are indexed by position. The
// recorder copies several rows per segment every step; with the bitmap
// built once, each row is one pass of 16-position groups (an AVX-512
// expand where the CPU has it) instead of a store per slot.
#pragma once

#include <cstdint>
#include <vector>

namespace kvscope {

class PositionSet {
 public:
  // `pos` ascending; positions at or above `positions` are left out.
  void assign(const int* pos, int len, int positions);

  // dst[pos[j]] = src[j] for every held position; other cells untouched.
  void expand(const float* src, float* dst) const;
  // The same without vector instructions (what `expand` does on CPUs
  // without AVX-512, and what the tests compare it with).
  void expand_portable(const float* src, float* dst) const;

 private:
  const int* pos_ = nullptr;
  int len_ = 0;       // slots below `positions`
  bool run_ = false;  // the positions are one run: a straight copy
  std::vector<uint16_t> groups_;  // bit b of groups_[g]: position 16 g + b is held
};

}  // namespace kvscope
