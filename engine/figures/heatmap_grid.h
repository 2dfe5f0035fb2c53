// All heads of a layer side by side: panels of one shape sharing one colour
// range and one colorbar (so panel colours compare), the axes labelled on
// the outer panels only, each panel titled ("head 3 · KV 0").
#pragma once

#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "figures/heatmap.h"

namespace kvscope {

inline constexpr double kGridPanelMax = 400, kGridPanelMinWidth = 200, kGridPanelMinHeight = 70;
inline constexpr double kGridMaxWidth = 1400;

struct HeatmapGridLayout {
  FigureSize size;
  int grid_columns = 1;
  std::vector<Box> panels, strips;  // strips: w == 0 when none
  double cell_w = 0, cell_h = 0;
  EvictedStyle evicted = EvictedStyle::none;
  AxisLabels left, bottom, top;
  double left_offset = 0, bottom_offset = 0;
  Colorbar colorbar;
  std::vector<LegendItem> legend;
  double legend_y = 0, title_y = 0;
  TextStyle title;  // title_style(), wrapped to the figure when fitted

  Box cell(int panel, int i, int j) const {
    const Box& p = panels.at(static_cast<std::size_t>(panel));
    return {p.x + j * cell_w, p.y + i * cell_h, cell_w, cell_h};
  }
};

// Every panel has the shape, labels and boundaries of panels[0];
// titles[i] names panel i. grid_columns 0: chosen for a landscape figure.
HeatmapGridLayout layout_heatmap_grid(std::span<const HeatmapData> panels, std::span<const std::string> titles,
                                      const HeatmapFigureOptions& opt, int grid_columns = 0, const LayoutFit& fit = {});
void draw_heatmap_grid(cairo_t* cr, const HeatmapGridLayout& L, std::span<const HeatmapData> panels,
                       std::span<const std::string> titles, const HeatmapFigureOptions& opt);
std::vector<std::filesystem::path> write_heatmap_grid(const std::filesystem::path& stem,
                                                      std::span<const HeatmapData> panels,
                                                      std::span<const std::string> titles,
                                                      const HeatmapFigureOptions& opt, const FigureOutput& out);

}  // namespace kvscope
