// Which tokens the score curves show when the user has chosen none: the
// ones where the decision is close. At the shown step the threshold is the
// k-th best statistic (the lowest kept on merit); the picks are the tokens
// whose statistic is nearest it, `per_side` just above or at it (the next
// to go) and `per_side` just below it (evicted here, or held only by the
// sink / recent window, and next in line to come back or compete).
// A pure function so the rule is tested without a window
// (tests/gui/test_grid_layout.cpp); the tooltip quotes kCurvePickRule.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace kvscope::gui {

// scores[p] and masks[p]: the statistic and the mask code of position p at
// the shown step. Only positions in the cache before this step count (not
// unseen, not evicted at an earlier step) and with a finite statistic.
// A NaN threshold (nothing kept on merit) picks the 2 x per_side best.
// Returns positions, the ones above the threshold first (nearest first),
// then the ones below (nearest first); ties go to the earlier position.
std::vector<int> pick_curve_positions(std::span<const float> scores, std::span<const uint8_t> masks, float threshold,
                                      int per_side);

extern const char* const kCurvePickRule;

}  // namespace kvscope::gui
