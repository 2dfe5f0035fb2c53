// Draws a HeatmapTexture through shaders/heatmap.frag.glsl into an
// offscreen colour texture (an FBO) that ImGui then shows with
// ImGui::Image: one draw call per tile, whatever the number of cells.
#pragma once

#include <string>

#include "figures/color_scale.h"
#include "views/gl.h"
#include "views/gl_program.h"
#include "views/heatmap_texture.h"
#include "views/palette.h"

namespace kvscope::gui {

// An FBO with one RGBA8 colour texture, resized on demand.
class RenderTarget {
 public:
  RenderTarget() = default;
  RenderTarget(const RenderTarget&) = delete;
  RenderTarget& operator=(const RenderTarget&) = delete;
  ~RenderTarget() { release(); }
  void ensure(int width, int height);
  void release();
  GLuint texture() const { return color_; }
  GLuint framebuffer() const { return fbo_; }
  int width() const { return w_; }
  int height() const { return h_; }

 private:
  GLuint fbo_ = 0, color_ = 0;
  int w_ = 0, h_ = 0;
};

// Which cells land on which pixels.
struct HeatmapViewport {
  double x0 = 0, y0 = 0;                   // cell coordinates at the target's top-left pixel
  double cells_per_px_x = 1, cells_per_px_y = 1;
  int visible_cols = 1 << 30;              // columns from here on are background
  int last_row = 1 << 30;                  // rows after this are background (the timeline row)
};

enum class CellColoring { Values, Codes };  // colormap of the value, or palette of the code

struct HeatmapStyle {
  CellColoring coloring = CellColoring::Values;
  std::string colormap = "viridis";
  kvscope::ColorScale scale;
  bool outline_evicted = true;
  bool pool_by_magnitude = false;  // differences: zoomed out, show the strongest deviation of either sign
};

// The heatmap program and the empty vertex array its draws need; part of
// ViewGpu (views_gpu.h).
class HeatmapRenderer {
 public:
  HeatmapRenderer() = default;
  HeatmapRenderer(const HeatmapRenderer&) = delete;
  HeatmapRenderer& operator=(const HeatmapRenderer&) = delete;

  // Builds the program; false (and the message) when the driver refuses it.
  bool init(std::string& error);
  void release();
  void render(RenderTarget& target, const HeatmapTexture& cells, const HeatmapViewport& view, const HeatmapStyle& style,
              const PaletteTextures& textures);

 private:
  GlProgram program_;
  GLuint vao_ = 0;  // core profile: a draw needs a bound vertex array, even an empty one
};

}  // namespace kvscope::gui
