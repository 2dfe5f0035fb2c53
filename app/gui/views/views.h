// The views of the window (issue 16, "Views" and "Rendering"): the main
// heatmap view, the layers x heads grid, the score curves and the token
// strip. main.cpp calls these inside ImGui windows it creates; each fills
// the current window's content region and keeps its GPU caches here.
#pragma once

#include "app_state.h"
#include "imgui.h"

namespace kvscope::gui {

void init_views();                 // after the GL context exists (compiles shaders, creates colormap textures)
void shutdown_views();             // before the GL context is destroyed
void draw_main_view(AppState& s);  // fills the available content region of the current window
void draw_grid_panel(AppState& s);
void draw_score_curves_panel(AppState& s);
void draw_token_strip(AppState& s);

}  // namespace kvscope::gui
