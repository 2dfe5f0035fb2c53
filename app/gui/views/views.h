// The views of the window: the main heatmap view, the layers x heads grid,
// the score curves and the token strip. app_frame.cpp calls these inside
// ImGui windows it creates; each fills the current window's content region.
// What they keep between frames is in AppState (the user's choices, the
// selection) and in the frame's ViewCaches (GL objects, caches).
#pragma once

#include "app_state.h"
#include "imgui.h"
#include "views/view_caches.h"

namespace kvscope::gui {

void draw_main_view(AppState& s, ViewCaches& caches);  // fills the available content region of the current window
void draw_grid_panel(AppState& s, ViewCaches& caches);
void draw_score_curves_panel(AppState& s, ViewCaches& caches);
void draw_token_strip(AppState& s);

}  // namespace kvscope::gui
