#include "figures/heatmap_grid.h"

#include <algorithm>
#include <cmath>

#include "common/error.h"
#include "figures/plot_style.h"

namespace kvscope {
namespace {

constexpr double kHGap = 12, kVGap = 8, kPanelTitleGap = 2, kPanelStripGap = 3;
const TextStyle kPanelTitle{.size = 7.5, .bold = true};
constexpr double kTitleClearance = 2;
constexpr double kFittedColorbarGap =
    8;  // fitted to a printed width, every point counts  // points between neighbouring panel titles

// Columns for a figure about 1.5 times as wide as tall, within kGridMaxWidth.
int choose_columns(int n, double pw, double ph) {
  int best = 1;
  double best_score = INFINITY;
  for (int c = 1; c <= n; ++c) {
    const int r = (n + c - 1) / c;
    const double w = c * (pw + kHGap), h = r * (ph + 20);
    if (c > 1 && w > kGridMaxWidth) break;
    const double score = std::abs(std::log((w / h) / 1.5)) + (n % c ? 0.3 : 0);  // full rows read better
    if (score < best_score) best_score = score, best = c;
  }
  return best;
}

}  // namespace

HeatmapGridLayout layout_heatmap_grid(std::span<const HeatmapData> panels, std::span<const std::string> titles,
                                      const HeatmapFigureOptions& opt, int grid_columns, const LayoutFit& fit) {
  if (panels.empty()) throw Error("heatmap grid", "panels", "no panels to draw");
  if (titles.size() != panels.size()) throw Error("heatmap grid", "titles", "one title per panel expected");
  const HeatmapData& d0 = panels[0];
  for (std::size_t p = 0; p < panels.size(); ++p) {
    panels[p].validate("heatmap grid: panel " + std::to_string(p));
    if (panels[p].rows != d0.rows || panels[p].cols != d0.cols)
      throw Error("heatmap grid", "panel " + std::to_string(p), "has another shape than panel 0");
  }
  const Colormap& cmap = colormap(opt.colormap);
  HeatmapGridLayout L;
  const int n = static_cast<int>(panels.size());
  L.cell_w = panel_cell_size(d0.cols, kGridPanelMax * fit.shrink, kGridPanelMinWidth * fit.shrink);
  L.cell_h = panel_cell_size(d0.rows, kGridPanelMax * fit.shrink, kGridPanelMinHeight * fit.shrink);
  // A panel's title is at most as wide as the panel and the gap beside it,
  // so titles never run into their neighbours' (a fitted grid shrinks its
  // cells down to this).
  double widest_title = 0;
  for (const auto& t : titles) widest_title = std::max(widest_title, measure_text(t, kPanelTitle).width);
  L.cell_w = std::max(L.cell_w, (widest_title - kHGap + kTitleClearance) / d0.cols);
  const double pw = L.cell_w * d0.cols, ph = L.cell_h * d0.rows;
  bool any_mask = false;
  for (const auto& p : panels) any_mask = any_mask || !p.mask.empty();
  HeatmapData shape = d0;  // for the style choice: is there a mask at all
  if (any_mask && shape.mask.empty()) shape.mask.assign(shape.values.size(), 0);
  L.evicted = effective_evicted_style(opt.evicted, shape, L.cell_w, L.cell_h);
  const double strip_h = L.evicted == EvictedStyle::strip ? mask_strip_height(ph) : 0;
  L.grid_columns = std::clamp(grid_columns > 0 ? grid_columns : choose_columns(n, pw, ph + strip_h), 1, n);

  L.left = token_axis(d0.row_labels, L.cell_h, Side::left, d0.first_generated_row);
  if (L.left.empty()) L.left = number_axis(d0.rows, d0.first_row, L.cell_h, Side::left);
  L.bottom = token_axis(d0.col_labels, L.cell_w, Side::bottom, d0.first_generated_col);
  if (L.bottom.empty()) L.bottom = number_axis(d0.cols, d0.first_col, L.cell_w, Side::bottom);
  else L.top = number_axis(d0.cols, d0.first_col, L.cell_w, Side::top);
  const double cap_h = measure_text("Ag", caption_style()).height;
  const double ptitle_h = measure_text("Ag", kPanelTitle).height;

  L.left_offset = d0.first_generated_row >= 0 ? kBoundaryGap + kBoundaryBar + kBoundaryGap : 0;
  L.bottom_offset = (strip_h > 0 ? kPanelStripGap + strip_h : 0) +
                    (d0.first_generated_col >= 0 ? kBoundaryGap + kBoundaryBar + kBoundaryGap : 0);
  const double x0 = kFigureMargin + cap_h + kHeatmapCaptionGap + L.left.depth + L.left_offset;
  const std::string bar_caption = colorbar_caption(opt.value_name, opt.scale.kind);
  const double bar_gap = fit.max_width > 0 ? kFittedColorbarGap : kHeatmapColorbarGap;
  if (grid_columns <= 0 && fit.max_width > 0) {
    // Fitted: no more columns than the width holds.
    const double beside = bar_gap + colorbar_width(110.0, opt.scale, bar_caption) + kFigureMargin;
    const int fit_cols = static_cast<int>((fit.max_width - x0 - beside + kHGap) / (pw + kHGap));
    L.grid_columns = std::clamp(std::min(L.grid_columns, fit_cols), 1, n);
  }
  const int gc = L.grid_columns, gr = (n + gc - 1) / gc;
  {
    // The title wraps to the panels' width when fitted (the colorbar's is
    // taken at its smallest height: close enough for a wrap width).
    const double content =
        x0 + gc * pw + (gc - 1) * kHGap + bar_gap + colorbar_width(110.0, opt.scale, bar_caption) + kFigureMargin;
    L.title = fitted_title_style(fit, content);
  }
  double y = kFigureMargin;
  L.title_y = y;
  if (!opt.title.empty()) y += measure_text(opt.title, L.title).height + kHeatmapTitleGap;
  if (!L.top.empty()) y += cap_h + kHeatmapCaptionGap + L.top.depth;
  // Rows: a panel title, the panel, its strip and bar; the bottom labels
  // only under the last row (and in the empty slots of a partial one).
  const double row_h = ptitle_h + kPanelTitleGap + ph + L.bottom_offset;
  for (int p = 0; p < n; ++p) {
    const int r = p / gc, c = p % gc;
    const double top = y + r * (row_h + kVGap) + ptitle_h + kPanelTitleGap;
    L.panels.push_back({x0 + c * (pw + kHGap), top, pw, ph});
    L.strips.push_back(strip_h > 0 ? Box{x0 + c * (pw + kHGap), top + ph + kPanelStripGap, pw, strip_h} : Box{});
  }
  const double block_top = L.panels.front().y, block_bottom = L.panels.back().bottom();
  y += gr * row_h + (gr - 1) * kVGap + L.bottom.depth + kHeatmapCaptionGap + cap_h;
  const double block_right = x0 + gc * pw + (gc - 1) * kHGap;
  const double bar_h = std::max(block_bottom - block_top, 110.0);
  L.colorbar = layout_colorbar(block_right + bar_gap, block_top, bar_h, opt.scale,
                               colorbar_caption(opt.value_name, opt.scale.kind));
  double width = L.colorbar.bar.x + L.colorbar.width + kFigureMargin;
  width = std::max(width, measure_text(opt.title, L.title).width + 2 * kFigureMargin);
  y = std::max(y, block_top + bar_h);
  // The legend covers what any panel shows.
  for (const auto& p : panels)
    for (const auto& item : panel_legend(p, L.evicted, cmap)) {
      bool seen = false;
      for (const auto& have : L.legend) seen = seen || have.text == item.text;
      if (!seen) L.legend.push_back(item);
    }
  L.legend_y = y + kHeatmapLegendGap;
  const double legend_h = legend_height(L.legend, width - 2 * kFigureMargin);
  L.size = {width, (legend_h > 0 ? L.legend_y + legend_h : y) + kFigureMargin};
  return L;
}

void draw_heatmap_grid(cairo_t* cr, const HeatmapGridLayout& L, std::span<const HeatmapData> panels,
                       std::span<const std::string> titles, const HeatmapFigureOptions& opt) {
  const Colormap& cmap = colormap(opt.colormap);
  const HeatmapData& d0 = panels[0];
  const int n = static_cast<int>(panels.size()), gc = L.grid_columns;
  if (!opt.title.empty()) draw_text(cr, opt.title, L.size.width / 2, L.title_y, L.title, HAlign::center, VAlign::top);
  const double title_room = measure_text("Ag", kPanelTitle).height + kPanelTitleGap;
  for (int p = 0; p < n; ++p) {
    const Box& B = L.panels[p];
    draw_text(cr, titles[p], B.x + B.w / 2, B.y - kPanelTitleGap, kPanelTitle, HAlign::center, VAlign::bottom);
    paint_cells(cr, B, panels[p], cmap, opt.scale);
    if (L.evicted == EvictedStyle::outline) draw_mask_outlines(cr, B, panels[p], cmap);
    stroke_box(cr, B, kFrameColor, 0.6);
    double off = 0;
    if (L.strips[p].w > 0 && !panels[p].mask.empty()) {
      paint_mask_strip(cr, L.strips[p], panels[p]);
      stroke_box(cr, L.strips[p], kFrameColor, 0.6);
    }
    if (L.strips[p].w > 0) off = L.strips[p].bottom() - B.bottom();
    draw_boundary_bar(cr, B, d0.cols, d0.first_generated_col, Side::bottom, off + kBoundaryGap);
    const bool left_col = p % gc == 0, lowest = p + gc >= n, top_row = p < gc;
    if (left_col) {
      draw_boundary_bar(cr, B, d0.rows, d0.first_generated_row, Side::left, kBoundaryGap);
      draw_axis(cr, B, d0.rows, L.left, L.left_offset);
    }
    if (lowest) draw_axis(cr, B, d0.cols, L.bottom, L.bottom_offset);
    if (top_row && !L.top.empty()) draw_axis(cr, B, d0.cols, L.top, title_room);
  }
  const Box& first = L.panels.front();
  const double block_mid_y = (first.y + L.panels.back().bottom()) / 2;
  const double block_mid_x = first.x + (gc * first.w + (gc - 1) * kHGap) / 2;
  const double last_bottom = L.panels.back().bottom() + L.bottom_offset + L.bottom.depth + kHeatmapCaptionGap;
  draw_text(cr, L.left.tokens ? opt.row_token_name : opt.row_name, kFigureMargin, block_mid_y, caption_style(),
            HAlign::center, VAlign::top, 90);
  draw_text(cr, L.bottom.tokens ? opt.col_token_name : opt.col_name, block_mid_x, last_bottom, caption_style(),
            HAlign::center, VAlign::top);
  if (!L.top.empty())
    draw_text(cr, opt.col_name, block_mid_x, first.y - title_room - L.top.depth - kHeatmapCaptionGap, caption_style(),
              HAlign::center, VAlign::bottom);
  draw_colorbar(cr, L.colorbar, cmap);
  draw_legend(cr, L.legend, kFigureMargin, L.legend_y, L.size.width - 2 * kFigureMargin);
}

std::vector<std::filesystem::path> write_heatmap_grid(const std::filesystem::path& stem,
                                                      std::span<const HeatmapData> panels,
                                                      std::span<const std::string> titles,
                                                      const HeatmapFigureOptions& opt, const FigureOutput& out) {
  // Fitted, the grid keeps the columns of its natural size (its aspect)
  // where that fits, else the most columns that fit.
  HeatmapGridLayout L = layout_heatmap_grid(panels, titles, opt);
  auto fit_with = [&](int gc) {
    return fit_figure(out.size,
                      [&](const LayoutFit& f) { return (L = layout_heatmap_grid(panels, titles, opt, gc, f)).size; });
  };
  int columns = L.grid_columns;
  FigureFit fit;
  for (;; --columns) {
    try {
      fit = fit_with(columns);
      break;
    } catch (const Error&) {
      if (columns == 1) throw;  // not even one column fits: the error says how much room it needs
    }
  }
  L = layout_heatmap_grid(panels, titles, opt, columns, fit.layout);
  return write_fitted_figure(
      stem, fit, [&](cairo_t* cr) { draw_heatmap_grid(cr, L, panels, titles, opt); }, out);
}

}  // namespace kvscope
