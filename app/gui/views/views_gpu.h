// Whether the views' GL resources are usable, and the message when not
// (a driver that refuses the shaders): the views then print it instead of
// drawing heatmaps, and the rest of the window keeps working.
#pragma once

#include <string>

namespace kvscope::gui {

bool views_gpu_ready();
const std::string& views_gpu_error();
// Registered by each view that owns GL objects, run by shutdown_views().
void on_views_shutdown(void (*release)());

}  // namespace kvscope::gui
