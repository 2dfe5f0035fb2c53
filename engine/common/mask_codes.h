// The slot states of masks.npy (docs/exports.md, "What an export contains"): what the
// recorder writes and what the figures draw, defined once.
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

}  // namespace kvscope
