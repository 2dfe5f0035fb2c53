// Helpers of the figures tests: pixels of rendered figures, PNG files read
// back through Cairo, and an attention-like matrix.
#pragma once

#include <cairo.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <ostream>
#include <vector>

#include "figures/canvas.h"
#include "io/colormap.h"

namespace kvscope {

// Found by argument lookup, so gtest prints colours in its failures.
inline std::ostream& operator<<(std::ostream& os, Rgb c) {
  return os << "rgb(" << +c.r << "," << +c.g << "," << +c.b << ")";
}

}  // namespace kvscope

namespace kvscope::test {

// The pixel at point (x, y) of a raster drawn at `dpi`.
inline Rgb pixel_at(const Raster& r, double x_pt, double y_pt, double dpi) {
  const int x = static_cast<int>(x_pt * dpi / 72), y = static_cast<int>(y_pt * dpi / 72);
  EXPECT_TRUE(x >= 0 && y >= 0 && x < r.width && y < r.height) << x << "," << y;
  return r.at(std::clamp(x, 0, r.width - 1), std::clamp(y, 0, r.height - 1));
}

inline Rgb centre_of(const Raster& r, const Box& b, double dpi) { return pixel_at(r, b.x + b.w / 2, b.y + b.h / 2, dpi); }

inline int colour_distance(Rgb a, Rgb b) {
  return std::max({std::abs(a.r - b.r), std::abs(a.g - b.g), std::abs(a.b - b.b)});
}

// A PNG file read back: width, height and pixels.
inline Raster read_png(const std::filesystem::path& p) {
  cairo_surface_t* s = cairo_image_surface_create_from_png(p.c_str());
  Raster r;
  if (cairo_surface_status(s) == CAIRO_STATUS_SUCCESS) {
    cairo_surface_flush(s);
    r.width = cairo_image_surface_get_width(s);
    r.height = cairo_image_surface_get_height(s);
    const int stride = cairo_image_surface_get_stride(s);
    const unsigned char* d = cairo_image_surface_get_data(s);
    const cairo_format_t f = cairo_image_surface_get_format(s);
    for (int y = 0; y < r.height; ++y)
      for (int x = 0; x < r.width; ++x) {
        uint32_t px = reinterpret_cast<const uint32_t*>(d + std::size_t(y) * stride)[x];
        if (f == CAIRO_FORMAT_RGB24) px |= 0xff000000u;
        r.argb.push_back(px);
      }
  }
  cairo_surface_destroy(s);
  return r;
}

// Row i attends to keys 0..i (NaN after), softmax-normalised, with a heavy
// first token.
inline std::vector<float> causal_attention(int rows, int cols) {
  std::vector<float> m(std::size_t(rows) * cols, NAN);
  for (int i = 0; i < rows; ++i) {
    const int last = std::min(cols - 1, cols - rows + i);
    double sum = 0;
    std::vector<double> w(last + 1);
    for (int j = 0; j <= last; ++j) {
      w[j] = std::exp(-0.05 * (last - j) + 1.5 * std::sin(0.07 * j) * std::cos(0.03 * i)) + (j == 0 ? 6.0 : 0.0);
      sum += w[j];
    }
    for (int j = 0; j <= last; ++j) m[std::size_t(i) * cols + j] = float(w[j] / sum);
  }
  return m;
}

}  // namespace kvscope::test
