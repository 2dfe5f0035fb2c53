// Draws a HeatmapTexture through shaders/heatmap.frag.glsl into an
// offscreen colour texture (an FBO) that ImGui then shows with
// ImGui::Image: one draw call per tile, whatever the number of cells.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "figures/color_scale.h"
#include "views/gl.h"
#include "views/gl_program.h"
#include "views/heatmap_texture.h"
#include "views/palette.h"

namespace kvscope::gui {

// An FBO with one colour texture (RGBA8, or RG32F for reduced levels),
// resized on demand.
class RenderTarget {
 public:
  RenderTarget() = default;
  RenderTarget(const RenderTarget&) = delete;
  RenderTarget& operator=(const RenderTarget&) = delete;
  ~RenderTarget() { release(); }
  void ensure(int width, int height, GLint internal_format = GL_RGBA8);
  void release();
  GLuint texture() const { return color_; }
  GLuint framebuffer() const { return fbo_; }
  int width() const { return w_; }
  int height() const { return h_; }

 private:
  GLuint fbo_ = 0, color_ = 0;
  int w_ = 0, h_ = 0;
  GLint format_ = GL_RGBA8;
};

// Which cells land on which pixels.
struct HeatmapViewport {
  double x0 = 0, y0 = 0;                   // cell coordinates at the target's top-left pixel
  double cells_per_px_x = 1, cells_per_px_y = 1;
  int visible_cols = 1 << 30;              // columns from here on are background
  int last_row = 1 << 30;                  // rows after this are background (the timeline row)
  // Zoomed out, read reduced levels (heatmap_pool.frag.glsl) instead of
  // sampling cells: worth it for a view redrawn as it pans and zooms (each
  // level is built once, from every cell), not for a thumbnail drawn once.
  bool reduced_levels = false;
};

enum class CellColoring { Values, Codes };  // colormap of the value, or palette of the code

// Evicted cells are outlined from this many pixels per cell on both axes;
// smaller ones get a flat tint (heatmap.frag.glsl: outlines of small
// scattered cells beat against the grid into moire).
inline constexpr float kMinOutlineCellPixels = 8;
// (heatmap.frag.glsl draws outlines only where a cell is at least a pixel.)
static_assert(kMinOutlineCellPixels >= 1);

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

  // The smallest power-of-two block, log2, at least `cells_per_px` cells
  // wide: 0 when a cell is at least a pixel.
  static int reduced_level_for(double cells_per_px);

 private:
  // A reduced level of one tile's values, kept while what it was built
  // from (the texture's contents, the visible limits, the block) holds.
  struct ReducedLevel {
    GLuint values = 0;         // the cells' texture
    std::uint64_t serial = 0;  // its contents when built (texture_serial)
    int visible_cols = 0, last_row = 0, level_x = 0, level_y = 0;
    RenderTarget target;     // RG32F, one texel per block
    std::uint64_t used = 0;  // for dropping the least recently used
  };
  // The level for `tile` at blocks of 2^level_x x 2^level_y cells, built now if needed.
  const ReducedLevel& reduced_level(const HeatmapTile& tile, const HeatmapViewport& view, int level_x, int level_y);

  // heatmap.frag.glsl's ways of reading the cells, one program each
  // (HEATMAP_PATH there): a software rasteriser pays for every branch a
  // program holds, taken or not.
  enum Path { kPathCodes, kPathOneCell, kPathPooled, kPathSampled, kPaths };
  GlProgram programs_[kPaths];
  GlProgram pool_program_;
  GLuint vao_ = 0;  // core profile: a draw needs a bound vertex array, even an empty one
  std::vector<std::unique_ptr<ReducedLevel>> levels_;
  std::uint64_t uses_ = 0;
};

}  // namespace kvscope::gui
