// The OpenGL entry points the views use: the system GL headers with
// GL_GLEXT_PROTOTYPES (set by the kvscope target), so libGL (libglvnd)
// exports them directly; ImGui's backend keeps its own loader.
#pragma once

#ifndef GL_GLEXT_PROTOTYPES
#define GL_GLEXT_PROTOTYPES 1
#endif
#include <GL/gl.h>
#include <GL/glext.h>

#include <cstdint>

#include "imgui.h"

namespace kvscope::gui {

inline ImTextureID texture_id(GLuint tex) { return reinterpret_cast<ImTextureID>(static_cast<intptr_t>(tex)); }

}  // namespace kvscope::gui
