#include "figures/heatmap_panel.h"

#include <algorithm>
#include <cmath>

#include "common/error.h"
#include "common/mask_codes.h"
#include "figures/plot_style.h"

namespace kvscope {
namespace {

// Vector formats: each cell becomes a block of image pixels, so viewers that
// smooth scaled images (most SVG renderers) blur only a cell's rim. Rasters
// get one pixel per cell, sampled nearest.
int pixels_per_cell(cairo_t* cr, double cell_pt, int cells_along, int other_side_px) {
  if (cairo_surface_get_type(cairo_get_target(cr)) == CAIRO_SURFACE_TYPE_IMAGE) return 1;
  int k = std::clamp(static_cast<int>(std::ceil(cell_pt * 2)), 1, 16);
  while (k > 1 && double(cells_along) * k * other_side_px > 8e6) --k;  // keep the image a few MB at most
  return k;
}

// One image of `cols` x `rows` cells, k pixels per cell each way, filled by
// colour_of(i, j) and painted into `box`.
template <typename ColourOf>
void paint_image(cairo_t* cr, const Box& box, int rows, int cols, ColourOf colour_of) {
  const int kx = pixels_per_cell(cr, box.w / cols, cols, rows);
  const int ky = pixels_per_cell(cr, box.h / rows, rows, cols * kx);
  cairo_surface_t* img = cairo_image_surface_create(CAIRO_FORMAT_RGB24, cols * kx, rows * ky);
  if (cairo_surface_status(img) != CAIRO_STATUS_SUCCESS) {
    cairo_surface_destroy(img);
    throw Error("heatmap", "", "cannot make a " + std::to_string(cols * kx) + " x " + std::to_string(rows * ky) + " image");
  }
  cairo_surface_flush(img);
  unsigned char* data = cairo_image_surface_get_data(img);
  const int stride = cairo_image_surface_get_stride(img);
  for (int i = 0; i < rows; ++i) {
    auto* row = reinterpret_cast<uint32_t*>(data + std::size_t(i) * ky * stride);
    for (int j = 0; j < cols; ++j) {
      const Rgb c = colour_of(i, j);
      const uint32_t px = 0xff000000u | uint32_t(c.r) << 16 | uint32_t(c.g) << 8 | c.b;
      std::fill(row + std::size_t(j) * kx, row + std::size_t(j + 1) * kx, px);
    }
    for (int r = 1; r < ky; ++r)
      std::copy(row, row + std::size_t(cols) * kx, reinterpret_cast<uint32_t*>(data + (std::size_t(i) * ky + r) * stride));
  }
  cairo_surface_mark_dirty(img);
  cairo_save(cr);
  cairo_rectangle(cr, box.x, box.y, box.w, box.h);
  cairo_clip(cr);
  cairo_translate(cr, box.x, box.y);
  cairo_scale(cr, box.w / (cols * kx), box.h / (rows * ky));
  cairo_set_source_surface(cr, img, 0, 0);
  cairo_pattern_set_filter(cairo_get_source(cr), CAIRO_FILTER_NEAREST);
  cairo_paint(cr);
  cairo_restore(cr);
  cairo_surface_destroy(img);
}

// The border of the region of cells whose code is in `codes`, as merged
// runs of cell edges (a column evicted for 500 steps is two long lines, not
// 1000 short ones), added to the current path.
template <typename In>
void region_border(cairo_t* cr, const Box& box, int rows, int cols, In in) {
  const double cw = box.w / cols, ch = box.h / rows;
  auto inside = [&](int i, int j) { return i >= 0 && j >= 0 && i < rows && j < cols && in(i, j); };
  for (int i = 0; i <= rows; ++i) {  // horizontal edges above row i
    int start = -1;
    for (int j = 0; j <= cols; ++j) {
      const bool edge = j < cols && inside(i - 1, j) != inside(i, j);
      if (edge && start < 0) start = j;
      if (!edge && start >= 0) {
        cairo_move_to(cr, box.x + start * cw, box.y + i * ch);
        cairo_line_to(cr, box.x + j * cw, box.y + i * ch);
        start = -1;
      }
    }
  }
  for (int j = 0; j <= cols; ++j) {  // vertical edges left of column j
    int start = -1;
    for (int i = 0; i <= rows; ++i) {
      const bool edge = i < rows && inside(i, j - 1) != inside(i, j);
      if (edge && start < 0) start = i;
      if (!edge && start >= 0) {
        cairo_move_to(cr, box.x + j * cw, box.y + start * ch);
        cairo_line_to(cr, box.x + j * cw, box.y + i * ch);
        start = -1;
      }
    }
  }
}

}  // namespace

void HeatmapData::validate(const std::string& what) const {
  if (rows <= 0 || cols <= 0) throw Error(what, "shape", std::to_string(rows) + " x " + std::to_string(cols) + " is empty");
  const std::size_t n = std::size_t(rows) * cols;
  if (values.size() != n)
    throw Error(what, "values", "has " + std::to_string(values.size()) + " values, " + std::to_string(rows) + " x " +
                                    std::to_string(cols) + " expected");
  if (!mask.empty() && mask.size() != n)
    throw Error(what, "mask", "has " + std::to_string(mask.size()) + " codes, " + std::to_string(n) + " expected");
  if (!row_labels.empty() && static_cast<int>(row_labels.size()) != rows)
    throw Error(what, "row_labels", "has " + std::to_string(row_labels.size()) + " labels for " + std::to_string(rows) + " rows");
  if (!col_labels.empty() && static_cast<int>(col_labels.size()) != cols)
    throw Error(what, "col_labels", "has " + std::to_string(col_labels.size()) + " labels for " + std::to_string(cols) + " columns");
}

HeatmapData crop_columns(const HeatmapData& d, const PositionRange& range) {
  if (range.all()) return d;
  const int last_col = d.first_col + d.cols - 1;
  if (range.first < d.first_col || range.last > last_col)
    throw Error::setting("export.positions", range.str() + " is outside the positions drawn (" +
                                                 std::to_string(d.first_col) + ".." + std::to_string(last_col) + ")");
  const int a = range.first - d.first_col, n = range.last - range.first + 1;
  HeatmapData c = d;
  c.cols = n;
  c.first_col = range.first;
  c.values.clear();
  c.mask.clear();
  for (int i = 0; i < d.rows; ++i) {
    const auto row = d.values.begin() + std::ptrdiff_t(i) * d.cols + a;
    c.values.insert(c.values.end(), row, row + n);
    if (!d.mask.empty()) {
      const auto m = d.mask.begin() + std::ptrdiff_t(i) * d.cols + a;
      c.mask.insert(c.mask.end(), m, m + n);
    }
  }
  if (!d.col_labels.empty()) c.col_labels.assign(d.col_labels.begin() + a, d.col_labels.begin() + a + n);
  // The boundary bar: generated columns from here on, counted in the crop.
  if (d.first_generated_col >= 0) c.first_generated_col = std::clamp(d.first_generated_col - a, 0, n);
  return c;
}

Rgb evicted_outline_color(const Colormap& cmap) {
  // A hue none of the colormap's entries is near: vermillion-red on the
  // blue-green-yellow and grey maps, cyan on the black-red-yellow ones,
  // green on coolwarm.
  if (cmap.name == "magma" || cmap.name == "inferno") return {0, 200, 255};
  if (cmap.name == "coolwarm") return {0, 170, 60};
  return {255, 40, 40};
}

Rgb protected_outline_color(const Colormap& cmap) {
  if (cmap.name == "gray") return {0, 110, 255};
  return {255, 255, 255};
}

Rgb mask_code_color(uint8_t code) {
  switch (code) {
    case kMaskKept: return {205, 205, 205};
    case kMaskProtected: return {86, 180, 233};
    case kEvictedNow: return {213, 94, 0};
    case kEvictedEarlier: return {245, 190, 160};
    case kOutsideTopK: return {240, 228, 66};
    // A fork's comparison: Okabe-Ito blue and orange for the runs that
    // differ (safe for colour-blind readers), grey where they agree.
    case kForkBothKeep: return {150, 150, 150};
    case kForkOnlyA: return {0, 114, 178};
    case kForkOnlyB: return {230, 159, 0};
    case kForkBothEvicted: return {250, 250, 250};
    default: return {255, 255, 255};
  }
}

std::string mask_code_label(uint8_t code) {
  switch (code) {
    case kNotSeen: return "not yet seen";
    case kMaskKept: return "kept";
    case kMaskProtected: return "protected (sink or recent window)";
    case kEvictedNow: return "evicted at this step";
    case kEvictedEarlier: return "evicted earlier";
    case kOutsideTopK: return "outside the top k";
    case kForkBothKeep: return "kept by A and B";
    case kForkOnlyA: return "kept by A only";
    case kForkOnlyB: return "kept by B only";
    case kForkBothEvicted: return "evicted by A and B";
    default: return "";
  }
}

double outline_width(double cell_w, double cell_h) { return std::clamp(0.2 * std::min(cell_w, cell_h), 0.4, 1.2); }

void paint_cells(cairo_t* cr, const Box& box, const HeatmapData& d, const Colormap& cmap, const ColorScale& scale) {
  paint_image(cr, box, d.rows, d.cols, [&](int i, int j) {
    const double t = scale.normalize(d.values[std::size_t(i) * d.cols + j]);
    return std::isnan(t) ? kNanColor : cmap.at(t);
  });
}

void paint_mask_strip(cairo_t* cr, const Box& box, const HeatmapData& d) {
  paint_image(cr, box, d.rows, d.cols, [&](int i, int j) { return mask_code_color(d.mask[std::size_t(i) * d.cols + j]); });
}

void draw_mask_outlines(cairo_t* cr, const Box& box, const HeatmapData& d, const Colormap& cmap) {
  if (d.mask.empty()) return;
  const double lw = outline_width(box.w / d.cols, box.h / d.rows);
  auto code = [&](int i, int j) { return d.mask[std::size_t(i) * d.cols + j]; };
  cairo_save(cr);
  cairo_rectangle(cr, box.x, box.y, box.w, box.h);
  cairo_clip(cr);
  cairo_set_line_cap(cr, CAIRO_LINE_CAP_SQUARE);
  cairo_set_line_width(cr, lw);
  // Protected: dashed; outside the oracle's top k: dotted; evicted: solid.
  region_border(cr, box, d.rows, d.cols, [&](int i, int j) { return code(i, j) == kMaskProtected; });
  set_color(cr, protected_outline_color(cmap));
  set_dash(cr, {3 * lw, 2 * lw});
  cairo_stroke(cr);
  region_border(cr, box, d.rows, d.cols, [&](int i, int j) { return code(i, j) == kOutsideTopK; });
  set_color(cr, evicted_outline_color(cmap));
  set_dash(cr, {lw, 1.5 * lw});
  cairo_stroke(cr);
  region_border(cr, box, d.rows, d.cols,
                [&](int i, int j) { return code(i, j) == kEvictedNow || code(i, j) == kEvictedEarlier; });
  set_dash(cr, {});
  cairo_stroke(cr);
  cairo_restore(cr);
}

}  // namespace kvscope
