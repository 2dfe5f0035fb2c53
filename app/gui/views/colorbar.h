// The legend beside a picture: a vertical colorbar (the colormap texture,
// ticks at nice values of the linear or log scale), or, for categorical
// pictures, coloured swatches with their labels.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "figures/color_scale.h"
#include "imgui.h"
#include "views/palette.h"

namespace kvscope::gui {

float colorbar_width();
// Draws at the cursor, `height` tall; `label` runs along it ("attention").
// Ticks as the exported figures place them (figures/ticks.h).
void draw_colorbar(const PaletteTextures& textures, const kvscope::ColorScale& scale, const std::string& colormap,
                   const std::string& label, float height);
// in_a_row: the entries side by side, wrapping (above a picture), else one per line.
void draw_code_legend(const std::vector<uint8_t>& codes, bool in_a_row = false);

}  // namespace kvscope::gui
