// The GLSL of shaders/, compiled into the binary by embed_shaders.cmake.
#pragma once

namespace kvscope::gui {

// The source of shaders/<name> (e.g. "heatmap.frag.glsl"), nullptr if absent.
const char* shader_source(const char* name);

}  // namespace kvscope::gui
