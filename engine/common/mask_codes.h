// The slot states of masks.npy (docs/exports.md, "What an export contains"): what the
// recorder writes and what the figures draw, defined once; and the codes
// of a fork's comparison, built from two of them.
#pragma once

#include <cstdint>

namespace kvscope {

enum MaskCode : uint8_t {
  kNotSeen = 0,
  kMaskKept = 1,
  kMaskProtected = 2,  // kept, protected (sink or recent window)
  kEvictedNow = 3,
  kEvictedEarlier = 4,
  // Non-evicting policies (ideal) only: still in the cache, but outside the
  // top k that the mask shows; it can be back in the top k a step later.
  kOutsideTopK = 5,
};

inline bool is_kept(uint8_t mask_code) { return mask_code == kMaskKept || mask_code == kMaskProtected; }

// A fork's comparison, cell by cell: A's mask against B's (the window's
// "mask A vs B" panel and the fork_difference figure of an export). Codes
// of their own, above the slot states, so one palette holds both.
enum ForkCode : uint8_t {
  kForkBothKeep = 24,
  kForkOnlyA = 25,
  kForkOnlyB = 26,
  kForkBothEvicted = 27,
};

// kNotSeen where either run has not seen the position yet.
inline uint8_t fork_code(uint8_t a, uint8_t b) {
  if (a == kNotSeen || b == kNotSeen) return kNotSeen;
  const bool ka = is_kept(a), kb = is_kept(b);
  return ka && kb ? kForkBothKeep : ka ? kForkOnlyA : kb ? kForkOnlyB : kForkBothEvicted;
}

}  // namespace kvscope
