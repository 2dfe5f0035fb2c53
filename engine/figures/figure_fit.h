// Fitting a figure to a printed size (io/figure_settings.h: column, page,
// WxH) without printing text below kMinFontPt. Fonts are given in points
// and are never shrunk: instead the figure is laid out again with its plot
// area (cells, line-plot data area, grid panels) shrunk by a factor, which
// also thins its labels, until it fits; the result is then scaled up (never
// down) to the exact width asked for and centred when both sides are fixed.
// Every text of a figure is >= 6 pt at its natural size, so it stays >= 6 pt.
#pragma once

#include <filesystem>
#include <functional>
#include <vector>

#include "figures/canvas.h"

namespace kvscope {

// How a layout is asked to shrink: the factor on its plot-area limits, and
// whether a title wider than the content wraps (fitted) or widens the
// figure (natural size, as before).
struct LayoutFit {
  double shrink = 1;
  bool wrap_title = false;
  double max_width = 0;  // > 0: the width to fit (a grid picks its columns for it)
};

struct FigureFit {
  LayoutFit layout;  // what the figure was laid out with
  FigureSize page;   // the file's size in points
  double scale = 1;  // layout points -> page points (>= 1)
  double dx = 0, dy = 0;
};

// The smallest shrink tried; a figure that does not fit even then is refused.
inline constexpr double kMinShrink = 0.04;

// `layout_at` lays the figure out for a LayoutFit and returns its size.
// Throws kvscope::Error("figure size", ...) when the figure cannot fit the
// size asked for with its text at a readable size.
FigureFit fit_figure(const FigureSizeSpec& spec, const std::function<FigureSize(const LayoutFit&)>& layout_at);
// write_figure for a fitted figure: `draw` draws in layout points.
std::vector<std::filesystem::path> write_fitted_figure(const std::filesystem::path& stem, const FigureFit& fit,
                                                       const DrawFigure& draw, const FigureOutput& out);
// `draw` wrapped to draw on the fitted page (for render_raster and tests).
DrawFigure fitted_drawing(const FigureFit& fit, const DrawFigure& draw);

}  // namespace kvscope
