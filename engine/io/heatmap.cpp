// Raster rendering of heatmap figures, following HeatmapLayout
// (io/heatmap_layout.cpp).
#include "io/heatmap.h"

#include <algorithm>
#include <cmath>

#include "io/colormap.h"

namespace kvscope {
namespace {

constexpr Rgb kFrame{64, 64, 64};
constexpr Rgb kText{20, 20, 20};

bool bright(Rgb c) { return 0.299 * c.r + 0.587 * c.g + 0.114 * c.b > 140; }

// Evicted marks, pixel by pixel over `r`. Hatch lines follow the image's
// diagonals (not the cell's), so runs of evicted cells read as one hatched
// region; their colour contrasts with what lies under each pixel.
void mark_evicted(Image& img, Rect r, uint8_t code, EvictedStyle style, int period) {
  for (int y = r.y; y < r.bottom(); ++y)
    for (int x = r.x; x < r.right(); ++x) {
      if (style == EvictedStyle::dim) img.blend(x, y, kWhite, 0.65f);
      const bool slash = (x + y) % period == 0;
      const bool back = ((x - y) % period + period) % period == 0;
      // Evicted: '/' lines, evicted this step: crossed; outside the oracle's
      // top k (still cached): '\\' lines alone.
      const bool ink = style == EvictedStyle::hatch
                           ? (code == kOverlayOutsideTopK ? back : slash || (code == kOverlayEvictedNow && back))
                           : code == kOverlayEvictedNow && slash;
      if (!ink) continue;
      const Rgb under = img.at(x, y);
      if (bright(under)) img.blend(x, y, kBlack, 0.7f);
      else img.blend(x, y, kWhite, 0.8f);
    }
}

// Protected cells are outlined as regions: an edge is drawn only where the
// neighbouring cell is not protected, so the sink block and the recent
// window show as framed areas instead of a grid of boxes.
void outline_protected(Image& img, const HeatmapLayout& L, int panel, std::span<const uint8_t> ov, Rgb color) {
  const int t = std::clamp(std::min(L.cell_w, L.cell_h) / 4, 1, L.font_scale);
  auto prot = [&](int i, int j) {
    return i >= 0 && j >= 0 && i < L.rows && j < L.cols && ov[std::size_t(i) * L.cols + j] == kOverlayProtected;
  };
  for (int i = 0; i < L.rows; ++i)
    for (int j = 0; j < L.cols; ++j) {
      if (!prot(i, j)) continue;
      const Rect c = L.cell_rect(i, j, panel);
      if (!prot(i - 1, j)) img.fill_rect({c.x, c.y, c.w, t}, color);
      if (!prot(i + 1, j)) img.fill_rect({c.x, c.bottom() - t, c.w, t}, color);
      if (!prot(i, j - 1)) img.fill_rect({c.x, c.y, t, c.h}, color);
      if (!prot(i, j + 1)) img.fill_rect({c.right() - t, c.y, t, c.h}, color);
    }
}

int hatch_period(const HeatmapLayout& L) { return std::max(4, 3 * L.font_scale); }

void draw_panel(Image& img, const HeatmapLayout& L, int p, const HeatmapPanel& panel, const Colormap& cmap,
                const HeatmapOptions& opt) {
  for (int i = 0; i < L.rows; ++i)
    for (int j = 0; j < L.cols; ++j) {
      const double t = L.normalize(panel.values[std::size_t(i) * L.cols + j]);
      img.fill_rect(L.cell_rect(i, j, p), std::isnan(t) ? opt.nan_color : cmap.at(t));
    }
  if (!panel.overlay.empty()) {
    for (int i = 0; i < L.rows; ++i)
      for (int j = 0; j < L.cols; ++j) {
        const uint8_t code = panel.overlay[std::size_t(i) * L.cols + j];
        if (code == kOverlayEvicted || code == kOverlayEvictedNow || code == kOverlayOutsideTopK)
          mark_evicted(img, L.cell_rect(i, j, p), code, opt.evicted_style, hatch_period(L));
      }
    outline_protected(img, L, p, panel.overlay, opt.protected_color);
  }
  const Rect& R = L.panels[p];
  img.stroke_rect({R.x - 1, R.y - 1, R.w + 2, R.h + 2}, kFrame);
  for (const auto& t : L.x_ticks) img.fill_rect({R.x + t.pos, R.bottom() + 1, 1, L.tick_len}, kFrame);
  for (const auto& t : L.y_ticks) img.fill_rect({R.x - 1 - L.tick_len, R.y + t.pos, L.tick_len, 1}, kFrame);
}

void draw_colorbar(Image& img, const HeatmapLayout& L, const Colormap& cmap) {
  const Rect& B = L.colorbar;
  for (int y = B.y; y < B.bottom(); ++y) img.fill_rect({B.x, y, B.w, 1}, cmap.table[L.colorbar_index(y)]);
  img.stroke_rect({B.x - 1, B.y - 1, B.w + 2, B.h + 2}, kFrame);
  for (const auto& t : L.colorbar_ticks) img.fill_rect({B.right() + 1, t.pos, L.tick_len, 1}, kFrame);
}

void draw_legend(Image& img, const HeatmapLayout& L, const Colormap& cmap, const HeatmapOptions& opt) {
  for (const auto& e : L.legend) {
    const Rect& r = e.swatch;
    img.fill_rect(r, cmap.at(0.5));
    if (e.code == kOverlayProtected) {
      img.stroke_rect(r, opt.protected_color, std::clamp(std::min(L.cell_w, L.cell_h) / 4, 1, L.font_scale));
    } else {
      mark_evicted(img, r, e.code, opt.evicted_style, hatch_period(L));
    }
    img.stroke_rect({r.x - 1, r.y - 1, r.w + 2, r.h + 2}, kFrame);
  }
}

Heatmap render(std::span<const HeatmapPanel> panels, HeatmapLayout layout, const HeatmapOptions& opt) {
  Heatmap out{Image(layout.width, layout.height, kWhite), std::move(layout)};
  const HeatmapLayout& L = out.layout;
  const Colormap& cmap = colormap(opt.colormap);
  for (int p = 0; p < int(panels.size()); ++p) draw_panel(out.image, L, p, panels[p], cmap, opt);
  if (!L.colorbar.empty()) draw_colorbar(out.image, L, cmap);
  draw_legend(out.image, L, cmap, opt);
  draw_text_items(out.image, L.texts, kText, L.font_scale);
  return out;
}

}  // namespace

Heatmap render_heatmap(std::span<const float> values, int rows, int cols, const HeatmapOptions& opt,
                       std::span<const uint8_t> overlay) {
  const HeatmapPanel panel{values, overlay, ""};
  return render(std::span(&panel, 1), layout_heatmap(values, rows, cols, opt, overlay), opt);
}

Heatmap render_heatmap_grid(std::span<const HeatmapPanel> panels, int rows, int cols, int grid_columns,
                            const HeatmapOptions& opt) {
  return render(panels, layout_heatmap_grid(panels, rows, cols, grid_columns, opt), opt);
}

}  // namespace kvscope
