// The controls above the main view: mode, colormap, scale, range, the
// shared-range switch, how evicted cells are marked, follow-latest and fit,
// and in the fork comparison what its third panel shows.
#pragma once

#include "app_state.h"

namespace kvscope::gui {

// Edits s.view.
void draw_view_toolbar(AppState& s);
// Every colormap name, for combos.
const std::vector<std::string>& colormap_choices();

}  // namespace kvscope::gui
