// One frame of the window, apart from the GLFW / OpenGL plumbing of
// main.cpp: take over what the worker published, then draw every panel.
#pragma once

#include "app_state.h"

namespace kvscope::gui {

// Reads the worker's published runs and status; raises new errors as the
// banner; adopts a newly opened session's settings (and its session file's
// view and lesson blocks); follows the informative head until the user
// picks one.
void refresh_from_worker(AppState& s);

// The menu bar, every panel, the banner and the help overlay.
void draw_frame(AppState& s);

}  // namespace kvscope::gui
