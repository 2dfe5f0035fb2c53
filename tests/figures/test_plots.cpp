// Line plots and score curves, checked through their pixels and layout:
// points where the axes say, error bars, the reference line, series told
// apart without colour, a legend that covers no data and sample counts in
// it, x labels that do not overlap; the eviction threshold of score curves.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "common/error.h"
#include "common/mask_codes.h"
#include "figure_test_util.h"
#include "figures/line_plot.h"
#include "figures/score_curves.h"
#include "figures/text.h"
#include "test_util.h"

namespace kvscope {
namespace {


std::vector<PlotSeries> sweep_series() {
  std::vector<PlotSeries> s(2);
  s[0].name = "h2o";
  s[0].x = {10, 30, 50, 70, 90};
  s[0].y = {0.0, 0.1, 0.4, 0.8, 1.0};
  s[0].err = {0, 0.05, 0.1, 0.08, 0};
  s[0].n = 30;
  s[1].name = "window";
  s[1].x = s[0].x;
  s[1].y = {0.0, 0.0, 0.0, 0.1, 0.7};
  s[1].n = 30;
  return s;
}

LinePlotOptions sweep_options() {
  LinePlotOptions o;
  o.title = "answer accuracy";
  o.x_label = "KV budget (% of prompt)";
  o.y_label = "answer accuracy";
  o.x_ticks = {10, 30, 50, 70, 90};
  o.x_tick_suffix = "%";
  o.y_percent = true;
  o.y_min = 0;
  o.y_max = 1;
  o.reference = ReferenceLine{1.0, "full cache"};
  return o;
}

TEST(LinePlot, PointsErrorBarsAndReferenceWhereTheAxesSay) {
  const auto series = sweep_series();
  const LinePlotOptions o = sweep_options();
  const LinePlotLayout L = layout_line_plot(series, o);
  EXPECT_LT(L.y_to(1.0), L.plot.y - 1e-9 + L.plot.h * 0.05) << "100% just inside the frame";
  EXPECT_GT(L.y_to(1.0), L.plot.y + 2) << "with room for a marker";
  EXPECT_NEAR(L.y_to(0.5), L.plot.y + L.plot.h / 2, 1e-9);
  const double dpi = 144;
  const Raster r = render_raster(L.size, dpi, [&](cairo_t* cr) { draw_line_plot(cr, L, series, o); });
  const Rgb c0 = series_style(0).color, c1 = series_style(1).color;
  // Marker centres.
  EXPECT_EQ(test::pixel_at(r, L.x_of(0, 50), L.y_to(0.4), dpi), c0);
  EXPECT_EQ(test::pixel_at(r, L.x_of(1, 90), L.y_to(0.7), dpi), c1);
  // The error bar of h2o at 50%: 0.4 +- 0.1, drawn above the marker.
  EXPECT_EQ(test::pixel_at(r, L.x_of(0, 50), L.y_to(0.48), dpi), c0);
  // The reference line, away from every series.
  int grey = 0;  // a dashed line: some of these points are in its gaps
  for (double x = L.x_to(15); x < L.x_to(25); x += 0.5)
    grey += test::colour_distance(test::pixel_at(r, x, L.y_to(1.0), dpi), {90, 90, 90}) < 40;
  EXPECT_GT(grey, 5);
  // Sample counts in the legend, and the reference line named.
  EXPECT_EQ(L.legend_text[0], "h2o (n = 30)");
  EXPECT_EQ(L.legend_text.back(), "full cache");
  EXPECT_GE(L.legend_x, L.plot.right()) << "the legend sits outside the data";
  // Percent labels on y, budgets on x.
  EXPECT_EQ(L.y_ticks.back().label, "100%");
  EXPECT_EQ(L.x_ticks.front().label, "10%");
}

TEST(LinePlot, DodgeKeepsEqualPointsApart) {
  auto series = sweep_series();
  LinePlotOptions o = sweep_options();
  o.dodge = 3;
  const LinePlotLayout L = layout_line_plot(series, o);
  // Both are 0.0 at 10%: their markers sit 3 points apart.
  EXPECT_NEAR(L.x_of(1, 10) - L.x_of(0, 10), 3, 1e-9);
  const Raster r = render_raster(L.size, 144, [&](cairo_t* cr) { draw_line_plot(cr, L, series, o); });
  EXPECT_EQ(test::pixel_at(r, L.x_of(1, 30), L.y_to(0.0) - 1.5, 144), series_style(1).color);
}

TEST(LinePlot, SeriesDifferInMarkerAndDash) {
  std::set<int> markers;
  for (std::size_t i = 0; i < 9; ++i) markers.insert(static_cast<int>(series_style(i).marker));
  EXPECT_EQ(markers.size(), 9u) << "nine policies, nine markers";
  for (std::size_t i = 0; i + 1 < 12; ++i) {
    EXPECT_NE(series_style(i).dash, series_style(i + 1).dash) << i;
    EXPECT_FALSE(series_style(i).color == series_style(i + 1).color) << i;
  }
}

TEST(LinePlot, XLabelsNeverOverlap) {
  PlotSeries s{"tokens", {}, {}, {}, 0, std::nullopt, true};
  LinePlotOptions o;
  for (int b = 100; b <= 4000; b += 100) {
    s.x.push_back(b);
    s.y.push_back(std::log(b));
    o.x_ticks.push_back(b);
  }
  o.plot_width = 300;
  const std::vector<PlotSeries> series{s};
  const LinePlotLayout L = layout_line_plot(series, o);
  ASSERT_GE(L.x_ticks.size(), 2u);
  EXPECT_LT(L.x_ticks.size(), 40u) << "40 budgets cannot all be labelled in 300 points";
  const TextStyle t{.size = 8, .markup = true};
  for (std::size_t i = 1; i < L.x_ticks.size(); ++i) {
    const double a = L.x_ticks[i - 1].pos + measure_text(L.x_ticks[i - 1].label, t).width / 2;
    const double b = L.x_ticks[i].pos - measure_text(L.x_ticks[i].label, t).width / 2;
    EXPECT_LT(a, b) << L.x_ticks[i - 1].label << " overlaps " << L.x_ticks[i].label;
  }
}

TEST(LinePlot, RejectsMismatchedSeries) {
  std::vector<PlotSeries> s = sweep_series();
  s[0].err.pop_back();
  EXPECT_THROW(layout_line_plot(s, sweep_options()), Error);
}

ScoreCurveData score_data() {
  // 3 rows x 5 positions. Position 1 is evicted at step 2; position 4 is protected.
  ScoreCurveData d;
  d.rows = 3;
  d.cols = 5;
  d.scores = {0.9f, 0.2f, 0.5f, 0.7f, NAN, 1.0f, 0.3f, 0.6f, 0.8f, 0.1f, 1.2f, 0.35f, 0.9f, 1.0f, 0.4f};
  d.mask = {kMaskKept, kMaskKept, kMaskKept, kMaskKept, kNotSeen, kMaskKept, kMaskKept, kMaskKept, kMaskKept,
            kMaskProtected, kMaskKept, kEvictedNow, kMaskKept, kMaskKept, kMaskProtected};
  d.col_labels = {"<s>", " a", " b", " c", "\n"};
  return d;
}

TEST(ScoreCurves, ThresholdIsTheLowestKeptStatistic) {
  const ScoreCurveData d = score_data();
  const auto t = eviction_threshold(d);
  ASSERT_EQ(t.size(), 3u);
  EXPECT_FLOAT_EQ(t[0], 0.2f);
  EXPECT_FLOAT_EQ(t[1], 0.3f);
  EXPECT_FLOAT_EQ(t[2], 0.9f) << "the evicted (0.35) and protected (0.4) slots do not set it";
  const auto chosen = choose_score_tokens(d, 3);
  EXPECT_TRUE(std::find(chosen.begin(), chosen.end(), 1) != chosen.end()) << "the evicted token has a curve";
  EXPECT_EQ(chosen.size(), 3u);
  const auto series = score_curve_series(d, chosen);
  EXPECT_EQ(series.back().name, "eviction threshold (lowest kept)");
  EXPECT_EQ(series[0].name.substr(0, 2), "0 ");
  test::TempDir dir;
  const auto files = write_score_curves(dir / "s", d, "scores", "accumulated attention", {{FigureFormat::png}, 72});
  const Raster r = test::read_png(files.at(0));
  EXPECT_GT(r.width, 300);
}

}  // namespace
}  // namespace kvscope
