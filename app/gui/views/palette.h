// Colours of the views that are not a colormap: the categorical palette of
// cell codes (mask states, ideal overlay, fork comparison) with their
// legend labels, and the outline colours of evicted cells. Mask colours and
// outline colours come from the figures layer, so the window's pictures
// match the exported ones.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "io/colormap.h"
#include "views/gl.h"

namespace kvscope::gui {

kvscope::Rgb code_color(uint8_t code);
std::string code_label(uint8_t code);
// The codes a legend lists for each categorical picture.
const std::vector<uint8_t>& mask_legend_codes();
const std::vector<uint8_t>& ideal_legend_codes();
const std::vector<uint8_t>& fork_legend_codes();

ImU32 im_color(kvscope::Rgb c, int alpha = 255);

// GL textures: one 256 x 1 per named colormap (engine/io/colormap tables)
// and the 32 x 1 code palette. Part of ViewGpu (views_gpu.h), which makes
// them after the GL context exists and frees them before it goes.
class PaletteTextures {
 public:
  PaletteTextures() = default;
  PaletteTextures(const PaletteTextures&) = delete;
  PaletteTextures& operator=(const PaletteTextures&) = delete;

  void create();
  void release();
  GLuint colormap(const std::string& name) const;  // unknown names fall back to viridis
  GLuint palette() const { return palette_; }

 private:
  std::map<std::string, GLuint> colormaps_;
  GLuint palette_ = 0;
};

}  // namespace kvscope::gui
