// Line plots: sweeps (accuracy, NLL, KL against the KV budget, one line per
// policy) and score curves (a statistic over decoding steps). Each series
// has its own colour, marker and dash (figures/plot_style.h), optional error
// bars and a sample count shown in the legend; a dashed reference line
// (the full cache); the legend sits outside the data, at the right, so it
// never covers a point; tick labels are thinned so none overlap.
#pragma once

#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "figures/canvas.h"
#include "figures/figure_fit.h"
#include "figures/plot_style.h"
#include "figures/text.h"

namespace kvscope {

// One line. Points with a non-finite x or y (or y <= 0 on a log axis) are
// left out and break the line there.
struct PlotSeries {
  std::string name;
  std::vector<double> x, y;
  std::vector<double> err;  // empty, or the half-length of each point's error bar
  int n = 0;                // > 0: "name (n = 30)" in the legend
  std::optional<SeriesStyle> style;  // default: series_style(index)
  bool markers = true;
};

struct ReferenceLine {
  double y = 0;
  std::string label;  // in the legend, e.g. "full cache"
};

struct LinePlotOptions {
  std::string title, x_label, y_label;
  bool log_y = false;
  bool y_percent = false;                      // values in [0, 1] labelled as percentages
  bool y_bytes = false;                        // values in bytes, ticks in B / KiB / MiB / GiB (powers of 1024)
  std::optional<double> y_min, y_max;          // default: the data, widened to ticks
  std::vector<double> x_ticks;                 // ticks at these values (e.g. the budgets); empty: nice ticks
  std::string x_tick_suffix;                   // appended to x tick labels ("%")
  std::optional<ReferenceLine> reference;
  double plot_width = 380, plot_height = 240;  // points, the data area
  double dodge = 0;  // series i is shifted (i - (n-1)/2) * dodge points along x, so equal points stay apart
  std::string legend_title;
  std::string note;  // a line under the plot, e.g. what the error bars are
};

struct PlotTick {
  double pos = 0;  // points
  std::string label;
};

struct LinePlotLayout {
  FigureSize size;
  Box plot;
  double x_lo = 0, x_hi = 1, y_lo = 0, y_hi = 1;
  bool log_y = false;
  std::vector<PlotTick> x_ticks, y_ticks;
  double legend_x = 0, legend_y = 0;
  bool legend_below = false;  // fitted: under the plot, in columns
  int legend_columns = 1;
  double legend_col_w = 0;
  std::vector<std::string> legend_text;  // per series, then the reference line
  double title_y = 0, note_y = 0;
  TextStyle title, note;  // title_style(), wrapped to the figure when fitted
  std::size_t series_count = 0;

  double x_to(double x) const;  // data -> points
  double y_to(double y) const;  // NaN for y <= 0 on a log axis
  double x_of(std::size_t series, double x) const;  // with the series' dodge
  double dodge = 0;
};

// Series whose points are all equal (x, y and error bars) drawn as one line
// named "a = b = c": lines that lie exactly on top of each other cannot be
// told apart by dash or marker, so the legend says they coincide instead.
// The first series of each group keeps its place and style.
std::vector<PlotSeries> merge_identical_series(std::vector<PlotSeries> series);

// Throws kvscope::Error("line plot", ...) when x, y and err lengths disagree.
// `fit` shrinks the data area (figures/figure_fit.h).
LinePlotLayout layout_line_plot(std::span<const PlotSeries> series, const LinePlotOptions& opt,
                                const LayoutFit& fit = {});
// Byte counts as tick labels: the unit (B, KiB, MiB, GiB) chosen from the
// largest value, a nice step in that unit ("0", "512 KiB", "1 MiB", ...).
std::vector<PlotTick> byte_ticks(double lo, double hi, int max_ticks, double* step_out = nullptr);
void draw_line_plot(cairo_t* cr, const LinePlotLayout& L, std::span<const PlotSeries> series, const LinePlotOptions& opt);
std::vector<std::filesystem::path> write_line_plot(const std::filesystem::path& stem, std::span<const PlotSeries> series,
                                                   const LinePlotOptions& opt, const FigureOutput& out);

}  // namespace kvscope
