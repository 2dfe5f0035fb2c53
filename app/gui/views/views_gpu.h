// The GL objects every view draws with: the heatmap program (heatmap_
// renderer.h) and the colormap and palette textures (palette.h). Part of
// the frame's ViewCaches (view_caches.h): made after the GL context exists,
// freed before it goes. When the driver refuses the shaders, ready() is
// false and the views print error() instead of drawing heatmaps; the rest
// of the window keeps working.
#pragma once

#include <string>

#include "views/heatmap_renderer.h"
#include "views/palette.h"

namespace kvscope::gui {

class ViewGpu {
 public:
  void init();
  void release();
  bool ready() const { return ready_; }
  const std::string& error() const { return error_; }
  const PaletteTextures& textures() const { return textures_; }
  // Draws `cells` into `target` (renderer.render with these textures).
  void render(RenderTarget& target, const HeatmapTexture& cells, const HeatmapViewport& view, const HeatmapStyle& style) {
    renderer_.render(target, cells, view, style, textures_);
  }

 private:
  PaletteTextures textures_;
  HeatmapRenderer renderer_;
  bool ready_ = false;
  std::string error_;
};

}  // namespace kvscope::gui
