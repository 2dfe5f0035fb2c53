// Where everything of a line chart goes: plot area, axis ranges and ticks,
// legend, text. io/line_chart.cpp and io/svg_writer.cpp draw from it.
#include <algorithm>
#include <cmath>

#include "common/error.h"
#include "io/line_chart.h"

namespace kvscope {
namespace {

using Align = TextItem::Align;

struct Range {
  double lo = INFINITY, hi = -INFINITY;
  bool empty() const { return !(lo <= hi); }
};

Range data_range(std::span<const LineSeries> series, bool want_x, bool log_y) {
  Range r;
  for (const auto& s : series)
    for (std::size_t i = 0; i < s.x.size(); ++i) {
      if (!std::isfinite(s.x[i]) || !std::isfinite(s.y[i]) || (log_y && s.y[i] <= 0)) continue;
      const double v = want_x ? s.x[i] : s.y[i];
      r.lo = std::min(r.lo, v), r.hi = std::max(r.hi, v);
    }
  return r;
}

// Linear axis: the range (explicit ends kept, automatic ends widened to the
// enclosing ticks) and ticks of a nice step; `fits(ticks)` says whether the
// labels have room, fewer ticks are tried until they do.
template <typename Fits>
std::vector<double> linear_axis(Range data, std::optional<double> lo_opt, std::optional<double> hi_opt, int max_ticks,
                                double& lo, double& hi, double& step, Fits fits) {
  if (data.empty()) data = {0, 1};
  if (data.lo == data.hi) {
    const double d = data.lo == 0 ? 1 : std::abs(data.lo) * 0.1;
    data.lo -= d, data.hi += d;
  }
  const double want_lo = lo_opt.value_or(data.lo), want_hi = hi_opt.value_or(data.hi);
  std::vector<double> ticks;
  for (int n = std::max(max_ticks, 2); n >= 1; --n) {
    step = nice_step(want_hi - want_lo, n);
    lo = lo_opt ? *lo_opt : std::floor(want_lo / step + 1e-9) * step;
    hi = hi_opt ? *hi_opt : std::ceil(want_hi / step - 1e-9) * step;
    if (!(hi > lo)) hi = lo + step;  // one explicit end beyond all the data
    ticks = ticks_in(lo, hi, step);
    if (fits(ticks, step)) break;
  }
  return ticks;
}

}  // namespace

double LineChartLayout::x_to_px(double x) const {
  return plot.x + pad + (x - x_lo) / (x_hi - x_lo) * (plot.w - 2 * pad);
}

double LineChartLayout::y_to_px(double y) const {
  double t;
  if (log_y) {
    if (!(y > 0)) return NAN;
    t = (std::log10(y) - std::log10(y_lo)) / (std::log10(y_hi) - std::log10(y_lo));
  } else {
    t = (y - y_lo) / (y_hi - y_lo);
  }
  return plot.bottom() - pad - t * (plot.h - 2 * pad);
}

bool LineChartLayout::visible(double x, double y) const {
  if (!std::isfinite(x) || !std::isfinite(y) || (log_y && y <= 0)) return false;
  const double ex = (x_hi - x_lo) * 1e-9, ey = (y_hi - y_lo) * 1e-9;
  return x >= x_lo - ex && x <= x_hi + ex && y >= y_lo - ey && y <= y_hi + ey;
}

LineChartLayout layout_line_chart(std::span<const LineSeries> series, const LineChartOptions& opt) {
  for (const auto& s : series)
    if (s.x.size() != s.y.size())
      throw Error("line chart", "series \"" + s.name + "\"",
                  "has " + std::to_string(s.x.size()) + " x values and " + std::to_string(s.y.size()) + " y values");
  auto check_range = [](const char* field, std::optional<double> lo, std::optional<double> hi, bool positive) {
    if ((lo && !std::isfinite(*lo)) || (hi && !std::isfinite(*hi)) || (lo && hi && !(*lo < *hi)) ||
        (positive && lo && *lo <= 0))
      throw Error("line chart", field, "the explicit axis range is invalid");
  };
  check_range("x range", opt.x_min, opt.x_max, false);
  check_range("y range", opt.y_min, opt.y_max, opt.log_y);

  LineChartLayout L;
  const int s = L.font_scale = std::max(opt.font_scale, 1);
  const int th = text_height(s), asc = text_ascent(s), gap = 3 * s, margin = 8 * s;
  L.tick_len = 3 * s;
  L.width = opt.width;
  L.height = opt.height;
  L.log_y = opt.log_y;
  L.line_width = s;
  L.marker_radius = 2 * s + 0.5;
  L.swatch_half = 6 * s;
  L.pad = static_cast<int>(std::ceil(L.marker_radius)) + 2 * s;

  // ---- vertical: title, plot, x tick labels, x label ----
  const int top = margin + (opt.title.empty() ? 0 : th + 2 * gap) + th / 2;
  const int bottom = L.tick_len + gap + th + (opt.x_label.empty() ? 0 : 2 * gap + th) + margin;
  L.plot.y = top;
  L.plot.h = opt.height - top - bottom;
  if (L.plot.h < 4 * th) throw Error("line chart", "height", std::to_string(opt.height) + " px is too small for the text");
  const int inner_h = L.plot.h - 2 * L.pad;

  // ---- y axis ----
  const Range ydata = data_range(series, false, opt.log_y);
  if (opt.log_y) {
    Range d = ydata.empty() ? Range{1, 10} : ydata;
    int klo = int(std::floor(std::log10(d.lo) + 1e-9)), khi = int(std::ceil(std::log10(d.hi) - 1e-9));
    if (khi == klo) ++khi;
    L.y_lo = opt.y_min.value_or(std::pow(10.0, klo));
    L.y_hi = opt.y_max.value_or(std::pow(10.0, khi));
    klo = int(std::ceil(std::log10(L.y_lo) - 1e-9));
    khi = int(std::floor(std::log10(L.y_hi) + 1e-9));
    std::vector<int> ks;
    for (int k = klo; k <= khi; ++k) ks.push_back(k);
    const double decade_px = inner_h / std::max(1e-9, std::log10(L.y_hi) - std::log10(L.y_lo));
    const int stride = std::max(1, int(std::ceil((th + gap) / decade_px)));
    std::erase_if(ks, [&](int k) { return ((k % stride) + stride) % stride != 0; });
    const auto labels = decade_labels(ks);
    for (std::size_t i = 0; i < ks.size(); ++i)
      L.y_ticks.push_back(tick(std::pow(10.0, ks[i]), 0, labels[i].first, labels[i].second));
    if (decade_px >= 2 * th)  // room for unlabelled 2..9 x 10^k ticks
      for (int k = klo - 1; k <= khi; ++k)
        for (int m = 2; m <= 9; ++m) {
          const double v = m * std::pow(10.0, k);
          if (v > L.y_lo && v < L.y_hi) L.y_minor_ticks.push_back(tick(v, 0, ""));
        }
  } else {
    double step = 1;
    const auto values = linear_axis(ydata, opt.y_min, opt.y_max, std::clamp(inner_h / (3 * th), 2, 10), L.y_lo,
                                    L.y_hi, step, [](const std::vector<double>&, double) { return true; });
    for (double v : values) L.y_ticks.push_back(tick(v, 0, tick_label(v, step)));
  }
  int ylab_w = 0;
  for (const auto& t : L.y_ticks) ylab_w = std::max(ylab_w, label_width(t.label, t.sup, s));

  // ---- horizontal: y label, y tick labels, plot, legend ----
  L.plot.x = margin + (opt.y_label.empty() ? 0 : th + 2 * gap) + ylab_w + gap + L.tick_len;
  int name_w = 0;
  for (const auto& sr : series) name_w = std::max(name_w, text_width(sr.name, s));
  name_w += name_w / 8;  // slack: the SVG's sans-serif runs a little wider than the bitmap font
  const bool legend = name_w > 0;
  const int right = legend ? 5 * s + int(2 * L.swatch_half) + gap + name_w + margin : margin + 3 * th;
  L.plot.w = opt.width - L.plot.x - right;
  if (L.plot.w < 4 * th) throw Error("line chart", "width", std::to_string(opt.width) + " px is too small for the text");
  const int inner_w = L.plot.w - 2 * L.pad;

  // ---- x axis: fewer ticks until the labels are apart ----
  double xstep = 1;
  const auto xs = linear_axis(data_range(series, true, opt.log_y), opt.x_min, opt.x_max, 10, L.x_lo, L.x_hi, xstep,
                              [&](const std::vector<double>& ticks, double step) {
                                int widest = 0;
                                for (double v : ticks) widest = std::max(widest, text_width(tick_label(v, step), s));
                                return ticks.size() < 2 || inner_w * step / (L.x_hi - L.x_lo) >= widest + 4 * s;
                              });
  for (double v : xs) L.x_ticks.push_back(tick(v, int(std::floor(L.x_to_px(v))), tick_label(v, xstep)));
  for (auto& t : L.y_ticks) t.pos = int(std::floor(L.y_to_px(t.value)));
  for (auto& t : L.y_minor_ticks) t.pos = int(std::floor(L.y_to_px(t.value)));

  // ---- text ----
  if (!opt.title.empty())
    L.texts.push_back(text_item(opt.title, L.plot.x + L.plot.w / 2, margin, Align::center, false, true));
  for (const auto& t : L.x_ticks) L.texts.push_back(text_item(t.label, t.pos, L.plot.bottom() + L.tick_len + gap, Align::center));
  for (const auto& t : L.y_ticks)
    L.texts.push_back(text_item(t.label, L.plot.x - L.tick_len - gap, t.pos - asc / 2, Align::right, false, false, t.sup));
  if (!opt.x_label.empty())
    L.texts.push_back(text_item(opt.x_label, L.plot.x + L.plot.w / 2, L.plot.bottom() + L.tick_len + gap + th + 2 * gap, Align::center));
  if (!opt.y_label.empty()) L.texts.push_back(text_item(opt.y_label, margin, L.plot.y + L.plot.h / 2, Align::left, true));
  if (legend) {
    const int lx = L.plot.right() + 5 * s + int(L.swatch_half);
    int ly = L.plot.y + th / 2;
    for (std::size_t i = 0; i < series.size(); ++i) {
      if (series[i].name.empty()) continue;
      L.legend.push_back({lx, ly, i});
      L.texts.push_back(text_item(series[i].name, lx + int(L.swatch_half) + gap, ly - asc / 2, Align::left));
      ly += th + 2 * gap;
    }
  }
  return L;
}

}  // namespace kvscope
