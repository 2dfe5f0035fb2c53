#include "figures/plot_style.h"

#include <cmath>

namespace kvscope {

SeriesStyle series_style(std::size_t i) {
  // Okabe & Ito (2008) without their yellow (unreadable on white), then
  // brown, wine and olive (no grey: the full-cache reference line is grey):
  // ten colours, so a sweep of every policy draws no two alike.
  static constexpr Rgb kPalette[] = {{0, 114, 178},   {213, 94, 0},   {0, 158, 115}, {204, 121, 167}, {230, 159, 0},
                                     {86, 180, 233}, {0, 0, 0},      {130, 80, 30},   {136, 34, 85}, {153, 153, 51}};
  static constexpr Marker kMarkers[] = {Marker::circle,   Marker::square, Marker::triangle_up, Marker::diamond,
                                        Marker::triangle_down, Marker::plus, Marker::cross,       Marker::star,
                                        Marker::pentagon};
  // Dash lengths are co-prime with the marker count, so series i and j
  // differ in at least two of colour, marker and dash for any i != j < 45.
  static const std::vector<double> kDashes[] = {{}, {5, 2.5}, {1.5, 2}, {7, 2, 1.5, 2}, {3, 1.5, 3, 1.5, 1, 1.5}};
  SeriesStyle s;
  s.color = kPalette[i % std::size(kPalette)];
  s.marker = kMarkers[i % std::size(kMarkers)];
  s.dash = kDashes[i % std::size(kDashes)];
  return s;
}

void set_dash(cairo_t* cr, const std::vector<double>& dash) {
  cairo_set_dash(cr, dash.empty() ? nullptr : dash.data(), static_cast<int>(dash.size()), 0);
}

void draw_marker(cairo_t* cr, Marker m, double x, double y, double r) {
  auto polygon = [&](int n, double rotate, double radius) {
    for (int k = 0; k < n; ++k) {
      const double a = rotate + 2 * M_PI * k / n;
      const double px = x + radius * std::sin(a), py = y - radius * std::cos(a);
      k == 0 ? cairo_move_to(cr, px, py) : cairo_line_to(cr, px, py);
    }
    cairo_close_path(cr);
    cairo_fill(cr);
  };
  cairo_save(cr);
  set_dash(cr, {});
  switch (m) {
    case Marker::circle:
      cairo_arc(cr, x, y, r, 0, 2 * M_PI);
      cairo_fill(cr);
      break;
    case Marker::square: cairo_rectangle(cr, x - r * 0.85, y - r * 0.85, r * 1.7, r * 1.7), cairo_fill(cr); break;
    case Marker::triangle_up: polygon(3, 0, r * 1.25); break;
    case Marker::triangle_down: polygon(3, M_PI, r * 1.25); break;
    case Marker::diamond: polygon(4, 0, r * 1.25); break;
    case Marker::pentagon: polygon(5, 0, r * 1.1); break;
    case Marker::star:
      for (int k = 0; k < 10; ++k) {
        const double a = M_PI * k / 5, rr = k % 2 ? r * 0.55 : r * 1.35;
        const double px = x + rr * std::sin(a), py = y - rr * std::cos(a);
        k == 0 ? cairo_move_to(cr, px, py) : cairo_line_to(cr, px, py);
      }
      cairo_close_path(cr);
      cairo_fill(cr);
      break;
    case Marker::plus:
    case Marker::cross: {
      const double a = m == Marker::cross ? M_PI / 4 : 0, rr = r * 1.3;
      cairo_set_line_width(cr, std::max(1.2, r * 0.5));
      for (double b : {a, a + M_PI / 2}) {
        cairo_move_to(cr, x - rr * std::cos(b), y - rr * std::sin(b));
        cairo_line_to(cr, x + rr * std::cos(b), y + rr * std::sin(b));
      }
      cairo_stroke(cr);
      break;
    }
    case Marker::none: break;
  }
  cairo_restore(cr);
}

}  // namespace kvscope
