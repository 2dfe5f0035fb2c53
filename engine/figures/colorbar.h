// The colour key beside a heatmap: the colormap as a vertical bar (top: the
// range's high end), ticks with labels in the scale's units (decades on a log
// scale) and a caption that says what the values are and how they are scaled
// ("attention weight, log scale").
#pragma once

#include <cairo.h>

#include <string>
#include <vector>

#include "figures/canvas.h"
#include "figures/color_scale.h"
#include "io/colormap.h"

namespace kvscope {

struct ColorbarTick {
  double value = 0;
  double y = 0;        // points, on the bar
  std::string label;   // Pango markup
};

struct Colorbar {
  Box bar;  // the ramp
  ColorScale scale;
  std::string caption;
  std::vector<ColorbarTick> ticks;
  double width = 0;  // bar, ticks, labels and caption together
};

inline constexpr double kColorbarWidth = 10;

// The bar at (x, y) with the given height; ticks chosen to fit it.
Colorbar layout_colorbar(double x, double y, double height, const ColorScale& scale, const std::string& caption);
// Width a colorbar of this scale and caption needs (same as layout_colorbar's).
double colorbar_width(double height, const ColorScale& scale, const std::string& caption);
void draw_colorbar(cairo_t* cr, const Colorbar& bar, const Colormap& cmap);

// The caption for a value name and scale: "attention weight (log scale)".
std::string colorbar_caption(const std::string& value_name, ScaleKind kind);

// A 1 x 256 image of the colormap, for ramps and legends.
void paint_colormap_ramp(cairo_t* cr, const Box& box, const Colormap& cmap, bool vertical);

}  // namespace kvscope
