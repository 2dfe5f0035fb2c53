// The controls above the main view: mode, colormap, scale, range, the
// shared-range switch, how evicted cells are marked, follow-latest and fit.
#pragma once

#include "app_state.h"

namespace kvscope::gui {

// How the fork comparison's third panel shows A against B.
enum class ForkDifference { Attention, Masks };

void draw_view_toolbar(AppState& s, ForkDifference& fork_difference);
// Every colormap name, for combos.
const std::vector<std::string>& colormap_choices();

}  // namespace kvscope::gui
