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
#include <unordered_map>

#include "imgui.h"

namespace kvscope::gui {

// Which textures a frame shows had their pixels written, and when: a
// window whose draw data did not change is drawn again only when one of its
// textures did (frame_damage.h). Every texture the views make or render
// into says so here.
inline std::unordered_map<GLuint, std::uint64_t>& texture_serials() {
  static std::unordered_map<GLuint, std::uint64_t> serials;
  return serials;
}
inline void note_texture_written(GLuint tex) {
  static std::uint64_t writes = 0;
  texture_serials()[tex] = ++writes;
}
inline std::uint64_t texture_serial(ImTextureID id) {
  const auto it = texture_serials().find(static_cast<GLuint>(reinterpret_cast<intptr_t>(id)));
  return it == texture_serials().end() ? 0 : it->second;
}

inline ImTextureID texture_id(GLuint tex) { return reinterpret_cast<ImTextureID>(static_cast<intptr_t>(tex)); }

// A w x h 2D texture with nearest filtering and clamped edges, filled from
// `data` (nullptr: left undefined), unbound afterwards. Every texture of
// the views is of this kind: cells are fetched with texelFetch (integer
// formats cannot be filtered linearly), colormaps are looked up by index,
// and render targets are shown 1:1, where filtering would only blur.
inline GLuint make_nearest_texture(GLint internal_format, GLenum format, GLenum type, int w, int h, const void* data) {
  GLuint tex = 0;
  glGenTextures(1, &tex);
  note_texture_written(tex);
  glBindTexture(GL_TEXTURE_2D, tex);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
  glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
  glTexImage2D(GL_TEXTURE_2D, 0, internal_format, w, h, 0, format, type, data);
  glBindTexture(GL_TEXTURE_2D, 0);
  return tex;
}

}  // namespace kvscope::gui
