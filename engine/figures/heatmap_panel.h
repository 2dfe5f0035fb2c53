// One heatmap matrix as drawn inside a figure, shared by the single heatmap
// and the all-heads grid: the cells as one image (one colormapped pixel per
// cell, scaled with nearest-neighbour sampling, so an SVG or PDF embeds a
// single image however large the matrix), NaN cells ("not yet seen") in a
// neutral grey, and the slot states of masks.npy drawn without hiding any
// cell's colour: evicted regions outlined, or a separate mask strip.
#pragma once

#include <cairo.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "figures/canvas.h"
#include "figures/color_scale.h"
#include "io/colormap.h"
#include "io/figure_settings.h"  // EvictedStyle

namespace kvscope {

// The values of one matrix and what the axes say about them.
struct HeatmapData {
  int rows = 0, cols = 0;
  std::vector<float> values;  // rows x cols, row-major; NaN: no value (not yet seen)
  std::vector<uint8_t> mask;  // empty, or one masks.npy code per cell (common/mask_codes.h)
  std::vector<std::string> row_labels, col_labels;  // empty, or token text per row / column
  int first_row = 0;              // the step number of row 0
  int first_col = 0;              // the position of column 0 (a crop starts past 0)
  int first_generated_col = -1;   // the prompt length: columns from here on are generated tokens
  int first_generated_row = -1;   // rows from here on are steps of generated tokens

  // Throws kvscope::Error(what, field, ...) when sizes disagree.
  void validate(const std::string& what) const;
};

// The columns (key positions) first..last of `d`, labels, mask and the
// prompt boundary kept in step; first_col says where the crop starts.
// Throws kvscope::Error("positions", ...) when last is past d's columns.
HeatmapData crop_columns(const HeatmapData& d, const PositionRange& range);

// How evicted cells show, without covering any cell's colour: `strip` (the
// default) adds a panel of the mask under the heatmap, column for column
// and row for row, one colour per slot state; `outline` draws the border of
// every evicted region on the heatmap itself (dashed for protected, dotted
// for outside the top k); `none` draws neither. An outline needs cells of
// at least kMinOutlineCell points; smaller cells get the strip. The style's
// names and their check are in io/figure_settings.h (EvictedStyle).
inline constexpr double kMinOutlineCell = 2.5;

inline constexpr Rgb kNanColor{232, 232, 232};
// Outline colours chosen to stand out on each colormap.
Rgb evicted_outline_color(const Colormap& cmap);
Rgb protected_outline_color(const Colormap& cmap);
// Mask strip colours per code.
Rgb mask_code_color(uint8_t code);
std::string mask_code_label(uint8_t code);

// Paints the cells into `box`.
void paint_cells(cairo_t* cr, const Box& box, const HeatmapData& d, const Colormap& cmap, const ColorScale& scale);
// Outlines the evicted (codes 3, 4), protected (2) and outside-top-k (5)
// regions of `box`; line widths follow the cell size.
void draw_mask_outlines(cairo_t* cr, const Box& box, const HeatmapData& d, const Colormap& cmap);
// The mask as its own small panel.
void paint_mask_strip(cairo_t* cr, const Box& box, const HeatmapData& d);
// Line width of the outlines for cells of this size.
double outline_width(double cell_w, double cell_h);

}  // namespace kvscope
