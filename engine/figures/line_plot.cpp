#include "figures/line_plot.h"

#include <algorithm>
#include <cmath>

#include "common/error.h"
#include "figures/plot_style.h"
#include "figures/heatmap.h"
#include "figures/text.h"
#include "figures/ticks.h"

namespace kvscope {
namespace {

constexpr double kPlotLegendColumnGap = 10;
constexpr double kPlotTick = 3, kPlotTickGap = 2, kPlotCaptionGap = 4, kPlotLegendGap = 14, kPlotLegendRow = 13,
                 kPlotSwatch = 24, kPlotSwatchGap = 5, kPlotMarker = 3.2, kPlotCap = 2.5;
const TextStyle kPlotNoteText{.size = 7.5};
constexpr Rgb kPlotGrid{228, 228, 228}, kPlotReference{90, 90, 90};

struct Range {
  double lo = INFINITY, hi = -INFINITY;
  void add(double v) {
    if (!std::isfinite(v)) return;
    lo = std::min(lo, v), hi = std::max(hi, v);
  }
  bool empty() const { return !(lo <= hi); }
};

std::string legend_label(const PlotSeries& s) {
  return s.n > 0 ? s.name + " (n = " + std::to_string(s.n) + ")" : s.name;
}

std::string percent_label(double v, double step) {
  return tick_label(100 * v, 100 * step) + "%";
}

SeriesStyle style_of(std::span<const PlotSeries> series, std::size_t i) {
  return series[i].style ? *series[i].style : series_style(i);
}

void draw_swatch(cairo_t* cr, const SeriesStyle& st, double x, double cy, bool marker) {
  set_color(cr, st.color);
  cairo_set_line_width(cr, st.line_width);
  set_dash(cr, st.dash);
  cairo_move_to(cr, x, cy);
  cairo_line_to(cr, x + kPlotSwatch, cy);
  cairo_stroke(cr);
  set_dash(cr, {});
  if (marker) draw_marker(cr, st.marker, x + kPlotSwatch / 2, cy, kPlotMarker);
}

}  // namespace

double LinePlotLayout::x_to(double x) const { return plot.x + (x - x_lo) / (x_hi - x_lo) * plot.w; }

double LinePlotLayout::y_to(double y) const {
  double t;
  if (log_y) {
    if (!(y > 0)) return NAN;
    t = (std::log10(y) - std::log10(y_lo)) / (std::log10(y_hi) - std::log10(y_lo));
  } else {
    t = (y - y_lo) / (y_hi - y_lo);
  }
  return plot.bottom() - t * plot.h;
}

double LinePlotLayout::x_of(std::size_t s, double x) const {
  return x_to(x) + (double(s) - (double(series_count) - 1) / 2) * dodge;
}

std::vector<PlotSeries> merge_identical_series(std::vector<PlotSeries> series) {
  auto same = [](const std::vector<double>& a, const std::vector<double>& b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
      if (!(a[i] == b[i] || std::abs(a[i] - b[i]) <= 1e-12 * std::max(1.0, std::abs(a[i])) ||
            (std::isnan(a[i]) && std::isnan(b[i]))))
        return false;
    return true;
  };
  std::vector<PlotSeries> out;
  for (auto& s : series) {
    auto twin = std::find_if(out.begin(), out.end(), [&](const PlotSeries& o) {
      return !o.x.empty() && same(o.x, s.x) && same(o.y, s.y) && same(o.err, s.err) && o.n == s.n;
    });
    if (twin == out.end()) out.push_back(std::move(s));
    else twin->name += " = " + s.name;
  }
  return out;
}

std::vector<PlotTick> byte_ticks(double lo, double hi, int max_ticks, double* step_out) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  double unit = 1;
  while (u + 1 < static_cast<int>(std::size(kUnits)) && std::max(std::abs(lo), std::abs(hi)) >= 1024 * unit)
    unit *= 1024, ++u;
  double step = nice_step((hi - lo) / unit, max_ticks);
  if (u == 0) step = std::max(step, 1.0);  // no fractions of a byte
  std::vector<PlotTick> out;
  for (double v : ticks_in(lo / unit, hi / unit, step))
    out.push_back({v * unit, std::abs(v) < step * 1e-9 ? "0" : tick_label(v, step) + " " + kUnits[u]});
  if (step_out) *step_out = step * unit;
  return out;
}

LinePlotLayout layout_line_plot(std::span<const PlotSeries> series, const LinePlotOptions& opt, const LayoutFit& fit) {
  const double plot_w = opt.plot_width * fit.shrink, plot_h = opt.plot_height * fit.shrink;
  Range xr, yr;
  for (const auto& s : series) {
    if (s.x.size() != s.y.size() || (!s.err.empty() && s.err.size() != s.y.size()))
      throw Error("line plot", "series \"" + s.name + "\"",
                  std::to_string(s.x.size()) + " x values, " + std::to_string(s.y.size()) + " y values and " +
                      std::to_string(s.err.size()) + " errors");
    for (std::size_t i = 0; i < s.x.size(); ++i) {
      if (!std::isfinite(s.x[i]) || !std::isfinite(s.y[i]) || (opt.log_y && s.y[i] <= 0)) continue;
      xr.add(s.x[i]);
      const double e = s.err.empty() || !std::isfinite(s.err[i]) ? 0 : s.err[i];
      yr.add(s.y[i] + e);
      yr.add(opt.log_y && s.y[i] - e <= 0 ? s.y[i] : s.y[i] - e);
    }
  }
  for (double t : opt.x_ticks) xr.add(t);
  if (opt.reference) yr.add(opt.reference->y);
  if (xr.empty()) xr = {0, 1};
  if (xr.lo == xr.hi) xr.lo -= 1, xr.hi += 1;
  if (yr.empty()) yr = opt.log_y ? Range{0.1, 1} : Range{0, 1};
  if (opt.y_min) yr.lo = *opt.y_min;
  if (opt.y_max) yr.hi = *opt.y_max;
  if (yr.lo == yr.hi) {
    const double d = yr.lo == 0 ? 1 : std::abs(yr.lo) * 0.1;
    yr.lo = opt.log_y ? yr.lo / 10 : yr.lo - d, yr.hi = opt.log_y ? yr.hi * 10 : yr.hi + d;
  }
  if (!(yr.lo < yr.hi) || (opt.log_y && !(yr.lo > 0)))
    throw Error("line plot", "y range", "[" + std::to_string(yr.lo) + ", " + std::to_string(yr.hi) + "] is not a range");

  LinePlotLayout L;
  L.log_y = opt.log_y;
  L.series_count = series.size();
  L.dodge = opt.dodge;
  // x: 4% padding each side so markers and error bars at the ends stay inside.
  const double xpad = (xr.hi - xr.lo) * 0.05;
  L.x_lo = xr.lo - xpad, L.x_hi = xr.hi + xpad;
  // y: widened to ticks (explicit ends kept).
  const int max_y_ticks = std::max(2, static_cast<int>(plot_h / 32));
  std::vector<std::pair<double, std::string>> yt;
  if (opt.log_y) {
    L.y_lo = opt.y_min ? yr.lo : std::pow(10.0, std::floor(std::log10(yr.lo) + 1e-9));
    L.y_hi = opt.y_max ? yr.hi : std::pow(10.0, std::ceil(std::log10(yr.hi) - 1e-9));
    if (!(L.y_lo < L.y_hi)) L.y_hi = L.y_lo * 10;
    const int k0 = int(std::ceil(std::log10(L.y_lo) - 1e-9)), k1 = int(std::floor(std::log10(L.y_hi) + 1e-9));
    const int stride = std::max(1, (k1 - k0 + max_y_ticks) / max_y_ticks);
    for (int k = k0; k <= k1; ++k)
      if ((k - k0) % stride == 0) yt.emplace_back(std::pow(10.0, k), decade_label(k));
  } else if (opt.y_bytes) {
    double step = 1;
    byte_ticks(yr.lo, yr.hi, max_y_ticks, &step);
    L.y_lo = opt.y_min ? yr.lo : std::floor(yr.lo / step + 1e-9) * step;
    L.y_hi = opt.y_max ? yr.hi : std::ceil(yr.hi / step - 1e-9) * step;
    if (!(L.y_lo < L.y_hi)) L.y_hi = L.y_lo + step;
    for (const PlotTick& t : byte_ticks(L.y_lo, L.y_hi, max_y_ticks)) yt.emplace_back(t.pos, t.label);
  } else {
    const double step = nice_step(yr.hi - yr.lo, max_y_ticks);
    L.y_lo = opt.y_min ? yr.lo : std::floor(yr.lo / step + 1e-9) * step;
    L.y_hi = opt.y_max ? yr.hi : std::ceil(yr.hi / step - 1e-9) * step;
    if (!(L.y_lo < L.y_hi)) L.y_hi = L.y_lo + step;
    for (double v : ticks_in(L.y_lo, L.y_hi, step))
      yt.emplace_back(v, opt.y_percent ? percent_label(v, step) : tick_label(v, step));
  }
  // A margin inside the frame, so markers at the range's ends (100%, 0)
  // are drawn whole and the reference line is not hidden by the frame.
  if (opt.log_y) {
    const double f = std::pow(L.y_hi / L.y_lo, 0.04);
    L.y_lo /= f, L.y_hi *= f;
  } else {
    const double m = (L.y_hi - L.y_lo) * 0.04;
    L.y_lo -= m, L.y_hi += m;
  }
  std::vector<std::pair<double, std::string>> xt;
  if (!opt.x_ticks.empty()) {
    for (double v : opt.x_ticks) xt.emplace_back(v, exact_tick_label(v) + opt.x_tick_suffix);
  } else {
    const double step = nice_step(xr.hi - xr.lo, std::max(2, static_cast<int>(plot_w / 60)));
    for (double v : ticks_in(xr.lo, xr.hi, step)) xt.emplace_back(v, tick_label(v, step) + opt.x_tick_suffix);
  }

  const TextExtent tick_h = measure_text("0", kTickLabelText);
  const TextExtent cap = measure_text("Ag", caption_style());
  double ylab_w = 0;
  for (const auto& [v, s] : yt) ylab_w = std::max(ylab_w, measure_text(s, kTickLabelText).width);
  // The legend's width first: a fitted title wraps to the whole figure's.
  double legend_w = 0;
  for (const auto& s : series) L.legend_text.push_back(legend_label(s));
  if (opt.reference) L.legend_text.push_back(opt.reference->label);
  for (const auto& t : L.legend_text) legend_w = std::max(legend_w, measure_text(t, kLegendText).width);
  if (!opt.legend_title.empty())
    legend_w = std::max(legend_w, measure_text(opt.legend_title, kLegendText).width - kPlotSwatch - kPlotSwatchGap);
  const double plot_x = kFigureMargin + cap.height + kPlotCaptionGap + ylab_w + kPlotTickGap + kPlotTick;
  // Fitted to a printed width, the legend goes under the plot (in as many
  // columns as fit) rather than taking the plot's width at its right.
  L.legend_below = fit.wrap_title && !L.legend_text.empty();
  const double entry_w = kPlotSwatch + kPlotSwatchGap + legend_w;
  const double content_w =
      L.legend_below ? std::max(plot_x + plot_w, entry_w + kFigureMargin) + kFigureMargin
                     : plot_x + plot_w + kPlotLegendGap + (L.legend_text.empty() ? 0 : entry_w) + kFigureMargin;
  L.title = fitted_title_style(fit, content_w);
  L.note = kPlotNoteText;
  L.note.wrap_width = std::max(40.0, content_w - 2 * kFigureMargin);
  double y = kFigureMargin;
  L.title_y = y;
  if (!opt.title.empty()) y += measure_text(opt.title, L.title).height + 8;
  L.plot = {plot_x, y, plot_w, plot_h};
  for (const auto& [v, s] : yt) L.y_ticks.push_back({L.y_to(v), s});
  // x labels: thinned so that none overlap (the ends and explicit ticks first).
  std::vector<double> centres, extents;
  for (const auto& [v, s] : xt) centres.push_back(L.x_to(v)), extents.push_back(measure_text(s, kTickLabelText).width);
  for (int i : place_labels(centres, extents, 6, {0, static_cast<int>(xt.size()) - 1}))
    L.x_ticks.push_back({centres[i], xt[i].second});
  const double below = kPlotTick + kPlotTickGap + tick_h.height + kPlotCaptionGap + cap.height;

  double width = 0, legend_h = 0;
  if (L.legend_below) {
    width = content_w;
    L.legend_col_w = entry_w + kPlotLegendColumnGap;
    L.legend_columns =
        std::max(1, static_cast<int>((width - 2 * kFigureMargin + kPlotLegendColumnGap) / L.legend_col_w));
    L.legend_columns = std::min<int>(L.legend_columns, static_cast<int>(L.legend_text.size()));
    const int rows = (static_cast<int>(L.legend_text.size()) + L.legend_columns - 1) / L.legend_columns;
    L.legend_x = (width - (L.legend_columns * L.legend_col_w - kPlotLegendColumnGap)) / 2;
    L.legend_y = L.plot.bottom() + below + kPlotCaptionGap;
    legend_h = (rows + (opt.legend_title.empty() ? 0 : 1)) * kPlotLegendRow;
  } else {  // at the right of the plot
    L.legend_x = L.plot.right() + kPlotLegendGap;
    L.legend_y = L.plot.y;
    legend_h = (L.legend_text.size() + (opt.legend_title.empty() ? 0 : 1)) * kPlotLegendRow;
    width = L.legend_x + (L.legend_text.empty() ? 0 : entry_w) + kFigureMargin;
  }
  width = std::max(width, measure_text(opt.title, L.title).width + 2 * kFigureMargin);
  double bottom = std::max(L.plot.bottom() + below, L.legend_y + legend_h);
  if (!opt.note.empty()) {
    L.note.wrap_width = std::max(40.0, width - 2 * kFigureMargin);
    L.note_y = bottom + kPlotCaptionGap;
    bottom = L.note_y + measure_text(opt.note, L.note).height;
  }
  L.size = {width, bottom + kFigureMargin};
  return L;
}

void draw_line_plot(cairo_t* cr, const LinePlotLayout& L, std::span<const PlotSeries> series, const LinePlotOptions& opt) {
  const Box& P = L.plot;
  if (!opt.title.empty()) draw_text(cr, opt.title, L.size.width / 2, L.title_y, L.title, HAlign::center, VAlign::top);
  if (!opt.note.empty()) draw_text(cr, opt.note, L.size.width / 2, L.note_y, L.note, HAlign::center, VAlign::top);
  for (const auto& t : L.y_ticks) line(cr, P.x, t.pos, P.right(), t.pos, kPlotGrid, 0.5);
  for (const auto& t : L.x_ticks) line(cr, t.pos, P.y, t.pos, P.bottom(), kPlotGrid, 0.5);

  cairo_save(cr);
  cairo_rectangle(cr, P.x - 0.5, P.y - 0.5, P.w + 1, P.h + 1);
  cairo_clip(cr);
  cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND);
  if (opt.reference) {
    cairo_save(cr);
    set_dash(cr, {6, 3});
    line(cr, P.x, L.y_to(opt.reference->y), P.right(), L.y_to(opt.reference->y), kPlotReference, 1.2);
    cairo_restore(cr);
  }
  for (std::size_t si = 0; si < series.size(); ++si) {
    const PlotSeries& s = series[si];
    const SeriesStyle st = style_of(series, si);
    auto ok = [&](std::size_t i) { return std::isfinite(s.x[i]) && std::isfinite(s.y[i]) && !(L.log_y && s.y[i] <= 0); };
    // Error bars under the line.
    set_color(cr, st.color);
    set_dash(cr, {});
    cairo_set_line_width(cr, 0.9);
    for (std::size_t i = 0; i < s.err.size(); ++i) {
      if (!ok(i) || !(s.err[i] > 0)) continue;
      const double x = L.x_of(si, s.x[i]);
      double lo = L.y_to(s.y[i] - s.err[i]), hi = L.y_to(s.y[i] + s.err[i]);
      if (!std::isfinite(lo)) lo = P.bottom();
      cairo_move_to(cr, x, lo), cairo_line_to(cr, x, hi);
      cairo_move_to(cr, x - kPlotCap, lo), cairo_line_to(cr, x + kPlotCap, lo);
      cairo_move_to(cr, x - kPlotCap, hi), cairo_line_to(cr, x + kPlotCap, hi);
    }
    cairo_stroke(cr);
    cairo_set_line_width(cr, st.line_width);
    set_dash(cr, st.dash);
    bool pen = false;
    for (std::size_t i = 0; i < s.x.size(); ++i) {
      if (!ok(i)) {
        pen = false;
        continue;
      }
      const double x = L.x_of(si, s.x[i]), y = L.y_to(s.y[i]);
      pen ? cairo_line_to(cr, x, y) : cairo_move_to(cr, x, y);
      pen = true;
    }
    cairo_stroke(cr);
    if (s.markers)
      for (std::size_t i = 0; i < s.x.size(); ++i)
        if (ok(i)) draw_marker(cr, st.marker, L.x_of(si, s.x[i]), L.y_to(s.y[i]), kPlotMarker);
  }
  cairo_restore(cr);

  stroke_box(cr, P, kFrameColor, 0.7);
  for (const auto& t : L.y_ticks) {
    line(cr, P.x - kPlotTick, t.pos, P.x, t.pos, kFrameColor, 0.7);
    draw_text(cr, t.label, P.x - kPlotTick - kPlotTickGap, t.pos, kTickLabelText, HAlign::right, VAlign::middle);
  }
  for (const auto& t : L.x_ticks) {
    line(cr, t.pos, P.bottom(), t.pos, P.bottom() + kPlotTick, kFrameColor, 0.7);
    draw_text(cr, t.label, t.pos, P.bottom() + kPlotTick + kPlotTickGap, kTickLabelText, HAlign::center, VAlign::top);
  }
  const double tick_h = measure_text("0", kTickLabelText).height;
  draw_text(cr, opt.x_label, P.x + P.w / 2, P.bottom() + kPlotTick + kPlotTickGap + tick_h + kPlotCaptionGap,
            caption_style(), HAlign::center, VAlign::top);
  draw_text(cr, opt.y_label, kFigureMargin, P.y + P.h / 2, caption_style(), HAlign::center, VAlign::top, 90);

  double y = L.legend_y;
  if (!opt.legend_title.empty()) {
    draw_text(cr, opt.legend_title, L.legend_x, y + kPlotLegendRow / 2, TextStyle{.size = 8, .bold = true},
              HAlign::left, VAlign::middle);
    y += kPlotLegendRow;
  }
  for (std::size_t i = 0; i < L.legend_text.size(); ++i) {
    const int cols = std::max(1, L.legend_columns);
    const double cy = y + (static_cast<int>(i) / cols) * kPlotLegendRow + kPlotLegendRow / 2;
    const double lx = L.legend_x + (static_cast<int>(i) % cols) * L.legend_col_w;
    if (i < series.size()) {
      draw_swatch(cr, style_of(series, i), lx, cy, series[i].markers);
    } else {  // the reference line
      cairo_save(cr);
      set_dash(cr, {6, 3});
      line(cr, lx, cy, lx + kPlotSwatch, cy, kPlotReference, 1.2);
      cairo_restore(cr);
    }
    draw_text(cr, L.legend_text[i], lx + kPlotSwatch + kPlotSwatchGap, cy, kLegendText, HAlign::left, VAlign::middle);
  }
}

std::vector<std::filesystem::path> write_line_plot(const std::filesystem::path& stem, std::span<const PlotSeries> series,
                                                   const LinePlotOptions& opt, const FigureOutput& out) {
  LinePlotLayout L;
  const FigureFit fit =
      fit_figure(out.size, [&](const LayoutFit& f) { return (L = layout_line_plot(series, opt, f)).size; });
  L = layout_line_plot(series, opt, fit.layout);
  return write_fitted_figure(
      stem, fit, [&](cairo_t* cr) { draw_line_plot(cr, L, series, opt); }, out);
}

}  // namespace kvscope
