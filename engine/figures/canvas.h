// Where a figure is drawn: one drawing function, run once per output format
// on a Cairo surface (PNG raster at a chosen DPI, SVG, PDF), in points
// (1/72 inch) whatever the format. Files are written atomically
// (io/atomic_file.h): nothing half-written is left when drawing or writing
// fails.
#pragma once

#include <cairo.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "io/colormap.h"
#include "io/figure_metadata.h"
#include "io/figure_settings.h"  // FigureFormat, DPI limits

namespace kvscope {

struct FigureOutput {
  std::vector<FigureFormat> formats{FigureFormat::png};
  double dpi = kDefaultDpi;  // PNG only: pixels per inch (the vector formats are in points)
  FigureMetadata metadata;   // what made the figure, written into every file (io/figure_metadata.h)
  FigureSizeSpec size;       // the printed size (figures/figure_fit.h); natural by default
};

// Draws with cairo user units of points, (0, 0) the top-left corner.
using DrawFigure = std::function<void(cairo_t*)>;

struct FigureSize {
  double width = 0, height = 0;  // points
};

// Writes `stem` + ".png" / ".svg" / ".pdf" for each format, in the order
// given; returns the paths written. Throws kvscope::Error naming the file.
std::vector<std::filesystem::path> write_figure(const std::filesystem::path& stem, FigureSize size,
                                                const DrawFigure& draw, const FigureOutput& out);

// The figure as pixels in memory, drawn as the PNG would be (tests, and
// callers that show a figure rather than write it).
struct Raster {
  int width = 0, height = 0;
  std::vector<uint32_t> argb;  // premultiplied ARGB32 on an opaque white ground, row-major
  Rgb at(int x, int y) const;
};
Raster render_raster(FigureSize size, double dpi, const DrawFigure& draw);
// Pixel size of a figure at `dpi` (what the PNG will be).
int pixels_for(double points, double dpi);

// Small drawing helpers shared by the figures.
void set_color(cairo_t* cr, Rgb c, double alpha = 1.0);
struct Box {
  double x = 0, y = 0, w = 0, h = 0;
  double right() const { return x + w; }
  double bottom() const { return y + h; }
};
void fill_box(cairo_t* cr, const Box& b, Rgb c);
void stroke_box(cairo_t* cr, const Box& b, Rgb c, double width);
void line(cairo_t* cr, double x0, double y0, double x1, double y1, Rgb c, double width);

}  // namespace kvscope
