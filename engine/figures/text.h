// Text in figures through Pango: real fonts (DejaVu Sans, and whatever
// fontconfig offers for the scripts it lacks: CJK, Arabic, emoji), measured
// and drawn in points, horizontal or rotated. Metrics are unhinted, so a
// label measures the same on the PNG, SVG and PDF surfaces.
#pragma once

#include <cairo.h>

#include <string>
#include <string_view>

#include "io/colormap.h"

namespace kvscope {

inline constexpr Rgb kTextColor{25, 25, 25};

struct TextStyle {
  double size = 8;  // points
  bool bold = false;
  bool markup = false;     // Pango markup (<sup>, <i>); plain text otherwise
  double max_width = 0;    // > 0: ellipsized ("…") to fit this many points
  double wrap_width = 0;   // > 0: wrapped at word boundaries to lines this many points wide
  Rgb color = kTextColor;
};

struct TextExtent {
  double width = 0, height = 0;  // the logical box, in points
  double baseline = 0;           // from the top of the box
  double x = 0;  // where the box starts in the layout (right-to-left text in a fixed width starts past 0)
};

TextExtent measure_text(std::string_view text, const TextStyle& style);

enum class HAlign { left, center, right };
enum class VAlign { top, middle, baseline, bottom };

// Draws `text` with its box anchored at (x, y): `h` and `v` say which point of
// the box that is. `angle` (degrees, counter-clockwise) turns the text about
// the anchor: 90 reads bottom to top.
void draw_text(cairo_t* cr, std::string_view text, double x, double y, const TextStyle& style, HAlign h = HAlign::left,
               VAlign v = VAlign::top, double angle = 0);

// The smallest text drawn by draw_text on this thread since the last reset,
// in device units (points on SVG, PDF and recording surfaces): how tests
// read back that a fitted figure keeps its fonts >= 6 pt. +inf when none.
void reset_smallest_text_drawn();
double smallest_text_drawn();

// A token's text as a label: control characters made visible ("\n" -> "↵",
// "\t" -> "→", other C0 bytes -> "␀".. "␟"), a token of spaces as "␣",
// invalid UTF-8 replaced, and cut to `max_chars` code points with "…".
std::string printable_token(std::string_view text, int max_chars = 14);
// Text escaped for Pango markup.
std::string markup_escape(std::string_view text);
// Characters of `text` that no installed font could draw (Pango's unknown
// glyphs); 0 when every character has a font.
int missing_glyphs(std::string_view text, const TextStyle& style);

}  // namespace kvscope
