#include "views/palette.h"

#include "figures/heatmap_panel.h"
#include "views/cell_codes.h"

namespace kvscope::gui {
namespace {

// A 2D texture one texel high: GL 3.3 core has 1D textures, but a
// sampler2D lets ImGui show the same texture as a colorbar image.
GLuint rgba_texture_1d(const std::vector<uint8_t>& rgba, int width) {
  return make_nearest_texture(GL_RGBA8, GL_RGBA, GL_UNSIGNED_BYTE, width, 1, rgba.data());
}

}  // namespace

kvscope::Rgb code_color(uint8_t code) {
  switch (code) {
    // Okabe-Ito colours, like the mask strip's: safe for colour-blind readers.
    case kIdealBoth: return {0, 158, 115};
    case kIdealKeptOnly: return {86, 180, 233};
    case kIdealTopKOnly: return {213, 94, 0};
    case kIdealNeither: return {250, 250, 250};
    default:
      return kvscope::mask_code_color(code);  // the slot states and the fork comparison, as the figures draw them
  }
}

std::string code_label(uint8_t code) {
  switch (code) {
    case kIdealBoth: return "kept and in the top k (agrees)";
    case kIdealKeptOnly: return "kept, not in the top k";
    case kIdealTopKOnly: return "in the top k, but evicted (lost)";
    case kIdealNeither: return "evicted, not in the top k";
    default: return kvscope::mask_code_label(code);
  }
}

const std::vector<uint8_t>& mask_legend_codes() {
  static const std::vector<uint8_t> codes = {kMaskKept, kMaskProtected, kEvictedNow, kEvictedEarlier, kOutsideTopK};
  return codes;
}
const std::vector<uint8_t>& ideal_legend_codes() {
  static const std::vector<uint8_t> codes = {kIdealBoth, kIdealKeptOnly, kIdealTopKOnly, kIdealNeither};
  return codes;
}
const std::vector<uint8_t>& fork_legend_codes() {
  static const std::vector<uint8_t> codes = {kForkBothKeep, kForkOnlyA, kForkOnlyB, kForkBothEvicted};
  return codes;
}

ImU32 im_color(kvscope::Rgb c, int alpha) { return IM_COL32(c.r, c.g, c.b, alpha); }

void PaletteTextures::create() {
  release();
  for (const std::string& name : kvscope::colormap_names()) {
    const kvscope::Colormap& cmap = kvscope::colormap(name);
    std::vector<uint8_t> rgba;
    for (const kvscope::Rgb& c : cmap.table) rgba.insert(rgba.end(), {c.r, c.g, c.b, 255});
    colormaps_[name] = rgba_texture_1d(rgba, 256);
  }
  std::vector<uint8_t> rgba;
  for (int code = 0; code < kPaletteSize; ++code) {
    const kvscope::Rgb c = code_color(static_cast<uint8_t>(code));
    rgba.insert(rgba.end(), {c.r, c.g, c.b, 255});
  }
  palette_ = rgba_texture_1d(rgba, kPaletteSize);
}

void PaletteTextures::release() {
  for (auto& [name, tex] : colormaps_) glDeleteTextures(1, &tex);
  colormaps_.clear();
  if (palette_) glDeleteTextures(1, &palette_);
  palette_ = 0;
}

GLuint PaletteTextures::colormap(const std::string& name) const {
  auto it = colormaps_.find(name);
  if (it != colormaps_.end()) return it->second;
  it = colormaps_.find("viridis");
  return it == colormaps_.end() ? 0 : it->second;
}

}  // namespace kvscope::gui
