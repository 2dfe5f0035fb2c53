// The view a run opens on when its session file or lesson names no
// positions (view.positions): the rule, in one place.
//
// Each axis shows all its cells when the fit leaves every cell at least as
// large as its label needs (a column its token's text, a row a text line).
// An axis that would be narrower opens on its newest cells at that smallest
// legible size instead: the most recent positions at the right edge, the
// last steps at the bottom; the view follows the run from there. So a long
// prompt (hundreds of positions over a few steps) opens on the positions
// just before the generated text, with their tokens written above them,
// rather than on a fit where no label can show. Home (or "fit") still shows
// everything.
#pragma once

namespace kvscope::gui {

struct FirstView {
  bool fit = true;  // every cell legible at the fit: open on the fit
  // Otherwise the zoom, in cells per screen pixel: 1 / the legible size on
  // each axis (the camera never zooms out past the fit, so an axis whose
  // cells are legible at the fit still fits, and keeps fitting as it grows).
  double cells_per_px_x = 0, cells_per_px_y = 0;
  double x0 = 0, y0 = 0;  // the first column and row on screen
};

// `rows` x `cols` cells in a `cells_w` x `cells_h` pixel area; a column's
// label needs `min_col_px` pixels, a row's `min_row_px`.
FirstView first_view(int rows, int cols, double cells_w, double cells_h, double min_col_px, double min_row_px);

}  // namespace kvscope::gui
