// Raster rendering of line charts, following LineChartLayout
// (io/line_chart_layout.cpp).
#include "io/line_chart.h"

#include <algorithm>
#include <cmath>

namespace kvscope {
namespace {

constexpr Rgb kFrame{64, 64, 64};
constexpr Rgb kGrid{232, 232, 232};
constexpr Rgb kText{20, 20, 20};

// Liang-Barsky: clips the segment to `r` (continuous coordinates); false
// when nothing of it is inside.
bool clip(double& x0, double& y0, double& x1, double& y1, double xmin, double ymin, double xmax, double ymax) {
  double t0 = 0, t1 = 1;
  const double dx = x1 - x0, dy = y1 - y0;
  const double p[4] = {-dx, dx, -dy, dy}, q[4] = {x0 - xmin, xmax - x0, y0 - ymin, ymax - y0};
  for (int i = 0; i < 4; ++i) {
    if (p[i] == 0) {
      if (q[i] < 0) return false;
      continue;
    }
    const double t = q[i] / p[i];
    if (p[i] < 0) t0 = std::max(t0, t);
    else t1 = std::min(t1, t);
  }
  if (t0 > t1) return false;
  const double ax = x0, ay = y0;
  x0 = ax + t0 * dx, y0 = ay + t0 * dy;
  x1 = ax + t1 * dx, y1 = ay + t1 * dy;
  return true;
}

void draw_marker(Image& img, Marker m, double cx, double cy, double r, Rgb c) {
  switch (m) {
    case Marker::circle: img.fill_circle_aa(cx, cy, r, c); break;
    case Marker::square: {
      const double h = r * 0.88;
      img.fill_polygon_aa({{cx - h, cy - h}, {cx + h, cy - h}, {cx + h, cy + h}, {cx - h, cy + h}}, c);
      break;
    }
    case Marker::triangle: {
      const double h = r * 1.25;
      img.fill_polygon_aa({{cx, cy - h}, {cx + h * 0.866, cy + h * 0.5}, {cx - h * 0.866, cy + h * 0.5}}, c);
      break;
    }
    case Marker::diamond: {
      const double h = r * 1.25;
      img.fill_polygon_aa({{cx, cy - h}, {cx + h, cy}, {cx, cy + h}, {cx - h, cy}}, c);
      break;
    }
    case Marker::none: break;
  }
}

}  // namespace

Rgb series_color(std::size_t i) {
  // Okabe & Ito (2008): blue, vermillion, bluish green, reddish purple,
  // orange, sky blue, black; their yellow is left out (unreadable on white).
  // Then grey, wine and olive, so that a sweep of every policy (nine
  // series) draws no two in one colour.
  static constexpr Rgb kPalette[] = {{0, 114, 178},   {213, 94, 0},   {0, 158, 115}, {204, 121, 167}, {230, 159, 0},
                                     {86, 180, 233}, {0, 0, 0},      {119, 119, 119}, {136, 34, 85}, {153, 153, 51}};
  return kPalette[i % std::size(kPalette)];
}

Marker series_marker(std::size_t i) {
  static constexpr Marker kMarkers[] = {Marker::circle, Marker::square, Marker::triangle, Marker::diamond};
  return kMarkers[i % std::size(kMarkers)];
}

LineChart render_line_chart(std::span<const LineSeries> series, const LineChartOptions& opt) {
  LineChart out{Image(opt.width, opt.height, kWhite), layout_line_chart(series, opt)};
  Image& img = out.image;
  const LineChartLayout& L = out.layout;
  const Rect& P = L.plot;

  for (const auto& t : L.x_ticks) img.fill_rect({t.pos, P.y + 1, 1, P.h - 2}, kGrid);
  for (const auto& t : L.y_ticks) img.fill_rect({P.x + 1, t.pos, P.w - 2, 1}, kGrid);

  // Data inside the frame only (explicit ranges may cut lines).
  const double cx0 = P.x + 1, cy0 = P.y + 1, cx1 = P.right() - 1, cy1 = P.bottom() - 1;
  for (std::size_t si = 0; si < series.size(); ++si) {
    const auto& s = series[si];
    const Rgb color = series_color(si);
    for (std::size_t i = 0; i + 1 < s.x.size(); ++i) {
      double x0 = L.x_to_px(s.x[i]), y0 = L.y_to_px(s.y[i]), x1 = L.x_to_px(s.x[i + 1]), y1 = L.y_to_px(s.y[i + 1]);
      if (!std::isfinite(x0) || !std::isfinite(y0) || !std::isfinite(x1) || !std::isfinite(y1)) continue;
      if (clip(x0, y0, x1, y1, cx0, cy0, cx1, cy1)) img.line_aa(x0, y0, x1, y1, color, L.line_width);
    }
    for (std::size_t i = 0; i < s.x.size(); ++i)
      if (L.visible(s.x[i], s.y[i]))
        draw_marker(img, series_marker(si), L.x_to_px(s.x[i]), L.y_to_px(s.y[i]), L.marker_radius, color);
  }

  img.stroke_rect(P, kFrame);
  for (const auto& t : L.x_ticks) img.fill_rect({t.pos, P.bottom(), 1, L.tick_len}, kFrame);
  for (const auto& t : L.y_ticks) img.fill_rect({P.x - L.tick_len, t.pos, L.tick_len, 1}, kFrame);
  for (const auto& t : L.y_minor_ticks) img.fill_rect({P.x - L.tick_len / 2, t.pos, L.tick_len / 2, 1}, kFrame);

  for (const auto& e : L.legend) {
    const Rgb color = series_color(e.series);
    img.line_aa(e.x - L.swatch_half, e.y + 0.5, e.x + L.swatch_half, e.y + 0.5, color, L.line_width);
    draw_marker(img, series_marker(e.series), e.x + 0.5, e.y + 0.5, L.marker_radius, color);
  }
  draw_text_items(img, L.texts, kText, L.font_scale);
  return out;
}

}  // namespace kvscope
