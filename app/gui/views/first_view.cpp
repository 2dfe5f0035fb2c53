#include "views/first_view.h"

#include <algorithm>

namespace kvscope::gui {

FirstView first_view(int rows, int cols, double cells_w, double cells_h, double min_col_px, double min_row_px) {
  FirstView v;
  if (rows <= 0 || cols <= 0 || cells_w <= 0 || cells_h <= 0 || min_col_px <= 0 || min_row_px <= 0) return v;
  const bool cols_legible = cells_w / cols >= min_col_px, rows_legible = cells_h / rows >= min_row_px;
  if (cols_legible && rows_legible) return v;
  v.fit = false;
  v.cells_per_px_x = 1.0 / min_col_px;
  v.cells_per_px_y = 1.0 / min_row_px;
  // The newest cells: the last columns and rows that fit at that size.
  v.x0 = std::max(0.0, cols - cells_w * v.cells_per_px_x);
  v.y0 = std::max(0.0, rows - cells_h * v.cells_per_px_y);
  return v;
}

}  // namespace kvscope::gui
