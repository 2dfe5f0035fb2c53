#include "screenshot.h"

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include <GL/gl.h>

#define STB_IMAGE_WRITE_IMPLEMENTATION  // the one translation unit that carries stb_image_write
#include <stb/stb_image_write.h>

namespace kvscope::gui {

std::string write_framebuffer_png(const std::string& path, int width, int height) {
  if (width <= 0 || height <= 0) return "empty framebuffer";
  std::vector<uint8_t> pixels(static_cast<size_t>(width) * height * 4);
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glReadBuffer(GL_BACK);
  glReadPixels(0, 0, width, height, GL_RGBA, GL_UNSIGNED_BYTE, pixels.data());
  // OpenGL's rows go bottom-up; PNG's top-down.
  const size_t stride = static_cast<size_t>(width) * 4;
  std::vector<uint8_t> row(stride);
  for (int y = 0; y < height / 2; ++y) {
    uint8_t* a = pixels.data() + y * stride;
    uint8_t* b = pixels.data() + (height - 1 - y) * stride;
    std::memcpy(row.data(), a, stride);
    std::memcpy(a, b, stride);
    std::memcpy(b, row.data(), stride);
  }
  for (size_t i = 3; i < pixels.size(); i += 4) pixels[i] = 255;  // the window is opaque
  // Through a temporary name so a reader never sees half a PNG.
  const std::string tmp = path + ".tmp";
  if (!stbi_write_png(tmp.c_str(), width, height, 4, pixels.data(), static_cast<int>(stride)))
    return "cannot write " + path;
  if (std::rename(tmp.c_str(), path.c_str()) != 0) return "cannot write " + path;
  return "";
}

}  // namespace kvscope::gui
