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
  void expand_portable(const float* src, float* dst) const {
    write_each(dst, [src](int j) { return src[j]; });
  }
  // dst[pos[j]] = value(j) for every held position, one store per slot (a
  // straight run when the positions are one): for values that are not a
  // float array, such as mask codes derived from slot states.
  template <typename T, typename F>
  void write_each(T* dst, F value) const {
    if (run_) {
      T* run = dst + pos_[0];
      for (int j = 0; j < len_; ++j) run[j] = value(j);
      return;
    }
    for (int j = 0; j < len_; ++j) dst[pos_[j]] = value(j);
  }

 private:
  const int* pos_ = nullptr;
  int len_ = 0;       // slots below `positions`
  bool run_ = false;  // the positions are one run: a straight copy
  std::vector<uint16_t> groups_;  // bit b of groups_[g]: position 16 g + b is held
};

}  // namespace kvscope
