// XY line charts for sweep figures ("metric vs KV budget": x = budget %,
// y = accuracy / NLL / KL, one series per policy): named series with
// markers, automatic "nice" axis ranges (1/2/5 x 10^n ticks), optional log
// y, axis labels, title and a legend. The layout (with its data -> pixel
// mapping) is public: io/svg_writer.h draws the same chart as vector
// graphics from it, and tests check where points land.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "io/figure_layout.h"
#include "io/image.h"

namespace kvscope {

enum class Marker { circle, square, triangle, diamond, none };

// One line. Points with a non-finite x or y (or y <= 0 on a log axis) are
// skipped and break the line there.
struct LineSeries {
  std::string name;
  std::vector<double> x, y;
};

struct LineChartOptions {
  std::string title, x_label, y_label;
  bool log_y = false;
  std::optional<double> x_min, x_max, y_min, y_max;  // default: from the data, widened to ticks
  int width = 800, height = 500;                     // pixels of the whole figure
  int font_scale = 2;
};

// Series i is drawn in series_color(i) with series_marker(i) (both cycle).
// The palette is Okabe & Ito's colour-blind-safe set.
Rgb series_color(std::size_t i);
Marker series_marker(std::size_t i);

struct LineChartLegendEntry {
  int x = 0, y = 0;  // centre of the line-and-marker swatch
  std::size_t series = 0;
};

struct LineChartLayout {
  int width = 0, height = 0;
  int font_scale = 2;
  int tick_len = 0;
  Rect plot;              // the framed data area
  int pad = 0;            // inset of the data range inside `plot` (markers stay inside)
  double x_lo = 0, x_hi = 1, y_lo = 0, y_hi = 1;  // data range (y in data units, also on log)
  bool log_y = false;
  double line_width = 2, marker_radius = 4, swatch_half = 12;
  std::vector<Tick> x_ticks, y_ticks;  // pos: image column / row
  std::vector<Tick> y_minor_ticks;     // log axis: 2..9 x 10^k, unlabelled
  std::vector<TextItem> texts;
  std::vector<LineChartLegendEntry> legend;

  // Data -> continuous pixel coordinates (pixel (i, j) spans [i, i+1) x
  // [j, j+1)). y_to_px of a value <= 0 on a log axis is NaN.
  double x_to_px(double x) const;
  double y_to_px(double y) const;
  bool visible(double x, double y) const;  // finite, inside the range
};

// Throws kvscope::Error("line chart", field, ...) for mismatched x / y
// lengths, an invalid explicit range, or a figure too small for its text.
LineChartLayout layout_line_chart(std::span<const LineSeries> series, const LineChartOptions& opt);

struct LineChart {
  Image image;
  LineChartLayout layout;
};
LineChart render_line_chart(std::span<const LineSeries> series, const LineChartOptions& opt);

}  // namespace kvscope
