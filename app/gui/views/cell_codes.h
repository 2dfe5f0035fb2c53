// The codes a heatmap's code texture holds: the recorder's mask codes
// (common/mask_codes.h, 0..5) and, for the comparison views, codes of their
// own above them. One palette (palette.cpp) colours all of them.
#pragma once

#include <cstdint>

#include "common/mask_codes.h"

namespace kvscope::gui {

// Ideal overlay: A's mask against the top k of A's own attention at that row.
enum IdealCode : uint8_t {
  kIdealBoth = 16,       // kept, and in the top k: the policy agrees
  kIdealKeptOnly = 17,   // kept, but not in the top k: a slot spent on a token not read now
  kIdealTopKOnly = 18,   // in the top k, but evicted: what the policy lost
  kIdealNeither = 19,    // evicted, and not in the top k
};

// Fork comparison: mask A against mask B.
enum ForkCode : uint8_t {
  kForkBothKeep = 24,
  kForkOnlyA = 25,
  kForkOnlyB = 26,
  kForkBothEvicted = 27,
};

inline constexpr int kPaletteSize = 32;

inline bool is_kept(uint8_t mask_code) { return mask_code == kMaskKept || mask_code == kMaskProtected; }

}  // namespace kvscope::gui
