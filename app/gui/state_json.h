// What the window shows, as JSON: the screenshot's sidecar and the
// --state-file that tests poll (rows, selection, mode and the other view
// settings, policy, fork, window size and the screen rectangles of the
// panels and of a few widgets, so a test can crop a panel or click a
// button).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "app_state.h"

namespace kvscope::gui {

// {"format": "kvscope-window-state", ...}: the format names the files
// kvscope may replace (may_replace_state_file).
nlohmann::json state_json(const AppState& s, int framebuffer_width, int framebuffer_height);

// Whether `path` is free for a window state: absent, or a state kvscope
// wrote (its format; a sidecar from before the format had "rects" and
// "window" at the top). Anything else is the user's and is never replaced.
bool may_replace_state_file(const std::string& path);

// Writes `text` to `path` through a temporary file (a poller never reads
// half a file). Returns false on failure.
bool write_text_atomically(const std::string& path, const std::string& text);

}  // namespace kvscope::gui
