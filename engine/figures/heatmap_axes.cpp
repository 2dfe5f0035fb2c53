#include "figures/heatmap_axes.h"

#include <algorithm>
#include <cmath>
#include <initializer_list>

#include "common/mask_codes.h"
#include "figures/plot_style.h"
#include "figures/ticks.h"

namespace kvscope {
namespace {

constexpr double kAxisTick = 2.5, kAxisTickGap = 1.5;

bool along_x(Side s) { return s == Side::top || s == Side::bottom; }

// Height of a line of text at `size` points.
double line_height(double size) { return measure_text("Ag", TextStyle{.size = size}).height; }

TextStyle label_style(const AxisLabels& a, int item) {
  TextStyle t{.size = a.font};
  if (a.tokens) {
    t.max_width = kTokenLabelMax;
    if (a.first_generated >= 0 && item >= a.first_generated) t.color = kGeneratedText;
  }
  return t;
}

constexpr double kSwatchW = 10, kSwatchH = 7, kSwatchGap = 3, kItemGap = 11, kLegendRow = 12;

double item_width(const LegendItem& it) { return kSwatchW + kSwatchGap + measure_text(it.text, kLegendText).width; }

}  // namespace

AxisLabels token_axis(const std::vector<std::string>& labels, double pitch, Side side, int first_generated) {
  AxisLabels a;
  a.side = side;
  if (labels.empty()) return a;
  const int n = static_cast<int>(labels.size());
  const double h_max = line_height(kTokenFontMax), h_min = line_height(kTokenFontMin);
  int stride = 1;
  a.font = kTokenFontMax;
  if (pitch < h_max) {
    if (pitch >= h_min) a.font = kTokenFontMax * pitch / h_max;  // line height scales with the size
    else stride = label_stride(pitch, h_max, 0.5);
  }
  if (stride > kMaxTokenStride) return a;
  a.tokens = true;
  a.first_generated = first_generated;
  double widest = 0;
  for (int i = 0; i < n; i += stride) {
    a.items.push_back(i);
    a.texts.push_back(printable_token(labels[i]));
    widest = std::max(widest, measure_text(a.texts.back(), label_style(a, i)).width);
  }
  a.depth = widest + (stride > 1 ? kAxisTick : 0) + kAxisTickGap;
  return a;
}

AxisLabels number_axis(int n, int first, double pitch, Side side) {
  AxisLabels a;
  a.side = side;
  a.font = kNumberFont;
  const TextStyle t{.size = kNumberFont};
  const TextExtent widest = measure_text(std::to_string(first + n - 1), t);
  const double extent = along_x(side) ? widest.width : widest.height;
  const int stride = label_stride(pitch, extent, along_x(side) ? 5 : 2);
  for (int i = 0; i < n; ++i)
    if ((first + i) % stride == 0) {
      a.items.push_back(i);
      a.texts.push_back(std::to_string(first + i));
    }
  a.depth = kAxisTick + kAxisTickGap + (along_x(side) ? widest.height : widest.width);
  return a;
}

void draw_axis(cairo_t* cr, const Box& plot, int n, const AxisLabels& a, double offset) {
  const bool x_axis = along_x(a.side);
  const double pitch = (x_axis ? plot.w : plot.h) / n;
  const bool ticks = !a.tokens || (a.items.size() > 1 && a.items[1] - a.items[0] > 1);
  const double tick = ticks ? kAxisTick : 0;
  for (std::size_t k = 0; k < a.items.size(); ++k) {
    const int i = a.items[k];
    const double c = (x_axis ? plot.x : plot.y) + (i + 0.5) * pitch;
    const TextStyle t = label_style(a, i);
    switch (a.side) {
      case Side::bottom: {
        const double y = plot.bottom() + offset;
        if (ticks) line(cr, c, y, c, y + tick, kFrameColor, 0.6);
        if (a.tokens) draw_text(cr, a.texts[k], c, y + tick + kAxisTickGap, t, HAlign::right, VAlign::middle, 90);
        else draw_text(cr, a.texts[k], c, y + tick + kAxisTickGap, t, HAlign::center, VAlign::top);
        break;
      }
      case Side::top: {
        const double y = plot.y - offset;
        if (ticks) line(cr, c, y, c, y - tick, kFrameColor, 0.6);
        if (a.tokens) draw_text(cr, a.texts[k], c, y - tick - kAxisTickGap, t, HAlign::left, VAlign::middle, 90);
        else draw_text(cr, a.texts[k], c, y - tick - kAxisTickGap, t, HAlign::center, VAlign::bottom);
        break;
      }
      case Side::left: {
        const double x = plot.x - offset;
        if (ticks) line(cr, x, c, x - tick, c, kFrameColor, 0.6);
        draw_text(cr, a.texts[k], x - tick - kAxisTickGap, c, t, HAlign::right, VAlign::middle);
        break;
      }
      case Side::right: {
        const double x = plot.right() + offset;
        if (ticks) line(cr, x, c, x + tick, c, kFrameColor, 0.6);
        draw_text(cr, a.texts[k], x + tick + kAxisTickGap, c, t, HAlign::left, VAlign::middle);
        break;
      }
    }
  }
}

void draw_boundary_bar(cairo_t* cr, const Box& plot, int n, int first_generated, Side side, double offset) {
  if (first_generated < 0) return;
  const int fg = std::clamp(first_generated, 0, n);
  if (side == Side::bottom) {
    const double y = plot.bottom() + offset, split = plot.x + plot.w * fg / n;
    fill_box(cr, {plot.x, y, split - plot.x, kBoundaryBar}, kPromptColor);
    fill_box(cr, {split, y, plot.right() - split, kBoundaryBar}, kGeneratedColor);
  } else {
    const double x = plot.x - offset - kBoundaryBar, split = plot.y + plot.h * fg / n;
    fill_box(cr, {x, plot.y, kBoundaryBar, split - plot.y}, kPromptColor);
    fill_box(cr, {x, split, kBoundaryBar, plot.bottom() - split}, kGeneratedColor);
  }
}

std::vector<LegendItem> panel_legend(const HeatmapData& d, EvictedStyle style, const Colormap& cmap) {
  std::vector<LegendItem> out;
  bool nan = false;
  for (float v : d.values) nan = nan || std::isnan(v);
  if (nan) out.push_back({LegendItem::Kind::fill, kNanColor, kNanColor, "not yet seen"});
  bool present[256] = {};
  for (uint8_t c : d.mask) present[c] = true;
  const Rgb inner = cmap.at(0.35);
  if (style == EvictedStyle::outline) {
    if (present[kEvictedNow] || present[kEvictedEarlier])
      out.push_back({LegendItem::Kind::outline, evicted_outline_color(cmap), inner, "evicted (outlined)"});
    if (present[kMaskProtected])
      out.push_back({LegendItem::Kind::dashed, protected_outline_color(cmap), inner, "protected (dashed)"});
    if (present[kOutsideTopK])
      out.push_back({LegendItem::Kind::dotted, evicted_outline_color(cmap), inner, "outside the top k (dotted)"});
  } else if (style == EvictedStyle::strip && !d.mask.empty()) {
    for (uint8_t c :
         std::initializer_list<uint8_t>{kMaskKept, kMaskProtected, kEvictedNow, kEvictedEarlier, kOutsideTopK,
                                        kForkBothKeep, kForkOnlyA, kForkOnlyB, kForkBothEvicted})
      if (present[c]) out.push_back({LegendItem::Kind::fill, mask_code_color(c), mask_code_color(c), "mask: " + mask_code_label(c)});
  }
  if (d.first_generated_col >= 0 || d.first_generated_row >= 0) {
    out.push_back({LegendItem::Kind::bar, kPromptColor, kPromptColor, "prompt"});
    out.push_back({LegendItem::Kind::bar, kGeneratedColor, kGeneratedColor, "generated"});
  }
  return out;
}

double legend_height(const std::vector<LegendItem>& items, double width) {
  if (items.empty()) return 0;
  int rows = 1;
  double x = 0;
  for (const auto& it : items) {
    const double w = item_width(it);
    if (x > 0 && x + w > width) ++rows, x = 0;
    x += w + kItemGap;
  }
  return rows * kLegendRow;
}

void draw_legend(cairo_t* cr, const std::vector<LegendItem>& items, double x0, double y0, double width) {
  // Rows are centred in `width`: first find where each row breaks.
  std::vector<std::vector<std::size_t>> rows(1);
  std::vector<double> widths(1, 0);
  for (std::size_t i = 0; i < items.size(); ++i) {
    const double w = item_width(items[i]);
    if (widths.back() > 0 && widths.back() + w > width) rows.emplace_back(), widths.push_back(0);
    rows.back().push_back(i);
    widths.back() += w + kItemGap;
  }
  for (std::size_t r = 0; r < rows.size(); ++r) {
    double x = x0 + std::max(0.0, (width - (widths[r] - kItemGap)) / 2);
    const double cy = y0 + r * kLegendRow + kLegendRow / 2;
    for (std::size_t i : rows[r]) {
      const LegendItem& it = items[i];
      const Box sw{x, cy - kSwatchH / 2, kSwatchW, kSwatchH};
      switch (it.kind) {
        case LegendItem::Kind::fill:
          fill_box(cr, sw, it.color);
          stroke_box(cr, sw, kFrameColor, 0.4);
          break;
        case LegendItem::Kind::bar: fill_box(cr, {sw.x, cy - kBoundaryBar / 2, sw.w, kBoundaryBar}, it.color); break;
        case LegendItem::Kind::outline:
        case LegendItem::Kind::dashed:
        case LegendItem::Kind::dotted:
          fill_box(cr, sw, it.inner);
          cairo_save(cr);
          set_dash(cr, it.kind == LegendItem::Kind::dashed  ? std::vector<double>{2.4, 1.6}
                       : it.kind == LegendItem::Kind::dotted ? std::vector<double>{0.8, 1.2}
                                                             : std::vector<double>{});
          stroke_box(cr, {sw.x + 0.5, sw.y + 0.5, sw.w - 1, sw.h - 1}, it.color, 1.0);
          cairo_restore(cr);
          break;
      }
      draw_text(cr, it.text, x + kSwatchW + kSwatchGap, cy, kLegendText, HAlign::left, VAlign::middle);
      x += item_width(it) + kItemGap;
    }
  }
}

double panel_cell_size(int n, double max_extent, double min_extent) {
  return std::min({max_extent / n, std::max(kLabelPitch, min_extent / n), kMaxCell});
}

EvictedStyle effective_evicted_style(EvictedStyle want, const HeatmapData& d, double cell_w, double cell_h) {
  if (d.mask.empty()) return EvictedStyle::none;
  if (want == EvictedStyle::outline && std::min(cell_w, cell_h) < kMinOutlineCell) return EvictedStyle::strip;
  return want;
}

double mask_strip_height(double h) { return std::clamp(h * 0.35, std::min(h, 24.0), 100.0); }

}  // namespace kvscope
