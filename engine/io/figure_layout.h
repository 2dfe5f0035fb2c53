// Pieces shared by kvscope's figure layouts (heatmaps, line charts) and the
// two ways they are drawn (PNG raster, SVG text): text items placed in
// pixels, tick positions, "nice" tick values and their labels. A layout is
// computed once and both renderers follow it, so a PNG and an SVG of the
// same figure agree to the pixel.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "io/image.h"

namespace kvscope {

// One piece of text at a pixel position. Horizontal text: (x, y) is the top
// of the text box and x is its left edge, centre or right edge per `align`.
// Vertical text (reads bottom to top): x is the left edge of the rotated box
// and y its centre. `sup` is a superscript after the text (the exponent of
// "10^-3"), horizontal text only.
struct TextItem {
  enum class Align { left, center, right };
  std::string text;
  int x = 0, y = 0;
  Align align = Align::left;
  bool vertical = false;
  bool bold = false;
  std::string sup;
};

// A tick: its value, its pixel position along the axis, and its label
// (empty for minor ticks) with an optional superscript.
struct Tick {
  double value = 0;
  int pos = 0;
  std::string label;
  std::string sup;
};

// Builders that spell out the optional fields (keeps -Wextra quiet about
// partly initialised aggregates).
inline TextItem text_item(std::string text, int x, int y, TextItem::Align align, bool vertical = false,
                          bool bold = false, std::string sup = {}) {
  return TextItem{std::move(text), x, y, align, vertical, bold, std::move(sup)};
}
inline Tick tick(double value, int pos, std::string label, std::string sup = {}) {
  return Tick{value, pos, std::move(label), std::move(sup)};
}

// Superscripts are drawn at this smaller scale, raised by `scale` pixels.
int sup_scale(int scale);
// Width of a label with its superscript.
int label_width(const std::string& text, const std::string& sup, int scale);
// The pixels a text item covers when drawn.
Rect text_item_box(const TextItem& t, int scale);

// A step of 1, 2 or 5 x 10^n such that `span` holds at most max_ticks steps
// (at least one tick is always allowed).
double nice_step(double span, int max_ticks);
// Multiples of `step` inside [lo, hi] (with a little tolerance for rounding).
std::vector<double> ticks_in(double lo, double hi, double step);
// A tick value printed with as many decimals as `step` needs ("0.05", "20").
std::string tick_label(double value, double step);
// Labels for decades 10^k as (text, superscript): plain ("0.01", "") when
// every |k| <= 3, otherwise all as ("10", "-6") so one axis never mixes
// styles.
std::vector<std::pair<std::string, std::string>> decade_labels(const std::vector<int>& exponents);

// Draws text items with the bitmap font at `scale` (io/image.h).
void draw_text_items(Image& img, const std::vector<TextItem>& items, Rgb color, int scale);

}  // namespace kvscope
