// A heatmap figure of one matrix (the attention of one head over the
// recorded steps): a size chosen for the content, token text on the axes
// where it fits, the prompt / generated boundary, evicted cells marked
// without hiding their values, a colorbar with units and scale, a title and
// a legend. The layout is public so tests can find every cell.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "figures/canvas.h"
#include "figures/colorbar.h"
#include "figures/figure_fit.h"
#include "figures/heatmap_axes.h"
#include "figures/heatmap_panel.h"

namespace kvscope {

struct HeatmapFigureOptions {
  std::string title;
  std::string value_name = "attention weight";  // the colorbar caption (units)
  std::string row_name = "step", col_name = "key position";
  std::string row_token_name = "query token", col_token_name = "key token";
  std::string colormap = "viridis";
  ColorScale scale;
  EvictedStyle evicted = EvictedStyle::strip;
};

// The single figure's matrix is at most this many points a side.
inline constexpr double kHeatmapMaxPlot = 860, kHeatmapMinWidth = 320, kHeatmapMinHeight = 160;
inline constexpr double kFigureMargin = 10;
// Gaps (points) that a single heatmap and a grid of them share.
inline constexpr double kHeatmapTitleGap = 6, kHeatmapCaptionGap = 3, kHeatmapColorbarGap = 14, kHeatmapLegendGap = 10;

struct HeatmapLayout {
  FigureSize size;
  Box plot;   // the cells
  Box strip;  // the mask strip; w == 0 when there is none
  EvictedStyle evicted = EvictedStyle::none;  // as drawn
  double cell_w = 0, cell_h = 0;
  AxisLabels left, right, top, bottom;
  double left_offset = 0, bottom_offset = 0;  // labels start this far from the plot (after bars, strip)
  Colorbar colorbar;
  std::vector<LegendItem> legend;
  double legend_y = 0;
  double title_y = 0;
  TextStyle title;  // title_style(), wrapped to the figure when fitted

  Box cell(int i, int j) const { return {plot.x + j * cell_w, plot.y + i * cell_h, cell_w, cell_h}; }
};

// Throws kvscope::Error("heatmap", ...) for inconsistent data or an unknown colormap.
// `fit` shrinks the matrix's limits (figures/figure_fit.h).
HeatmapLayout layout_heatmap(const HeatmapData& d, const HeatmapFigureOptions& opt, const LayoutFit& fit = {});
void draw_heatmap(cairo_t* cr, const HeatmapLayout& L, const HeatmapData& d, const HeatmapFigureOptions& opt);
std::vector<std::filesystem::path> write_heatmap(const std::filesystem::path& stem, const HeatmapData& d,
                                                 const HeatmapFigureOptions& opt, const FigureOutput& out);

// Shared by the heatmap figures: the title's style and the axis captions.
const TextStyle& title_style();
// The title's style in a figure `content_width` points wide: wrapped to it
// when fitted, else as title_style() (the title widens the figure).
TextStyle fitted_title_style(const LayoutFit& fit, double content_width);
const TextStyle& caption_style();

}  // namespace kvscope
