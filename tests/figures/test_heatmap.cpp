// Heatmaps checked through their pixels: each cell's colour where the layout
// puts it, NaN cells neutral, the colorbar's ends, fixed and shared ranges,
// evicted cells that keep their colour next to their mark, grids sharing
// one range, token labels in any script, and a golden image.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>

#include "common/error.h"
#include "common/mask_codes.h"
#include "figure_test_util.h"
#include "figures/heatmap.h"
#include "figures/heatmap_grid.h"
#include "figures/text.h"
#include "test_util.h"

namespace kvscope {
namespace {

using test::centre_of;

// A 3 x 4 matrix with known values (NaN at the end of row 0).
HeatmapData small_data() {
  HeatmapData d;
  d.rows = 3;
  d.cols = 4;
  d.values = {0.0f, 0.25f, 0.5f, NAN, 0.75f, 1.0f, 0.1f, 0.2f, 0.3f, 0.4f, 0.6f, 0.9f};
  return d;
}

HeatmapFigureOptions linear_0_1() {
  HeatmapFigureOptions o;
  o.title = "test";
  o.scale = {ScaleKind::linear, 0, 1};
  return o;
}

Raster render(const HeatmapLayout& L, const HeatmapData& d, const HeatmapFigureOptions& o, double dpi) {
  return render_raster(L.size, dpi, [&](cairo_t* cr) { draw_heatmap(cr, L, d, o); });
}

TEST(Heatmap, EveryCellHasItsValuesColourWhereTheLayoutSays) {
  const HeatmapData d = small_data();
  const HeatmapFigureOptions o = linear_0_1();
  const Colormap& cmap = colormap("viridis");
  const HeatmapLayout L = layout_heatmap(d, o);
  for (double dpi : {72.0, 150.0}) {
    const Raster r = render(L, d, o, dpi);
    EXPECT_EQ(r.width, pixels_for(L.size.width, dpi));
    for (int i = 0; i < d.rows; ++i)
      for (int j = 0; j < d.cols; ++j) {
        const float v = d.values[i * d.cols + j];
        const Rgb want = std::isnan(v) ? kNanColor : cmap.at(v);
        EXPECT_EQ(centre_of(r, L.cell(i, j), dpi), want) << "cell " << i << "," << j << " at " << dpi << " dpi";
      }
  }
}

TEST(Heatmap, ColorbarEndsAreTheColormapEnds) {
  const HeatmapData d = small_data();
  HeatmapFigureOptions o = linear_0_1();
  o.colormap = "magma";
  const HeatmapLayout L = layout_heatmap(d, o);
  // At 600 dpi a pixel is 0.12 points: one inside the first and the last
  // of the ramp's 256 bands (each h / 256 points), clear of the frame.
  const Raster r = render(L, d, o, 600);
  const Box& b = L.colorbar.bar;
  const double band = b.h / 256;
  const Colormap& cmap = colormap("magma");
  EXPECT_EQ(test::pixel_at(r, b.x + b.w / 2, b.y + 0.3 + (band - 0.3) / 2, 600), cmap.table[255]);
  EXPECT_EQ(test::pixel_at(r, b.x + b.w / 2, b.bottom() - 0.3 - (band - 0.3) / 2, 600), cmap.table[0]);
  EXPECT_EQ(test::pixel_at(r, b.x + b.w / 2, b.y + 128.5 * band, 600), cmap.table[127]);
  // The ticks label the range's ends.
  EXPECT_EQ(L.colorbar.ticks.front().label, "0.0");
  EXPECT_EQ(L.colorbar.ticks.back().label, "1.0");
}

TEST(Heatmap, FixedRangeFixesTheColorbarEndsAndClamps) {
  const HeatmapData d = small_data();
  HeatmapFigureOptions o = linear_0_1();
  ValueExtent own;
  own.add(d.values);
  o.scale = resolve_color_scale(ScaleKind::linear, RangeSpec::parse("0.2:0.4", "--range"), own, own);
  EXPECT_EQ(o.scale.lo, 0.2);
  EXPECT_EQ(o.scale.hi, 0.4);
  const HeatmapLayout L = layout_heatmap(d, o);
  EXPECT_EQ(L.colorbar.ticks.front().value, 0.2);
  EXPECT_NEAR(L.colorbar.ticks.back().value, 0.4, 1e-12);
  const Raster r = render(L, d, o, 72);
  const Colormap& cmap = colormap("viridis");
  EXPECT_EQ(centre_of(r, L.cell(0, 0), 72), cmap.table[0]);    // 0.0, below the range
  EXPECT_EQ(centre_of(r, L.cell(1, 1), 72), cmap.table[255]);  // 1.0, above it
  EXPECT_EQ(centre_of(r, L.cell(0, 1), 72), cmap.at(o.scale.normalize(0.25f)));  // inside: about a quarter
  EXPECT_NEAR(o.scale.normalize(0.25f), 0.25, 1e-6);
}

TEST(Heatmap, LogScaleSpacesDecadesEqually) {
  HeatmapData d;
  d.rows = 1;
  d.cols = 4;
  d.values = {1e-4f, 1e-3f, 1e-2f, 1e-1f};
  HeatmapFigureOptions o = linear_0_1();
  o.scale = {ScaleKind::log, 1e-4, 1e-1};
  const HeatmapLayout L = layout_heatmap(d, o);
  const Raster r = render(L, d, o, 72);
  const Colormap& cmap = colormap("viridis");
  for (int j = 0; j < 4; ++j) EXPECT_EQ(centre_of(r, L.cell(0, j), 72), cmap.at(o.scale.normalize(d.values[j]))) << j;
  for (int j = 0; j < 4; ++j) EXPECT_NEAR(o.scale.normalize(d.values[j]), j / 3.0, 1e-6) << j;
  // Ticks on decades, a third of the bar apart per decade.
  const auto& t = L.colorbar.ticks;
  ASSERT_GE(t.size(), 2u);
  const Box& b = L.colorbar.bar;
  for (const auto& tick : t) {
    const double k = std::log10(tick.value);
    EXPECT_NEAR(k, std::round(k), 1e-9) << tick.label;
    EXPECT_NEAR(tick.y, b.bottom() - b.h * (k + 4) / 3, 1e-6) << tick.label;
  }
  EXPECT_NE(colorbar_caption("attention weight", ScaleKind::log).find("log"), std::string::npos);
}

// A shared range: two figures with different data give one value one
// colour; each on its own range, they do not.
TEST(Heatmap, SharedRangeGivesEqualValuesEqualColours) {
  HeatmapData a = small_data(), b = small_data();
  for (float& v : b.values) v *= 0.5f;  // b's largest value is 0.5
  ValueExtent ea, eb, both;
  ea.add(a.values);
  eb.add(b.values);
  both.add(ea);
  both.add(eb);
  HeatmapFigureOptions oa = linear_0_1(), ob = linear_0_1();
  auto colour_of_half = [&](const HeatmapData& d, HeatmapFigureOptions o, const RangeSpec& spec, const ValueExtent& own,
                            int i, int j) {
    o.scale = resolve_color_scale(ScaleKind::linear, spec, own, both);
    const HeatmapLayout L = layout_heatmap(d, o);
    return centre_of(render(L, d, o, 72), L.cell(i, j), 72);
  };
  RangeSpec shared;  // the default
  ASSERT_EQ(shared.kind, RangeSpec::Kind::shared);
  // 0.5 is a's cell (0, 2) and b's cell (1, 1) (1.0 halved).
  const Rgb in_a = colour_of_half(a, oa, shared, ea, 0, 2), in_b = colour_of_half(b, ob, shared, eb, 1, 1);
  EXPECT_EQ(in_a, in_b);
  EXPECT_EQ(in_a, colormap("viridis").at(0.5));
  const RangeSpec own = RangeSpec::parse("auto", "--range");
  EXPECT_NE(colour_of_half(a, oa, own, ea, 0, 2), colour_of_half(b, ob, own, eb, 1, 1));
}

TEST(Heatmap, EvictedCellsKeepTheirColourBesideTheirMask) {
  HeatmapData d = small_data();
  d.mask = {kMaskKept, kMaskKept, kEvictedNow, kNotSeen, kEvictedEarlier, kMaskKept,
            kMaskProtected, kMaskProtected, kEvictedEarlier, kMaskKept, kMaskProtected, kMaskProtected};
  const Colormap& cmap = colormap("viridis");
  // The strip (the default): the heatmap cell keeps its value's colour, the
  // strip shows the mask code at the same column and row.
  {
    HeatmapFigureOptions o = linear_0_1();
    ASSERT_EQ(o.evicted, EvictedStyle::strip);
    const HeatmapLayout L = layout_heatmap(d, o);
    ASSERT_GT(L.strip.w, 0);
    const Raster r = render(L, d, o, 72);
    const double sh = L.strip.h / d.rows;
    for (int i = 0; i < d.rows; ++i)
      for (int j = 0; j < d.cols; ++j) {
        const float v = d.values[i * d.cols + j];
        EXPECT_EQ(centre_of(r, L.cell(i, j), 72), std::isnan(v) ? kNanColor : cmap.at(v)) << i << "," << j;
        const Box s{L.strip.x + j * L.cell_w, L.strip.y + i * sh, L.cell_w, sh};
        EXPECT_EQ(centre_of(r, s, 72), mask_code_color(d.mask[i * d.cols + j])) << "strip " << i << "," << j;
      }
    bool legend_names_evicted = false;
    for (const auto& it : L.legend) legend_names_evicted |= it.text.find("evicted earlier") != std::string::npos;
    EXPECT_TRUE(legend_names_evicted);
  }
  // The outline: the cell's centre keeps its colour, its border with a kept
  // neighbour carries the evicted colour.
  {
    HeatmapFigureOptions o = linear_0_1();
    o.evicted = EvictedStyle::outline;
    const HeatmapLayout L = layout_heatmap(d, o);
    ASSERT_EQ(L.evicted, EvictedStyle::outline);
    EXPECT_EQ(L.strip.w, 0);
    const Raster r = render(L, d, o, 144);
    const Box c = L.cell(1, 0);  // evicted earlier, a kept cell to its right
    EXPECT_EQ(centre_of(r, c, 144), cmap.at(0.75));
    EXPECT_EQ(test::pixel_at(r, c.right() - 0.1, c.y + c.h / 2, 144), evicted_outline_color(cmap));
    const Box k = L.cell(0, 1);  // kept, not next to an evicted cell on its left
    EXPECT_EQ(test::pixel_at(r, k.x + 1.5, k.y + k.h / 2, 144), cmap.at(0.25));
  }
}

TEST(Heatmap, OutlineFallsBackToTheStripOnSmallCells) {
  HeatmapData d;
  d.rows = 4;
  d.cols = 600;  // 860 / 600 points per cell: too small to outline
  d.values.assign(std::size_t(d.rows) * d.cols, 0.5f);
  d.mask.assign(d.values.size(), kEvictedEarlier);
  HeatmapFigureOptions o = linear_0_1();
  o.evicted = EvictedStyle::outline;
  EXPECT_EQ(layout_heatmap(d, o).evicted, EvictedStyle::strip);
  d.mask.clear();
  EXPECT_EQ(layout_heatmap(d, o).evicted, EvictedStyle::none);
}

TEST(Heatmap, SizeFollowsTheContent) {
  HeatmapData small = small_data();
  const HeatmapLayout s = layout_heatmap(small, linear_0_1());
  EXPECT_EQ(s.cell_w, kMaxCell) << "a 4-column matrix gets the largest cells";
  EXPECT_GE(s.size.width, 200) << "and still a legible figure";
  HeatmapData big;
  big.rows = 9;
  big.cols = 170;
  big.values.assign(9 * 170, 0.1f);
  const HeatmapLayout b = layout_heatmap(big, linear_0_1());
  EXPECT_LE(b.plot.w, kHeatmapMaxPlot + 1e-9);
  EXPECT_GE(b.plot.h, kHeatmapMinHeight - 1e-9);  // 9 rows are not squashed into a strip
  // At 150 dpi the PNG is far larger than the old 700 x 290.
  EXPECT_GT(pixels_for(b.size.width, 150), 1600);
}

TEST(Heatmap, TokenLabelsWhereTheyFitNumbersOtherwise) {
  HeatmapData d;
  d.rows = 5;
  d.cols = 30;
  d.values.assign(150, 0.2f);
  for (int j = 0; j < 30; ++j) d.col_labels.push_back("t" + std::to_string(j));
  for (int i = 0; i < 5; ++i) d.row_labels.push_back("q" + std::to_string(i));
  d.first_generated_col = 26;
  d.first_generated_row = 1;
  const HeatmapLayout L = layout_heatmap(d, linear_0_1());
  EXPECT_TRUE(L.bottom.tokens);
  EXPECT_EQ(L.bottom.items.size(), 30u) << "30 columns of " << L.cell_w << " points: every token labelled";
  EXPECT_TRUE(L.left.tokens);
  EXPECT_FALSE(L.top.empty()) << "positions above when tokens are below";
  EXPECT_FALSE(L.right.empty()) << "steps at the right when tokens are at the left";
  // 400 columns: tokens thinned to a stride, still no two overlapping.
  HeatmapData wide = d;
  wide.cols = 400;
  wide.values.assign(5 * 400, 0.2f);
  wide.col_labels.clear();
  for (int j = 0; j < 400; ++j) wide.col_labels.push_back("t" + std::to_string(j));
  const HeatmapLayout W = layout_heatmap(wide, linear_0_1());
  ASSERT_TRUE(W.bottom.tokens);
  const int stride = W.bottom.items[1] - W.bottom.items[0];
  EXPECT_GT(stride, 1);
  EXPECT_GE(stride * W.cell_w, measure_text("Ag", TextStyle{.size = W.bottom.font}).height);
  // 2048 columns: a token every 10th would be too few; numbers instead.
  HeatmapData huge = wide;
  huge.cols = 2048;
  huge.values.assign(5 * 2048, 0.2f);
  huge.col_labels.assign(2048, "x");
  EXPECT_FALSE(layout_heatmap(huge, linear_0_1()).bottom.tokens);
}

// Labels in scripts DejaVu lacks still draw (fontconfig's fallback, or
// Pango's boxes when no font has them): ink in the label region of their
// columns, none where there is no label.
TEST(Heatmap, TokenLabelsInAnyScriptRender) {
  HeatmapData d;
  d.rows = 2;
  d.cols = 6;
  d.values.assign(12, 0.3f);
  d.col_labels = {"日本語", "مرحبا", "🙂", "\n", "", "Ünïcödé"};
  d.row_labels = {"中", "ع"};
  const HeatmapFigureOptions o = linear_0_1();
  const HeatmapLayout L = layout_heatmap(d, o);
  ASSERT_TRUE(L.bottom.tokens);
  const Raster r = render(L, d, o, 144);
  const double y0 = L.plot.bottom() + L.bottom_offset + 2, y1 = y0 + L.bottom.depth - 2;
  for (int j = 0; j < d.cols; ++j) {
    int ink = 0;
    for (double y = y0; y < y1; y += 0.5)
      for (double x = L.cell(0, j).x + 1; x < L.cell(0, j).right() - 1; x += 0.5)
        ink += test::colour_distance(test::pixel_at(r, x, y, 144), {255, 255, 255}) > 60;
    EXPECT_GT(ink, 3) << "column " << j << " (" << d.col_labels[j] << ") has no label ink";
  }
  EXPECT_EQ(missing_glyphs("مرحبا", TextStyle{}), 0) << "DejaVu Sans covers Arabic";
}

TEST(Heatmap, RejectsInconsistentData) {
  HeatmapData d = small_data();
  d.values.pop_back();
  EXPECT_THROW(layout_heatmap(d, linear_0_1()), Error);
  d = small_data();
  d.mask.assign(5, 0);
  EXPECT_THROW(layout_heatmap(d, linear_0_1()), Error);
  d = small_data();
  HeatmapFigureOptions o = linear_0_1();
  o.colormap = "jet";
  EXPECT_THROW(layout_heatmap(d, o), Error);
}

TEST(HeatmapGrid, PanelsShareOneRangeAndColorbar) {
  std::vector<HeatmapData> panels(3, small_data());
  for (float& v : panels[2].values) v *= 2;  // panel 2 reaches 2.0
  std::vector<std::string> titles = {"head 0", "head 1", "head 2"};
  ValueExtent all;
  for (const auto& p : panels) all.add(p.values);
  HeatmapFigureOptions o = linear_0_1();
  o.scale = resolve_color_scale(ScaleKind::linear, RangeSpec{}, all, all);
  EXPECT_EQ(o.scale.hi, 2.0);
  const HeatmapGridLayout L = layout_heatmap_grid(panels, titles, o);
  ASSERT_EQ(L.panels.size(), 3u);
  const Raster r = render_raster(L.size, 72, [&](cairo_t* cr) { draw_heatmap_grid(cr, L, panels, titles, o); });
  const Colormap& cmap = colormap("viridis");
  // 1.0 is cell (1, 1) of panels 0 and 1 and cell (0, 2) of panel 2: one colour, the middle of the map.
  EXPECT_EQ(centre_of(r, L.cell(0, 1, 1), 72), cmap.at(0.5));
  EXPECT_EQ(centre_of(r, L.cell(1, 1, 1), 72), cmap.at(0.5));
  EXPECT_EQ(centre_of(r, L.cell(2, 0, 2), 72), cmap.at(0.5));
  EXPECT_EQ(centre_of(r, L.cell(2, 1, 1), 72), cmap.table[255]);
  for (std::size_t i = 0; i < L.panels.size(); ++i)
    for (std::size_t j = i + 1; j < L.panels.size(); ++j) {
      const Box &a = L.panels[i], &b = L.panels[j];
      EXPECT_FALSE(a.x < b.right() && b.x < a.right() && a.y < b.bottom() && b.y < a.bottom()) << i << " overlaps " << j;
    }
}

// The golden image: a small heatmap with tokens, a mask and NaN cells,
// compared with a tolerance (font rasterisation differs a little between
// FreeType versions). Regenerate after an intended change with
//   KVSCOPE_UPDATE_GOLDEN=1 build/release/tests/figures/test_figures --gtest_filter=Golden.*
TEST(Golden, HeatmapMatchesTheCommittedImage) {
  HeatmapData d;
  d.rows = 6;
  d.cols = 14;
  d.values = test::causal_attention(6, 14);
  d.mask.assign(d.values.size(), kMaskKept);
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < 14; ++j) {
      const std::size_t k = std::size_t(i) * 14 + j;
      if (std::isnan(d.values[k])) d.mask[k] = kNotSeen;
      else if (j >= 10 + i - 2) d.mask[k] = kMaskProtected;
      else if (j == 3 && i == 2) d.mask[k] = kEvictedNow;
      else if (j == 3 && i > 2) d.mask[k] = kEvictedEarlier;
    }
  for (int i = 0; i < 6; ++i) d.row_labels.push_back(std::vector<std::string>{".", " the", " fox", " ran", " far", "\n"}[i]);
  for (int j = 0; j < 14; ++j)
    d.col_labels.push_back(std::vector<std::string>{"<s>", "A", " quick", " brown", " fox", " jumps", " over", " the",
                                                    " lazy", " dog", ".", " the", " fox", " ran"}[j]);
  d.first_generated_col = 9;
  d.first_generated_row = 1;
  HeatmapFigureOptions o;
  o.title = "golden · layer 0 · head 0";
  ValueExtent e;
  e.add(d.values);
  o.scale = resolve_color_scale(ScaleKind::linear, RangeSpec{}, e, e);
  const HeatmapLayout L = layout_heatmap(d, o);
  const auto golden = test::data_dir() / "figures" / "golden_heatmap.png";
  if (std::getenv("KVSCOPE_UPDATE_GOLDEN")) {
    write_heatmap(golden.parent_path() / golden.stem(), d, o, {{FigureFormat::png}, 100});
    GTEST_SKIP() << "wrote " << golden;
  }
  test::TempDir dir;
  write_heatmap(dir / "now", d, o, {{FigureFormat::png}, 100});
  const Raster want = test::read_png(golden), got = test::read_png(dir / "now.png");
  ASSERT_GT(want.width, 0) << golden << " missing";
  ASSERT_EQ(got.width, want.width);
  ASSERT_EQ(got.height, want.height);
  int far = 0;
  double sum = 0;
  for (int y = 0; y < got.height; ++y)
    for (int x = 0; x < got.width; ++x) {
      const int dist = test::colour_distance(got.at(x, y), want.at(x, y));
      sum += dist;
      far += dist > 64;
    }
  const double n = double(got.width) * got.height;
  EXPECT_LT(sum / n, 2.0) << "mean channel difference";
  EXPECT_LT(far / n, 0.01) << far << " pixels differ by more than 64";
}

}  // namespace
}  // namespace kvscope
