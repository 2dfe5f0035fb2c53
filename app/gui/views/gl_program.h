// A GLSL program built from two of the embedded shaders/ files, with its
// uniform locations looked up by name (and cached) so call sites read like
// the shader.
#pragma once

#include <string>
#include <unordered_map>

#include "views/gl.h"

namespace kvscope::gui {

class GlProgram {
 public:
  GlProgram() = default;
  GlProgram(const GlProgram&) = delete;
  GlProgram& operator=(const GlProgram&) = delete;
  ~GlProgram();

  // Compiles and links; on failure returns false and error() says which
  // file and the driver's log (the views then show that text instead of
  // the heatmap rather than exiting).
  // `fragment_defines` (lines such as "#define X 1\n") go right after the
  // fragment shader's #version line: one source, several programs.
  bool build(const char* vertex_file, const char* fragment_file, const std::string& fragment_defines = "");
  void destroy();
  bool ok() const { return id_ != 0; }
  const std::string& error() const { return error_; }
  GLuint id() const { return id_; }

  GLint uniform(const char* name);

 private:
  GLuint id_ = 0;
  std::string error_;
  std::unordered_map<std::string, GLint> uniforms_;
};

}  // namespace kvscope::gui
