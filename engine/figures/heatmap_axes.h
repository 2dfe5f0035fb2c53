// The axes of a heatmap panel: token text wherever a legible size fits
// (every item, else every 2nd, 5th, 10th; rotated on the x axis), index
// numbers (steps, positions) at nice intervals otherwise, the prompt /
// generated boundary as a two-colour bar along an axis, and the legend of
// what the marks mean.
#pragma once

#include <cairo.h>

#include <string>
#include <vector>

#include "figures/canvas.h"
#include "figures/heatmap_panel.h"
#include "figures/text.h"

namespace kvscope {

// Token labels shrink from 7 pt down to the smallest printed size
// (io/figure_settings.h), never below.
inline constexpr double kTokenFontMax = 7, kTokenFontMin = kMinFontPt, kNumberFont = 8;
// Token labels are given up for numbers when fewer than one item in this
// many would get one.
inline constexpr int kMaxTokenStride = 10;
inline constexpr double kTokenLabelMax = 80;  // points: longer token labels are ellipsized
inline constexpr Rgb kPromptColor{175, 175, 175}, kGeneratedColor{230, 159, 0};
inline constexpr Rgb kGeneratedText{150, 80, 0};

enum class Side { left, right, top, bottom };

struct AxisLabels {
  Side side = Side::left;
  std::vector<int> items;          // indices labelled
  std::vector<std::string> texts;  // their text
  double font = kNumberFont;
  bool tokens = false;
  int first_generated = -1;  // token labels from this index on are drawn in kGeneratedText
  double depth = 0;          // room taken away from the panel (points)
  bool empty() const { return items.empty(); }
};

// Token labels for items `pitch` points apart, or nothing when they do not
// fit (see kMaxTokenStride). Labels run along `side`; on top/bottom they are
// rotated to read bottom to top.
AxisLabels token_axis(const std::vector<std::string>& labels, double pitch, Side side, int first_generated);
// Numbers first, first + 1, ... for n items at nice intervals.
AxisLabels number_axis(int n, int first, double pitch, Side side);
// Draws the labels (and their ticks) beside `plot`, `offset` points out.
void draw_axis(cairo_t* cr, const Box& plot, int n, const AxisLabels& a, double offset);

inline constexpr double kBoundaryBar = 3.5, kBoundaryGap = 1.5;
// The prompt / generated bar along the bottom (columns) or left (rows) of
// `plot`, `offset` points out; nothing when first_generated < 0.
void draw_boundary_bar(cairo_t* cr, const Box& plot, int n, int first_generated, Side side, double offset);

// One legend item: a swatch and its text.
struct LegendItem {
  enum class Kind { fill, outline, dashed, dotted, bar } kind = Kind::fill;
  Rgb color, inner;  // outline kinds: the line colour and the cell colour inside
  std::string text;
};
// The legend items for a panel's data as drawn: NaN cells, the mask marks
// in `style`, the prompt / generated bar.
std::vector<LegendItem> panel_legend(const HeatmapData& d, EvictedStyle style, const Colormap& cmap);
// Lays the items out in rows no wider than `width`; returns the height used.
double legend_height(const std::vector<LegendItem>& items, double width);
void draw_legend(cairo_t* cr, const std::vector<LegendItem>& items, double x, double y, double width);

// Cell size along one axis of n items: big enough for a token label
// (kLabelPitch) when the panel stays within max_extent, at least min_extent
// in all, at most kMaxCell.
inline constexpr double kLabelPitch = 9, kMaxCell = 28;
double panel_cell_size(int n, double max_extent, double min_extent);
// The effective evicted style: outline falls back to the strip on cells
// too small to outline, and to none when there is no mask.
EvictedStyle effective_evicted_style(EvictedStyle want, const HeatmapData& d, double cell_w, double cell_h);
// Height of the mask strip under a panel of height h.
double mask_strip_height(double h);

}  // namespace kvscope
