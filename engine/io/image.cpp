#include "io/image.h"

#include <algorithm>
#include <cmath>

#include "io/bitmap_font.h"

namespace kvscope {

Image::Image(int w, int h, Rgb background) : width(std::max(w, 0)), height(std::max(h, 0)) {
  pixels.resize(static_cast<std::size_t>(width) * height * 3);
  for (std::size_t i = 0; i < pixels.size(); i += 3) {
    pixels[i] = background.r;
    pixels[i + 1] = background.g;
    pixels[i + 2] = background.b;
  }
}

Rgb Image::at(int x, int y) const {
  const std::size_t i = (static_cast<std::size_t>(y) * width + x) * 3;
  return {pixels[i], pixels[i + 1], pixels[i + 2]};
}

void Image::set(int x, int y, Rgb c) {
  if (x < 0 || y < 0 || x >= width || y >= height) return;
  const std::size_t i = (static_cast<std::size_t>(y) * width + x) * 3;
  pixels[i] = c.r;
  pixels[i + 1] = c.g;
  pixels[i + 2] = c.b;
}

void Image::blend(int x, int y, Rgb c, float a) {
  if (x < 0 || y < 0 || x >= width || y >= height || !(a > 0)) return;
  if (a >= 1) return set(x, y, c);
  const Rgb o = at(x, y);
  auto mix = [a](uint8_t from, uint8_t to) { return static_cast<uint8_t>(std::lround(from + (to - from) * a)); };
  set(x, y, {mix(o.r, c.r), mix(o.g, c.g), mix(o.b, c.b)});
}

void Image::fill_rect(Rect r, Rgb c) {
  const int x0 = std::max(r.x, 0), x1 = std::min(r.right(), width);
  const int y0 = std::max(r.y, 0), y1 = std::min(r.bottom(), height);
  for (int y = y0; y < y1; ++y)
    for (int x = x0; x < x1; ++x) set(x, y, c);
}

void Image::stroke_rect(Rect r, Rgb c, int t) {
  t = std::min({t, r.w, r.h});
  if (t <= 0) return;
  fill_rect({r.x, r.y, r.w, t}, c);
  fill_rect({r.x, r.bottom() - t, r.w, t}, c);
  fill_rect({r.x, r.y, t, r.h}, c);
  fill_rect({r.right() - t, r.y, t, r.h}, c);
}

void Image::line(int x0, int y0, int x1, int y1, Rgb c) {
  const int dx = std::abs(x1 - x0), dy = -std::abs(y1 - y0);
  const int sx = x0 < x1 ? 1 : -1, sy = y0 < y1 ? 1 : -1;
  int err = dx + dy;
  for (;;) {
    set(x0, y0, c);
    if (x0 == x1 && y0 == y1) break;
    const int e2 = 2 * err;
    if (e2 >= dy) err += dy, x0 += sx;
    if (e2 <= dx) err += dx, y0 += sy;
  }
}

// Coverage of each pixel is estimated from the distance between its centre
// and the segment (a capsule of radius width/2), with a one-pixel ramp: cheap,
// and smooth enough for chart lines.
void Image::line_aa(double x0, double y0, double x1, double y1, Rgb c, double w) {
  const double r = w / 2;
  const int px0 = static_cast<int>(std::floor(std::min(x0, x1) - r - 1)), px1 = static_cast<int>(std::ceil(std::max(x0, x1) + r + 1));
  const int py0 = static_cast<int>(std::floor(std::min(y0, y1) - r - 1)), py1 = static_cast<int>(std::ceil(std::max(y0, y1) + r + 1));
  const double dx = x1 - x0, dy = y1 - y0, len2 = dx * dx + dy * dy;
  for (int py = std::max(py0, 0); py <= std::min(py1, height - 1); ++py)
    for (int px = std::max(px0, 0); px <= std::min(px1, width - 1); ++px) {
      const double cx = px + 0.5, cy = py + 0.5;
      const double t = len2 > 0 ? std::clamp(((cx - x0) * dx + (cy - y0) * dy) / len2, 0.0, 1.0) : 0.0;
      const double d = std::hypot(cx - (x0 + t * dx), cy - (y0 + t * dy));
      blend(px, py, c, static_cast<float>(std::clamp(r + 0.5 - d, 0.0, 1.0)));
    }
}

void Image::fill_circle_aa(double cx, double cy, double radius, Rgb c) {
  for (int py = std::max(0, static_cast<int>(cy - radius - 1)); py <= std::min(height - 1, static_cast<int>(cy + radius + 1)); ++py)
    for (int px = std::max(0, static_cast<int>(cx - radius - 1)); px <= std::min(width - 1, static_cast<int>(cx + radius + 1)); ++px) {
      const double d = std::hypot(px + 0.5 - cx, py + 0.5 - cy);
      blend(px, py, c, static_cast<float>(std::clamp(radius + 0.5 - d, 0.0, 1.0)));
    }
}

void Image::fill_polygon_aa(const std::vector<std::pair<double, double>>& pts, Rgb c) {
  if (pts.size() < 3) return;
  double xmin = pts[0].first, xmax = xmin, ymin = pts[0].second, ymax = ymin;
  for (auto [x, y] : pts) xmin = std::min(xmin, x), xmax = std::max(xmax, x), ymin = std::min(ymin, y), ymax = std::max(ymax, y);
  // Even-odd rule at 4x4 sample points per pixel.
  auto inside = [&](double x, double y) {
    bool in = false;
    for (std::size_t i = 0, j = pts.size() - 1; i < pts.size(); j = i++) {
      const auto [xi, yi] = pts[i];
      const auto [xj, yj] = pts[j];
      if ((yi > y) != (yj > y) && x < xi + (y - yi) * (xj - xi) / (yj - yi)) in = !in;
    }
    return in;
  };
  for (int py = std::max(0, static_cast<int>(std::floor(ymin))); py <= std::min(height - 1, static_cast<int>(std::ceil(ymax))); ++py)
    for (int px = std::max(0, static_cast<int>(std::floor(xmin))); px <= std::min(width - 1, static_cast<int>(std::ceil(xmax))); ++px) {
      int hits = 0;
      for (int sy = 0; sy < 4; ++sy)
        for (int sx = 0; sx < 4; ++sx) hits += inside(px + (sx + 0.5) / 4, py + (sy + 0.5) / 4);
      blend(px, py, c, hits / 16.0f);
    }
}

// ---- text -------------------------------------------------------------------

int text_width(std::string_view text, int scale) {
  int w = 0;
  for (char ch : text) w += bitmap_font::glyph(ch).advance;
  if (!text.empty()) w -= bitmap_font::kSpacing;  // no gap after the last glyph
  return std::max(w, 0) * scale;
}

int text_height(int scale) { return bitmap_font::kRows * scale; }
int text_ascent(int scale) { return bitmap_font::kAscent * scale; }

// Calls ink(column, row) for every inked font pixel of `text`, in unscaled
// text-box coordinates; both text directions share it.
template <typename Ink>
static void for_each_ink(std::string_view text, Ink ink) {
  int pen = 0;
  for (char ch : text) {
    const auto& g = bitmap_font::glyph(ch);
    for (int y = 0; y < bitmap_font::kRows; ++y)
      for (int x = 0; x < g.width; ++x)
        if (g.on(x, y)) ink(pen + x, y);
    pen += g.advance;
  }
}

int draw_text(Image& img, int x, int y, std::string_view text, Rgb c, int scale, bool bold) {
  scale = std::max(scale, 1);
  for_each_ink(text, [&](int gx, int gy) {
    img.fill_rect({x + gx * scale, y + gy * scale, scale + (bold ? 1 : 0), scale}, c);
  });
  return text_width(text, scale);
}

void draw_text_up(Image& img, int x, int y, std::string_view text, Rgb c, int scale) {
  scale = std::max(scale, 1);
  const int len = text_width(text, scale);
  // Text-box column gx becomes image row (len - 1 - gx); text-box row gy
  // becomes image column gy.
  for_each_ink(text, [&](int gx, int gy) { img.fill_rect({x + gy * scale, y + len - (gx + 1) * scale, scale, scale}, c); });
}

}  // namespace kvscope
