// A plain 8-bit RGB raster and the few drawing primitives kvscope's figure
// writers need (rectangles, antialiased lines and markers, bitmap text).
// Everything clips to the image, so layout code never has to.
#pragma once

#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

namespace kvscope {

struct Rgb {
  uint8_t r = 0, g = 0, b = 0;
  friend bool operator==(const Rgb&, const Rgb&) = default;
};

inline constexpr Rgb kWhite{255, 255, 255};
inline constexpr Rgb kBlack{0, 0, 0};

// Pixel rectangle: columns [x, x + w), rows [y, y + h).
struct Rect {
  int x = 0, y = 0, w = 0, h = 0;
  int right() const { return x + w; }   // one past the last column
  int bottom() const { return y + h; }  // one past the last row
  bool contains(int px, int py) const { return px >= x && px < x + w && py >= y && py < y + h; }
  bool empty() const { return w <= 0 || h <= 0; }
  friend bool operator==(const Rect&, const Rect&) = default;
};

struct Image {
  int width = 0;
  int height = 0;
  std::vector<uint8_t> pixels;  // RGB, row-major, top row first

  Image() = default;
  Image(int w, int h, Rgb background = kWhite);

  Rgb at(int x, int y) const;                // precondition: inside
  void set(int x, int y, Rgb c);             // ignored outside
  void blend(int x, int y, Rgb c, float a);  // a in [0, 1]; ignored outside

  void fill_rect(Rect r, Rgb c);
  void stroke_rect(Rect r, Rgb c, int thickness = 1);  // drawn inside r
  // Exact one-pixel lines (Bresenham), for axes and ticks.
  void line(int x0, int y0, int x1, int y1, Rgb c);
  // Antialiased line of the given width between pixel-centre coordinates
  // (pixel (i, j) covers [i, i+1) x [j, j+1), its centre is i + 0.5).
  void line_aa(double x0, double y0, double x1, double y1, Rgb c, double width = 1.0);
  void fill_circle_aa(double cx, double cy, double radius, Rgb c);
  // Convex or concave polygon, antialiased by 4x4 supersampling.
  void fill_polygon_aa(const std::vector<std::pair<double, double>>& points, Rgb c);
};

// Text in kvscope's bitmap font (io/bitmap_font.h), scaled by an integer
// factor. (x, y) is the top-left corner of the text box; the box is
// text_width() wide and text_height() tall (cap height plus descenders).
int text_width(std::string_view text, int scale = 1);
int text_height(int scale = 1);
int text_ascent(int scale = 1);  // cap height: top of the box to the baseline
// Returns the advance (text_width). `bold` doubles each stroke sideways.
int draw_text(Image& img, int x, int y, std::string_view text, Rgb c, int scale = 1, bool bold = false);
// Rotated 90 degrees counter-clockwise (reads bottom to top, for y-axis
// labels): the box is text_height() wide and text_width() tall, (x, y) its
// top-left corner.
void draw_text_up(Image& img, int x, int y, std::string_view text, Rgb c, int scale = 1);

}  // namespace kvscope
