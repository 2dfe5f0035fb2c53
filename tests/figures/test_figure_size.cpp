// Figures fitted to a printed size (issue 34, "Figures that fit a column"):
// the size names and their refusals, a column-wide figure whose every text
// is >= 6 pt on the page (read back from the drawing itself), the PNG's
// pixel size from the DPI, the heatmap crop to positions A..B, axis labels
// that never overlap, and byte ticks in B / KiB / MiB.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "common/error.h"
#include "figure_test_util.h"
#include "figures/figure_fit.h"
#include "figures/heatmap.h"
#include "figures/heatmap_grid.h"
#include "figures/line_plot.h"
#include "figures/text.h"
#include "io/figure_settings.h"
#include "test_util.h"

namespace kvscope {
namespace {

HeatmapData attention_like(int rows, int cols) {
  HeatmapData d;
  d.rows = rows;
  d.cols = cols;
  d.values = test::causal_attention(rows, cols);
  d.mask.assign(d.values.size(), 1);
  for (int j = 0; j < cols; ++j) d.col_labels.push_back(j % 3 ? "token" + std::to_string(j) : "the");
  for (int i = 0; i < rows; ++i) d.row_labels.push_back("word" + std::to_string(i));
  d.first_generated_col = cols - rows + 1;
  d.first_generated_row = 1;
  return d;
}

HeatmapFigureOptions heatmap_opts() {
  HeatmapFigureOptions o;
  o.title = "kvscope-tiny \u00b7 h2o k=49 (30% of prompt) \u00b7 layer 0 \u00b7 head 3 \u00b7 steps 0\u201312";
  ValueExtent e;
  e.add(test::causal_attention(13, 160));
  o.scale = resolve_color_scale(ScaleKind::linear, RangeSpec{}, e, e);
  return o;
}

// The smallest text of `draw` on the fitted page, in points: drawn on a
// recording surface, whose device units are points.
double smallest_text_on_page(const FigureFit& fit, const DrawFigure& draw) {
  cairo_rectangle_t extent{0, 0, fit.page.width, fit.page.height};
  cairo_surface_t* s = cairo_recording_surface_create(CAIRO_CONTENT_COLOR_ALPHA, &extent);
  cairo_t* cr = cairo_create(s);
  reset_smallest_text_drawn();
  fitted_drawing(fit, draw)(cr);
  cairo_destroy(cr);
  cairo_surface_destroy(s);
  return smallest_text_drawn();
}

TEST(FigureSize, NamesAndUnits) {
  const FigureSizeSpec col = FigureSizeSpec::parse("column", "f");
  EXPECT_EQ(col.kind, FigureSizeSpec::Kind::column);
  EXPECT_DOUBLE_EQ(col.width, 3.3 * 72);
  EXPECT_EQ(col.height, 0);  // from the figure's aspect
  EXPECT_DOUBLE_EQ(FigureSizeSpec::parse("page", "f").width, 6.9 * 72);
  const FigureSizeSpec in = FigureSizeSpec::parse("3.3x2.5in", "f");
  EXPECT_DOUBLE_EQ(in.width, 237.6);
  EXPECT_DOUBLE_EQ(in.height, 180);
  const FigureSizeSpec pt = FigureSizeSpec::parse("240x180pt", "f");
  EXPECT_DOUBLE_EQ(pt.width, 240);
  EXPECT_DOUBLE_EQ(pt.height, 180);
  EXPECT_NEAR(FigureSizeSpec::parse("8x6cm", "f").width, 8 / 2.54 * 72, 1e-9);
  EXPECT_EQ(FigureSizeSpec::parse("natural", "f").kind, FigureSizeSpec::Kind::natural);
}

TEST(FigureSize, RefusalsSayWhatIsWrong) {
  for (const char* bad : {"", "3.3", "3.3in", "3x2", "wide", "axbin", "3.3x2.5inch", "3.3 x 2.5in"}) {
    const std::string why = check_figure_size(bad);
    EXPECT_NE(why.find("expected natural, column, page or WxH"), std::string::npos) << bad << ": " << why;
  }
  EXPECT_NE(check_figure_size("50x50pt").find("between 1 in and 40 in"), std::string::npos);
  EXPECT_NE(check_figure_size("3x100in").find("between 1 in and 40 in"), std::string::npos);
  EXPECT_NE(check_figure_size("-3x2in").find("between 1 in and 40 in"), std::string::npos);
  try {
    FigureSizeSpec::parse("huge", "export.figure_size");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("export.figure_size"), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
  }
}

TEST(FigureSize, ColumnHeatmapKeepsEveryTextAtSixPointsOrMore) {
  const HeatmapData d = attention_like(13, 160);
  const HeatmapFigureOptions o = heatmap_opts();
  HeatmapLayout L;
  const FigureSizeSpec spec = FigureSizeSpec::parse("column", "f");
  const FigureFit fit = fit_figure(spec, [&](const LayoutFit& f) { return (L = layout_heatmap(d, o, f)).size; });
  L = layout_heatmap(d, o, fit.layout);
  EXPECT_DOUBLE_EQ(fit.page.width, 237.6);
  EXPECT_LT(fit.layout.shrink, 1);  // the layout shrank: the natural figure is wider than a column
  EXPECT_GE(fit.scale, 1);          // and is never scaled down
  EXPECT_NEAR(fit.page.height, L.size.height * fit.scale, 1e-9);
  const double smallest = smallest_text_on_page(fit, [&](cairo_t* cr) { draw_heatmap(cr, L, d, o); });
  EXPECT_GE(smallest, kMinFontPt);
  EXPECT_LT(smallest, 12);  // some text was drawn, at about its own size
  // The natural figure, scaled to a column instead, would print below 6 pt:
  // the fit is what keeps the fonts.
  const HeatmapLayout natural = layout_heatmap(d, o);
  EXPECT_LT(kTokenFontMin * 237.6 / natural.size.width, kMinFontPt);
}

TEST(FigureSize, ColumnGridAndLinePlotKeepSixPoints) {
  std::vector<HeatmapData> heads(8, attention_like(13, 120));
  std::vector<std::string> titles;
  for (int h = 0; h < 8; ++h) titles.push_back("head " + std::to_string(h) + " \u00b7 KV " + std::to_string(h / 4));
  const HeatmapFigureOptions o = heatmap_opts();
  test::TempDir dir;
  FigureOutput out;
  out.size = FigureSizeSpec::parse("column", "f");
  out.formats = {FigureFormat::svg};
  ASSERT_EQ(write_heatmap_grid(dir.path() / "grid", heads, titles, o, out).size(), 1u);
  HeatmapGridLayout G;
  const FigureFit gf =
      fit_figure(out.size, [&](const LayoutFit& f) { return (G = layout_heatmap_grid(heads, titles, o, 2, f)).size; });
  G = layout_heatmap_grid(heads, titles, o, 2, gf.layout);
  EXPECT_GE(smallest_text_on_page(gf, [&](cairo_t* cr) { draw_heatmap_grid(cr, G, heads, titles, o); }), kMinFontPt);

  std::vector<PlotSeries> series;
  for (int p = 0; p < 9; ++p)
    series.push_back({"policy" + std::to_string(p), {10, 30, 50}, {0.2, 0.5, 0.8}, {0.05, 0.04, 0.03}, 100});
  LinePlotOptions lo;
  lo.title = "Answer accuracy \u00b7 passkey.jsonl (100 items)";
  lo.x_label = "KV budget (% of prompt)";
  lo.y_label = "accuracy (mean \u00b1 s.e.)";
  lo.note = "Error bars: mean \u00b1 one standard error over items, n = 100 items per point";
  LinePlotLayout P;
  const FigureFit pf =
      fit_figure(out.size, [&](const LayoutFit& f) { return (P = layout_line_plot(series, lo, f)).size; });
  P = layout_line_plot(series, lo, pf.layout);
  EXPECT_DOUBLE_EQ(pf.page.width, 237.6);
  EXPECT_TRUE(P.legend_below);
  EXPECT_GE(smallest_text_on_page(pf, [&](cairo_t* cr) { draw_line_plot(cr, P, series, lo); }), kMinFontPt);
}

TEST(FigureSize, PngPixelsFollowFromTheDpi) {
  const HeatmapData d = attention_like(13, 160);
  test::TempDir dir;
  FigureOutput out;
  out.size = FigureSizeSpec::parse("column", "f");
  out.dpi = 300;
  const auto files = write_heatmap(dir.path() / "h", d, heatmap_opts(), out);
  const Raster r = test::read_png(files.at(0));
  EXPECT_EQ(r.width, pixels_for(237.6, 300));  // 990
  EXPECT_EQ(r.width, 990);
  out.size = FigureSizeSpec::parse("360x300pt", "f");
  out.dpi = 72;
  const Raster fixed = test::read_png(write_heatmap(dir.path() / "f", d, heatmap_opts(), out).at(0));
  EXPECT_EQ(fixed.width, 360);
  EXPECT_EQ(fixed.height, 300);
}

TEST(FigureSize, RefusesASizeTooSmallForReadableText) {
  const HeatmapData d = attention_like(13, 160);
  test::TempDir dir;
  FigureOutput out;
  out.size = FigureSizeSpec::parse("80x80pt", "f");
  try {
    write_heatmap(dir.path() / "h", d, heatmap_opts(), out);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("6 pt"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "h.png"));
}

TEST(Positions, ParseAndRefuse) {
  const PositionRange r = PositionRange::parse("10:19", "f");
  EXPECT_EQ(r.first, 10);
  EXPECT_EQ(r.last, 19);
  EXPECT_TRUE(PositionRange::parse("all", "f").all());
  for (const char* bad : {"", "10", "a:b", "-1:5", "1.5:4", "10:19:3"}) EXPECT_NE(check_positions(bad), "") << bad;
  EXPECT_NE(check_positions("20:10").find("must not be above"), std::string::npos);
}

TEST(Positions, CropKeepsValuesLabelsMaskAndBoundary) {
  HeatmapData d = attention_like(13, 160);
  for (std::size_t i = 0; i < d.mask.size(); ++i) d.mask[i] = static_cast<uint8_t>(i % 5);
  const HeatmapData c = crop_columns(d, PositionRange::parse("140:159", "f"));
  ASSERT_EQ(c.cols, 20);
  EXPECT_EQ(c.first_col, 140);
  EXPECT_EQ(c.rows, d.rows);
  for (int i = 0; i < c.rows; ++i)
    for (int j = 0; j < c.cols; ++j) {
      const float a = c.values[std::size_t(i) * 20 + j], b = d.values[std::size_t(i) * 160 + 140 + j];
      EXPECT_TRUE(a == b || (std::isnan(a) && std::isnan(b)));
      EXPECT_EQ(c.mask[std::size_t(i) * 20 + j], d.mask[std::size_t(i) * 160 + 140 + j]);
    }
  EXPECT_EQ(c.col_labels.front(), d.col_labels[140]);
  EXPECT_EQ(c.col_labels.back(), d.col_labels[159]);
  EXPECT_EQ(c.first_generated_col, d.first_generated_col - 140);
  EXPECT_NO_THROW(c.validate("crop"));
  EXPECT_THROW(crop_columns(d, PositionRange::parse("150:160", "f")), Error);
  // A crop's number axis counts from its first position.
  HeatmapData plain = c;
  plain.col_labels.clear();
  const HeatmapLayout L = layout_heatmap(plain, heatmap_opts());
  ASSERT_FALSE(L.bottom.texts.empty());
  for (const auto& t : L.bottom.texts) EXPECT_GE(std::stoi(t), 140);
}

// The labels along one side, as [lo, hi] intervals along the axis: numbers
// across (their width on x), tokens rotated (their height on x).
std::vector<std::pair<double, double>> label_spans(const AxisLabels& a, double pitch, bool x_axis) {
  std::vector<std::pair<double, double>> out;
  for (std::size_t k = 0; k < a.items.size(); ++k) {
    TextStyle t{.size = a.font};
    if (a.tokens) t.max_width = kTokenLabelMax;
    const TextExtent e = measure_text(a.texts[k], t);
    const double along = x_axis && !a.tokens ? e.width : e.height;
    const double c = (a.items[k] + 0.5) * pitch;
    out.emplace_back(c - along / 2, c + along / 2);
  }
  return out;
}

TEST(AxisLabels, NeverOverlapAtAnySize) {
  for (const char* size : {"natural", "column", "page"})
    for (int cols : {12, 60, 200, 700}) {
      const HeatmapData d = attention_like(13, cols);
      const HeatmapFigureOptions o = heatmap_opts();
      HeatmapLayout L;
      const FigureFit fit = fit_figure(FigureSizeSpec::parse(size, "f"),
                                       [&](const LayoutFit& f) { return (L = layout_heatmap(d, o, f)).size; });
      L = layout_heatmap(d, o, fit.layout);
      for (const AxisLabels* a : {&L.bottom, &L.top, &L.left, &L.right}) {
        const bool x_axis = a == &L.bottom || a == &L.top;
        const auto spans = label_spans(*a, x_axis ? L.cell_w : L.cell_h, x_axis);
        for (std::size_t k = 1; k < spans.size(); ++k)
          EXPECT_LE(spans[k - 1].second, spans[k].first + 1e-6)
              << size << ", " << cols << " columns: labels '" << a->texts[k - 1] << "' and '" << a->texts[k]
              << "' overlap";
      }
    }
}

TEST(ByteTicks, UnitsFollowTheLargestValue) {
  const auto mib = byte_ticks(0, 3.5 * 1048576, 5);
  ASSERT_GE(mib.size(), 3u);
  EXPECT_EQ(mib.front().label, "0");
  for (std::size_t i = 1; i < mib.size(); ++i) EXPECT_NE(mib[i].label.find(" MiB"), std::string::npos) << mib[i].label;
  const auto kib = byte_ticks(0, 60 * 1024, 4);
  for (std::size_t i = 1; i < kib.size(); ++i) EXPECT_NE(kib[i].label.find(" KiB"), std::string::npos) << kib[i].label;
  const auto b = byte_ticks(0, 900, 4);
  for (std::size_t i = 1; i < b.size(); ++i) EXPECT_NE(b[i].label.find(" B"), std::string::npos) << b[i].label;
  // Ticks sit at their values: "1 MiB" at 1048576 bytes.
  for (const auto& t : mib)
    if (t.label == "1 MiB") EXPECT_DOUBLE_EQ(t.pos, 1048576);
}

}  // namespace
}  // namespace kvscope

namespace kvscope {
namespace {

TEST(LinePlot, IdenticalSeriesAreNamedTogether) {
  std::vector<PlotSeries> in = {{"h2o", {10, 20}, {100, 200}, {}, 0},
                                {"tova", {10, 20}, {100, 200}, {}, 0},
                                {"window", {10, 20}, {100, 250}, {}, 0},
                                {"random", {10, 20}, {100, 200}, {}, 0}};
  const auto out = merge_identical_series(in);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].name, "h2o = tova = random");
  EXPECT_EQ(out[1].name, "window");
  in[1].err = {1, 1};  // same means, other error bars: not the same line
  EXPECT_EQ(merge_identical_series(in).size(), 3u);
}

}  // namespace
}  // namespace kvscope
