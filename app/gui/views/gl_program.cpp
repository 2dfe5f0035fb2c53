#include "views/gl_program.h"

#include <string>
#include <vector>

#include "shader_sources.h"

namespace kvscope::gui {
namespace {

GLuint compile(GLenum type, const char* file, const std::string& defines, std::string& error) {
  const char* embedded = shader_source(file);
  if (!embedded) {
    error = std::string("shader ") + file + " is not embedded in the binary";
    return 0;
  }
  // GLSL wants #version first: the defines follow its line.
  std::string text = embedded;
  const std::size_t version_end = text.find('\n');
  text.insert(version_end == std::string::npos ? text.size() : version_end + 1, defines);
  const char* source = text.c_str();
  const GLuint shader = glCreateShader(type);
  glShaderSource(shader, 1, &source, nullptr);
  glCompileShader(shader);
  GLint ok = 0;
  glGetShaderiv(shader, GL_COMPILE_STATUS, &ok);
  if (!ok) {
    GLint length = 0;
    glGetShaderiv(shader, GL_INFO_LOG_LENGTH, &length);
    std::vector<char> log(std::max(length, 1));
    glGetShaderInfoLog(shader, length, nullptr, log.data());
    error = std::string(file) + ": " + log.data();
    glDeleteShader(shader);
    return 0;
  }
  return shader;
}

}  // namespace

GlProgram::~GlProgram() { destroy(); }

void GlProgram::destroy() {
  if (id_) glDeleteProgram(id_);
  id_ = 0;
  uniforms_.clear();
}

bool GlProgram::build(const char* vertex_file, const char* fragment_file, const std::string& fragment_defines) {
  destroy();
  error_.clear();
  const GLuint vs = compile(GL_VERTEX_SHADER, vertex_file, "", error_);
  if (!vs) return false;
  const GLuint fs = compile(GL_FRAGMENT_SHADER, fragment_file, fragment_defines, error_);
  if (!fs) {
    glDeleteShader(vs);
    return false;
  }
  const GLuint program = glCreateProgram();
  glAttachShader(program, vs);
  glAttachShader(program, fs);
  glLinkProgram(program);
  glDeleteShader(vs);
  glDeleteShader(fs);
  GLint ok = 0;
  glGetProgramiv(program, GL_LINK_STATUS, &ok);
  if (!ok) {
    GLint length = 0;
    glGetProgramiv(program, GL_INFO_LOG_LENGTH, &length);
    std::vector<char> log(std::max(length, 1));
    glGetProgramInfoLog(program, length, nullptr, log.data());
    error_ = std::string("linking ") + vertex_file + " + " + fragment_file + ": " + log.data();
    glDeleteProgram(program);
    return false;
  }
  id_ = program;
  return true;
}

GLint GlProgram::uniform(const char* name) {
  auto it = uniforms_.find(name);
  if (it != uniforms_.end()) return it->second;
  const GLint loc = glGetUniformLocation(id_, name);
  uniforms_.emplace(name, loc);
  return loc;
}

}  // namespace kvscope::gui
