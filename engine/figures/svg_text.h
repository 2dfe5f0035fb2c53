// SVG figures keep their text as text. Cairo's SVG surface writes every
// glyph as an outline (<symbol> placed by <use>): it has no way to write
// <text>, so labels could not be selected, searched or edited. While an
// SVG is drawn (figures/canvas.cpp), draw_text (figures/text.h) hands each
// laid-out label here instead of drawing it, and each run of it becomes a
// <text> element placed where Pango put it, in the font Pango chose, and
// stretched to the width Pango measured (textLength), so the figure's
// layout holds in a viewer with other fonts. The elements follow the
// figure's drawing, on top of it (no figure here draws over a label).
#pragma once

#include <cairo.h>
#include <pango/pango.h>

#include <string>

#include "io/colormap.h"

namespace kvscope {

// Collects <text> elements on this thread while it lives.
class SvgTextRecorder {
 public:
  SvgTextRecorder();
  ~SvgTextRecorder();
  SvgTextRecorder(const SvgTextRecorder&) = delete;
  SvgTextRecorder& operator=(const SvgTextRecorder&) = delete;

  // The recorder of this thread; nullptr when no SVG is being drawn.
  static SvgTextRecorder* active();
  // `layout` as cr would show it at its current point: one <text> per run,
  // in a group carrying cr's current transformation.
  void add(cairo_t* cr, PangoLayout* layout, Rgb color);
  // `svg` with the elements inserted before its closing </svg>.
  std::string insert_into(const std::string& svg) const;

 private:
  std::string elements_;
  SvgTextRecorder* outer_ = nullptr;
};

}  // namespace kvscope
