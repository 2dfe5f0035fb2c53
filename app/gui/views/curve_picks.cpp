#include "views/curve_picks.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "common/mask_codes.h"

namespace kvscope::gui {

const char* const kCurvePickRule =
    "auto: the tokens where the decision is close: the two whose statistic at the shown step is nearest above the "
    "threshold (the k-th best, lowest kept on merit: the next to go) and the two nearest below it (evicted here or "
    "held only by the sink or recent window), then the bookmarks.";

std::vector<int> pick_curve_positions(std::span<const float> scores, std::span<const uint8_t> masks, float threshold,
                                      int per_side) {
  std::vector<std::pair<float, int>> above, below;  // (distance to the threshold, position)
  const std::size_t n = std::min(scores.size(), masks.size());
  for (std::size_t p = 0; p < n; ++p) {
    if (masks[p] == kNotSeen || masks[p] == kEvictedEarlier || !std::isfinite(scores[p])) continue;
    if (std::isnan(threshold)) above.push_back({-scores[p], int(p)});  // no threshold: the best ones
    else if (scores[p] >= threshold) above.push_back({scores[p] - threshold, int(p)});
    else below.push_back({threshold - scores[p], int(p)});
  }
  if (std::isnan(threshold)) per_side *= 2;
  std::vector<int> out;
  for (auto* side : {&above, &below}) {
    std::sort(side->begin(), side->end());
    for (int i = 0; i < std::min<int>(per_side, int(side->size())); ++i) out.push_back((*side)[i].second);
  }
  return out;
}

}  // namespace kvscope::gui
