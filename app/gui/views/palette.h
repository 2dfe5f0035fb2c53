// Colours of the views that are not a colormap: the categorical palette of
// cell codes (mask states, ideal overlay, fork comparison) with their
// legend labels, and the outline colours of evicted cells. Mask colours and
// outline colours come from the figures layer, so the window's pictures
// match the exported ones.
#pragma once

#include <cstdint>
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
// and the 32 x 1 code palette. Created by init_palette_textures() and
// freed by release_palette_textures().
void init_palette_textures();
void release_palette_textures();
GLuint colormap_texture(const std::string& name);  // unknown names fall back to viridis
GLuint palette_texture();

}  // namespace kvscope::gui
