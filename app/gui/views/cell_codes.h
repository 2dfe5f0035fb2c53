// The codes a heatmap's code texture holds: the recorder's mask codes and
// the fork comparison's (common/mask_codes.h, shared with the exported
// figures) and, for the ideal overlay, codes of the window's own above
// them. One palette (palette.cpp) colours all of them.
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

inline constexpr int kPaletteSize = 32;

}  // namespace kvscope::gui
