// How the series of a plot tell themselves apart: a colour (Okabe & Ito's
// colour-blind-safe set, then three more), a marker and a dash pattern, all
// three different from one series to the next, so a plot reads in grayscale
// and on a black-and-white printout too.
#pragma once

#include <cairo.h>

#include <cstddef>
#include <vector>

#include "figures/text.h"
#include "io/colormap.h"

namespace kvscope {

// Frames, axes and ticks of every figure.
inline constexpr Rgb kFrameColor{70, 70, 70};
// The entries of every figure's legend (the heatmap's mask key, a plot's series).
inline const TextStyle kLegendText{.size = 8};

enum class Marker { circle, square, triangle_up, diamond, triangle_down, plus, cross, star, pentagon, none };

struct SeriesStyle {
  Rgb color;
  Marker marker = Marker::circle;
  std::vector<double> dash;  // on/off lengths in points; empty = solid
  double line_width = 1.6;
};

SeriesStyle series_style(std::size_t i);
// A marker of the given radius (points) centred at (x, y), filled (outlined
// for plus and cross) in the current source.
void draw_marker(cairo_t* cr, Marker m, double x, double y, double radius);
void set_dash(cairo_t* cr, const std::vector<double>& dash);

}  // namespace kvscope
