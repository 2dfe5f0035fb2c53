// Vector (SVG) versions of kvscope's figures for papers: the line chart and
// the heatmap, drawn from the same layouts as the PNGs (io/line_chart.h,
// io/heatmap.h) so both exports agree. Text uses the viewer's sans-serif
// font at the bitmap font's size.
#pragma once

#include <cstddef>
#include <filesystem>
#include <span>
#include <string>

#include "io/heatmap.h"
#include "io/line_chart.h"

namespace kvscope {

// One <rect> per run of equal cells is fine up to this many cells; larger
// matrices belong in a PNG.
inline constexpr std::size_t kSvgMaxHeatmapCells = 256 * 256;

// One <polyline> per unbroken run of each series (one per series when it
// has no gaps), markers as shapes, text as <text>.
std::string line_chart_svg(std::span<const LineSeries> series, const LineChartOptions& opt);
// Throws kvscope::Error("heatmap svg", "size", ...) for more than
// kSvgMaxHeatmapCells cells per panel, suggesting PNG.
std::string heatmap_svg(std::span<const float> values, int rows, int cols, const HeatmapOptions& opt,
                        std::span<const uint8_t> overlay = {});
std::string heatmap_grid_svg(std::span<const HeatmapPanel> panels, int rows, int cols, int grid_columns,
                             const HeatmapOptions& opt);

// Written atomically; errors name `path`.
void write_line_chart_svg(const std::filesystem::path& path, std::span<const LineSeries> series,
                          const LineChartOptions& opt);
void write_heatmap_svg(const std::filesystem::path& path, std::span<const float> values, int rows, int cols,
                       const HeatmapOptions& opt, std::span<const uint8_t> overlay = {});

}  // namespace kvscope
