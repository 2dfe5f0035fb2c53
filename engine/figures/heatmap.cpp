#include "figures/heatmap.h"

#include <algorithm>

#include "common/error.h"
#include "figures/plot_style.h"
#include "io/colormap.h"

namespace kvscope {
namespace {

constexpr double kStripGap = 4;
constexpr double kMinColorbar = 110;

}  // namespace

const TextStyle& title_style() {
  static const TextStyle t{.size = 10.5, .bold = true};
  return t;
}

const TextStyle& caption_style() {
  static const TextStyle t{.size = 8.5};
  return t;
}

TextStyle fitted_title_style(const LayoutFit& fit, double content_width) {
  TextStyle t = title_style();
  if (fit.wrap_title) t.wrap_width = std::max(40.0, content_width - 2 * kFigureMargin);
  return t;
}

HeatmapLayout layout_heatmap(const HeatmapData& d, const HeatmapFigureOptions& opt, const LayoutFit& fit) {
  d.validate("heatmap");
  const Colormap& cmap = colormap(opt.colormap);  // throws for an unknown name before any work
  HeatmapLayout L;
  L.cell_w = panel_cell_size(d.cols, kHeatmapMaxPlot * fit.shrink, kHeatmapMinWidth * fit.shrink);
  L.cell_h = panel_cell_size(d.rows, kHeatmapMaxPlot * fit.shrink, kHeatmapMinHeight * fit.shrink);
  const double pw = L.cell_w * d.cols, ph = L.cell_h * d.rows;
  L.evicted = effective_evicted_style(opt.evicted, d, L.cell_w, L.cell_h);

  // Axes: tokens where they fit, numbers on the opposite side.
  L.left = token_axis(d.row_labels, L.cell_h, Side::left, d.first_generated_row);
  if (L.left.empty()) L.left = number_axis(d.rows, d.first_row, L.cell_h, Side::left);
  else L.right = number_axis(d.rows, d.first_row, L.cell_h, Side::right);
  L.bottom = token_axis(d.col_labels, L.cell_w, Side::bottom, d.first_generated_col);
  if (L.bottom.empty()) L.bottom = number_axis(d.cols, d.first_col, L.cell_w, Side::bottom);
  else L.top = number_axis(d.cols, d.first_col, L.cell_w, Side::top);
  const std::string left_caption = L.left.tokens ? opt.row_token_name : opt.row_name;
  const std::string bottom_caption = L.bottom.tokens ? opt.col_token_name : opt.col_name;
  const TextExtent cap = measure_text("Ag", caption_style());

  // ---- horizontal ----
  double x = kFigureMargin + cap.height + kHeatmapCaptionGap;  // the left caption, rotated
  L.left_offset = d.first_generated_row >= 0 ? kBoundaryGap + kBoundaryBar + kBoundaryGap : 0;
  x += L.left.depth + L.left_offset;
  L.plot.x = x;
  L.plot.w = pw;
  x += pw;
  if (!L.right.empty()) x += L.right.depth + kHeatmapCaptionGap + cap.height;
  x += kHeatmapColorbarGap;
  const std::string bar_caption = colorbar_caption(opt.value_name, opt.scale.kind);
  L.title =
      fitted_title_style(fit, x + colorbar_width(std::max(ph, kMinColorbar), opt.scale, bar_caption) + kFigureMargin);

  // ---- vertical ----
  double y = kFigureMargin;
  L.title_y = y;
  if (!opt.title.empty()) y += measure_text(opt.title, L.title).height + kHeatmapTitleGap;
  if (!L.top.empty()) y += cap.height + kHeatmapCaptionGap + L.top.depth;
  L.plot.y = y;
  L.plot.h = ph;
  y += ph;
  L.bottom_offset = 0;
  if (L.evicted == EvictedStyle::strip) {
    L.strip = {L.plot.x, y + kStripGap, pw, mask_strip_height(ph)};
    L.bottom_offset += kStripGap + L.strip.h;
  }
  if (d.first_generated_col >= 0) L.bottom_offset += kBoundaryGap + kBoundaryBar + kBoundaryGap;
  y += L.bottom_offset + L.bottom.depth + kHeatmapCaptionGap + cap.height;

  const double bar_h = std::max(ph, kMinColorbar);
  L.colorbar = layout_colorbar(x, L.plot.y, bar_h, opt.scale, bar_caption);
  double width = x + L.colorbar.width + kFigureMargin;
  width = std::max(width, measure_text(opt.title, L.title).width + 2 * kFigureMargin);
  y = std::max(y, L.plot.y + bar_h);
  L.legend = panel_legend(d, L.evicted, cmap);
  L.legend_y = y + kHeatmapLegendGap;
  const double legend_h = legend_height(L.legend, width - 2 * kFigureMargin);
  L.size = {width, (legend_h > 0 ? L.legend_y + legend_h : y) + kFigureMargin};
  return L;
}

void draw_heatmap(cairo_t* cr, const HeatmapLayout& L, const HeatmapData& d, const HeatmapFigureOptions& opt) {
  const Colormap& cmap = colormap(opt.colormap);
  if (!opt.title.empty()) draw_text(cr, opt.title, L.size.width / 2, L.title_y, L.title, HAlign::center, VAlign::top);
  paint_cells(cr, L.plot, d, cmap, opt.scale);
  if (L.evicted == EvictedStyle::outline) draw_mask_outlines(cr, L.plot, d, cmap);
  stroke_box(cr, L.plot, kFrameColor, 0.6);
  if (L.strip.w > 0) {
    paint_mask_strip(cr, L.strip, d);
    stroke_box(cr, L.strip, kFrameColor, 0.6);
  }
  const double strip_off = L.strip.w > 0 ? L.strip.bottom() - L.plot.bottom() : 0;
  draw_boundary_bar(cr, L.plot, d.cols, d.first_generated_col, Side::bottom, strip_off + kBoundaryGap);
  draw_boundary_bar(cr, L.plot, d.rows, d.first_generated_row, Side::left, kBoundaryGap);
  draw_axis(cr, L.plot, d.rows, L.left, L.left_offset);
  draw_axis(cr, L.plot, d.cols, L.bottom, L.bottom_offset);
  if (!L.right.empty()) draw_axis(cr, L.plot, d.rows, L.right, 0);
  if (!L.top.empty()) draw_axis(cr, L.plot, d.cols, L.top, 0);

  const TextStyle& cap = caption_style();
  const double cx = L.plot.x + L.plot.w / 2, cy = L.plot.y + L.plot.h / 2;
  draw_text(cr, L.left.tokens ? opt.row_token_name : opt.row_name, kFigureMargin, cy, cap, HAlign::center, VAlign::top, 90);
  draw_text(cr, L.bottom.tokens ? opt.col_token_name : opt.col_name, cx,
            L.plot.bottom() + L.bottom_offset + L.bottom.depth + kHeatmapCaptionGap, cap, HAlign::center, VAlign::top);
  if (!L.top.empty())
    draw_text(cr, opt.col_name, cx, L.plot.y - L.top.depth - kHeatmapCaptionGap, cap, HAlign::center, VAlign::bottom);
  if (!L.right.empty())
    draw_text(cr, opt.row_name, L.plot.right() + L.right.depth + kHeatmapCaptionGap, cy, cap, HAlign::center,
              VAlign::top, 90);
  draw_colorbar(cr, L.colorbar, cmap);
  draw_legend(cr, L.legend, kFigureMargin, L.legend_y, L.size.width - 2 * kFigureMargin);
}

std::vector<std::filesystem::path> write_heatmap(const std::filesystem::path& stem, const HeatmapData& d,
                                                 const HeatmapFigureOptions& opt, const FigureOutput& out) {
  HeatmapLayout L;
  const FigureFit fit = fit_figure(out.size, [&](const LayoutFit& f) { return (L = layout_heatmap(d, opt, f)).size; });
  L = layout_heatmap(d, opt, fit.layout);
  return write_fitted_figure(
      stem, fit, [&](cairo_t* cr) { draw_heatmap(cr, L, d, opt); }, out);
}

}  // namespace kvscope
