// The framebuffer as a PNG (the app's own --screenshot), and the state
// sidecar that says what is on it.
#pragma once

#include <string>

namespace kvscope::gui {

// Reads the current GL framebuffer (call after rendering, before the
// swap) and writes it as PNG. Returns "" or what went wrong.
std::string write_framebuffer_png(const std::string& path, int width, int height);

}  // namespace kvscope::gui
