#include "views/grid_layout.h"

#include <algorithm>
#include <cmath>

namespace kvscope::gui {
namespace {

// The largest thumbnail that puts `heads` columns in `width` after the labels.
float fit_across(const GridLayoutInput& in, float width) {
  return std::floor((width - in.label_w) / float(in.heads) - in.gap);
}

}  // namespace

GridLayout layout_grid(const GridLayoutInput& in) {
  GridLayout out;
  if (in.layers <= 0 || in.heads <= 0) return out;
  const float rows_h = in.height - in.header_h;
  const float across = fit_across(in, in.width);
  const float down = std::floor(rows_h / float(in.layers) - in.share_h - in.gap);
  // Everything at once when the thumbnails stay legible (or when the width
  // alone already forces them below legible: scrolling would not help).
  const float all = std::min(across, down);
  if (all >= std::min(in.min_thumb, across)) {
    out.thumb = std::max(1.f, all);
  } else {
    out.scrolls = true;
    const float across_scrolling = fit_across(in, in.width - in.scrollbar_w - in.overview_w);
    out.thumb = std::max(1.f, std::min(across_scrolling, in.min_thumb));
  }
  out.pitch_x = out.thumb + in.gap;
  out.pitch_y = out.thumb + in.share_h + in.gap;
  out.content_h = out.pitch_y * float(in.layers);
  out.visible_layers =
      out.scrolls ? std::clamp(int(std::floor((rows_h + in.gap) / out.pitch_y)), 1, in.layers) : in.layers;
  out.cells_w = in.label_w + out.pitch_x * float(in.heads) - in.gap;
  return out;
}

int first_layer_showing(int layer, int first, int visible_layers, int layers) {
  const int visible = std::max(1, visible_layers);
  if (layer < first) first = layer;
  else if (layer >= first + visible) first = layer - visible + 1;
  return std::clamp(first, 0, std::max(0, layers - visible));
}

}  // namespace kvscope::gui
