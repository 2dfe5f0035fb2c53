// Where everything of a heatmap figure goes: cell sizes, panels, ticks,
// colorbar and text. Rendering (io/heatmap.cpp, io/svg_writer.cpp) only
// follows this layout.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "common/error.h"
#include "io/colormap.h"
#include "io/heatmap.h"

namespace kvscope {
namespace {

using Align = TextItem::Align;

// Colour range: explicit, or the finite data's min and max; a range of one
// value is widened so that it still maps to the middle of the colormap.
void choose_range(std::span<const HeatmapPanel> panels, const HeatmapOptions& opt, HeatmapLayout& L) {
  const bool log = opt.scale == HeatmapScale::log;
  if (log && !(opt.log_floor > 0)) throw Error("heatmap", "log_floor", "must be > 0 for a log scale");
  double lo = INFINITY, hi = -INFINITY;
  for (const auto& p : panels)
    for (float v : p.values) {
      if (!std::isfinite(v)) continue;
      hi = std::max(hi, double(v));
      if (!log || v > 0) lo = std::min(lo, double(v));
    }
  if (log) {
    lo = std::max(lo, opt.log_floor);
    if (!std::isfinite(hi) || hi < lo) hi = lo;
  } else if (!std::isfinite(lo)) {
    lo = 0, hi = 1;
  }
  double vmin = opt.vmin.value_or(lo), vmax = opt.vmax.value_or(hi);
  if (log) vmin = std::max(vmin, opt.log_floor), vmax = std::max(vmax, vmin);
  if (!std::isfinite(vmin) || !std::isfinite(vmax) || vmin > vmax)
    throw Error("heatmap", "vmin/vmax", "the colour range [" + std::to_string(vmin) + ", " + std::to_string(vmax) + "] is invalid");
  if (vmin == vmax) {
    if (log) vmin /= std::sqrt(10.0), vmax *= std::sqrt(10.0);
    else vmin -= 0.5, vmax += 0.5;
  }
  L.scale = opt.scale;
  L.vmin = vmin;
  L.vmax = vmax;
  L.log_floor = opt.log_floor;
}

// Smallest step of 1, 2, 5 x 10^n indices whose spacing is >= min_px.
int index_step(int min_px, int cell) {
  for (int p = 1;; p *= 10)
    for (int m : {1, 2, 5})
      if (m * p * cell >= min_px || m * p > 1'000'000'000 / 10) return m * p;
}

std::vector<Tick> index_ticks(int n, int first, int cell, int min_px) {
  const int step = index_step(min_px, cell);
  std::vector<Tick> out;
  for (int i = 0; i < n; ++i) {
    const int label = i + first;
    if (((label % step) + step) % step == 0) out.push_back(tick(double(label), i * cell + cell / 2, std::to_string(label)));
  }
  return out;
}

std::vector<Tick> colorbar_ticks(const HeatmapLayout& L, int min_spacing) {
  const int max_labels = std::max(2, L.colorbar.h / std::max(min_spacing, 1) + 1);
  std::vector<double> values;
  std::vector<std::pair<std::string, std::string>> labels;  // text, superscript
  if (L.scale == HeatmapScale::log) {
    const double eps = 1e-9;
    std::vector<int> ks;
    for (int k = int(std::ceil(std::log10(L.vmin) - eps)); k <= int(std::floor(std::log10(L.vmax) + eps)); ++k) ks.push_back(k);
    if (int(ks.size()) > max_labels) {  // keep every stride-th decade, on multiples of the stride
      const int stride = (int(ks.size()) + max_labels - 1) / max_labels;
      std::erase_if(ks, [&](int k) { return ((k % stride) + stride) % stride != 0; });
    }
    labels = decade_labels(ks);
    for (int k : ks) values.push_back(std::pow(10.0, k));
  } else {
    const double step = nice_step(L.vmax - L.vmin, max_labels - 1);
    values = ticks_in(L.vmin, L.vmax, step);
    for (double v : values) labels.emplace_back(tick_label(v, step), "");
  }
  if (values.size() < 2) {  // less than one step inside the range: label its ends
    values = {L.vmin, L.vmax};
    labels.clear();
    for (double v : values) {
      char buf[32];
      std::snprintf(buf, sizeof(buf), "%.3g", v);
      labels.emplace_back(buf, "");
    }
  }
  std::vector<Tick> out;
  for (std::size_t i = 0; i < values.size(); ++i)
    out.push_back(tick(values[i], L.colorbar_row(values[i]), labels[i].first, labels[i].second));
  return out;
}

int max_label_width(const std::vector<Tick>& ticks, int scale) {
  int w = 0;
  for (const auto& t : ticks) w = std::max(w, label_width(t.label, t.sup, scale));
  return w;
}

}  // namespace

Rect HeatmapLayout::cell_rect(int i, int j, int panel) const {
  const Rect& p = panels.at(static_cast<std::size_t>(panel));
  return {p.x + j * cell_w, p.y + i * cell_h, cell_w, cell_h};
}

double HeatmapLayout::normalize(double v) const {
  if (std::isnan(v)) return v;
  double t;
  if (scale == HeatmapScale::log) {
    const double lv = std::log10(std::max(v, log_floor));
    t = (lv - std::log10(vmin)) / (std::log10(vmax) - std::log10(vmin));
  } else {
    t = (v - vmin) / (vmax - vmin);
  }
  return std::clamp(t, 0.0, 1.0);
}

// The bar's rows map linearly onto colormap entries: bottom row entry 0,
// top row entry 255, so both ends of the range are shown exactly.
int HeatmapLayout::colorbar_row(double v) const {
  const double t = normalize(v);
  return colorbar.y + (colorbar.h - 1) - static_cast<int>(std::lround(t * (colorbar.h - 1)));
}

int HeatmapLayout::colorbar_index(int row) const {
  if (colorbar.h <= 1) return 255;
  const double t = double(colorbar.y + colorbar.h - 1 - row) / (colorbar.h - 1);
  return Colormap::index(t);
}

std::string overlay_label(uint8_t code) {
  switch (code) {
    case kOverlayProtected: return "protected";
    case kOverlayEvicted: return "evicted";
    case kOverlayEvictedNow: return "evicted this step";
    case kOverlayOutsideTopK: return "outside top k";
    default: return "";
  }
}

HeatmapLayout layout_heatmap_grid(std::span<const HeatmapPanel> panels, int rows, int cols, int grid_columns,
                                  const HeatmapOptions& opt) {
  if (panels.empty()) throw Error("heatmap", "panels", "no panels to draw");
  if (rows <= 0 || cols <= 0)
    throw Error("heatmap", "shape", std::to_string(rows) + " x " + std::to_string(cols) + " is empty");
  const std::size_t n = static_cast<std::size_t>(rows) * cols;
  bool overlay_codes[6] = {};
  for (std::size_t p = 0; p < panels.size(); ++p) {
    const std::string field = panels.size() > 1 ? "panel " + std::to_string(p) : std::string();
    if (panels[p].values.size() != n)
      throw Error("heatmap", field.empty() ? "values" : field + " values",
                  "has " + std::to_string(panels[p].values.size()) + " values, " + std::to_string(rows) + " x " +
                      std::to_string(cols) + " expected");
    if (!panels[p].overlay.empty() && panels[p].overlay.size() != n)
      throw Error("heatmap", field.empty() ? "overlay" : field + " overlay",
                  "has " + std::to_string(panels[p].overlay.size()) + " codes, " + std::to_string(n) + " expected");
    for (uint8_t c : panels[p].overlay)
      if (c < 6) overlay_codes[c] = true;
  }
  colormap(opt.colormap);  // throws for an unknown name before any work

  HeatmapLayout L;
  choose_range(panels, opt, L);
  const int s = L.font_scale = std::max(opt.font_scale, 1);
  const int th = text_height(s), gap = 3 * s, margin = 8 * s;
  L.tick_len = 3 * s;
  L.rows = rows;
  L.cols = cols;
  const int npanels = static_cast<int>(panels.size());
  const bool grid = npanels > 1;

  // Cells: square, as large as fits the target; a thin matrix has its short
  // side stretched to a quarter of the target so that it stays readable.
  const int target = opt.target_size > 0 ? opt.target_size : (grid ? 256 : 512);
  const int c = std::max(1, target / std::max(rows, cols));
  L.cell_w = opt.cell_width > 0 ? opt.cell_width : std::max(c, (target / 4 + cols - 1) / cols);
  L.cell_h = opt.cell_height > 0 ? opt.cell_height : std::max(c, (target / 4 + rows - 1) / rows);
  const int pw = cols * L.cell_w, ph = rows * L.cell_h;

  const int gcols = std::clamp(grid_columns > 0 ? grid_columns : int(std::ceil(std::sqrt(double(npanels)))), 1, npanels);
  const int grows = (npanels + gcols - 1) / gcols;
  const bool partial_last_row = npanels % gcols != 0;
  bool any_panel_title = false;
  for (const auto& p : panels) any_panel_title = any_panel_title || !p.title.empty();

  // Ticks along the matrix axes: labels at least a gap apart.
  const int widest_x = text_width(std::to_string(opt.x_first + cols - 1), s);
  L.x_ticks = index_ticks(cols, opt.x_first, L.cell_w, widest_x + 4 * s);
  L.y_ticks = index_ticks(rows, opt.y_first, L.cell_h, th + gap);
  const int ylab_w = max_label_width(L.y_ticks, s);

  // ---- vertical ----
  int y = margin;
  const int title_y = y;
  if (!opt.title.empty()) y += th + 2 * gap;
  const int hgap = 6 * s;
  const int vgap = L.tick_len + (partial_last_row ? gap + th + gap : 4 * s);
  std::vector<int> row_top(grows);
  for (int r = 0; r < grows; ++r) {
    if (any_panel_title) y += th + gap;
    row_top[r] = y;
    y += ph + (r + 1 < grows ? vgap : 0);
  }
  const int block_top = row_top[0], block_bottom = y;
  const int xtick_y = y + L.tick_len + gap;
  y = xtick_y + th;
  int xlabel_y = 0;
  if (!opt.x_label.empty()) {
    y += 2 * gap;
    xlabel_y = y;
    y += th;
  }
  int legend_y = 0;
  std::vector<uint8_t> legend_codes;
  for (uint8_t code : {kOverlayEvicted, kOverlayEvictedNow, kOverlayOutsideTopK, kOverlayProtected})
    if (overlay_codes[code]) legend_codes.push_back(code);
  if (!legend_codes.empty()) {
    y += 3 * gap;
    legend_y = y;
    y += th;
  }
  L.height = y + margin;

  // Colorbar rows span the panel block; ticks need its geometry first.
  const int bar_w = 7 * s;
  if (opt.colorbar) {
    L.colorbar = {0, block_top, bar_w, block_bottom - block_top};
    L.colorbar_ticks = colorbar_ticks(L, 2 * th + gap);
  }
  const int cblab_w = opt.colorbar ? max_label_width(L.colorbar_ticks, s) : 0;

  // ---- horizontal ----
  const int ylabel_w = opt.y_label.empty() ? 0 : th + 2 * gap;
  const int left = ylabel_w + ylab_w + gap + L.tick_len;
  const int block_w = gcols * pw + (gcols - 1) * hgap;
  int right = 0;
  if (opt.colorbar) {
    right = 6 * s + bar_w + L.tick_len + gap + cblab_w;
    if (!opt.value_label.empty()) right += 2 * gap + th;
  }
  int legend_w = 0;
  for (uint8_t code : legend_codes) legend_w += (legend_w ? 8 * s : 0) + th + gap + text_width(overlay_label(code), s);
  const int content_w = std::max({left + block_w + right, legend_w, text_width(opt.title, s) + 2});
  L.width = content_w + 2 * margin;
  const int x0 = margin + (content_w - (left + block_w + right)) / 2;  // centre under a wide title
  const int block_x = x0 + left;

  for (int p = 0; p < npanels; ++p) {
    const int r = p / gcols, cc = p % gcols;
    L.panels.push_back({block_x + cc * (pw + hgap), row_top[r], pw, ph});
  }
  if (opt.colorbar) {
    L.colorbar.x = block_x + block_w + 6 * s;
    for (auto& t : L.colorbar_ticks) t.pos = L.colorbar_row(t.value);
  }

  // ---- text ----
  if (!opt.title.empty()) L.texts.push_back(text_item(opt.title, L.width / 2, title_y, Align::center, false, true));
  for (int p = 0; p < npanels; ++p) {
    const Rect& R = L.panels[p];
    if (!panels[p].title.empty()) L.texts.push_back(text_item(panels[p].title, R.x + R.w / 2, R.y - gap - th, Align::center));
    // Tick labels on the outer panels only: the left column and the lowest
    // panel of each column.
    if (p % gcols == 0)
      for (const auto& t : L.y_ticks)
        L.texts.push_back(text_item(t.label, R.x - L.tick_len - gap, R.y + t.pos - text_ascent(s) / 2, Align::right));
    if (p + gcols >= npanels)
      for (const auto& t : L.x_ticks) L.texts.push_back(text_item(t.label, R.x + t.pos, R.bottom() + L.tick_len + gap, Align::center));
  }
  if (!opt.x_label.empty()) L.texts.push_back(text_item(opt.x_label, block_x + block_w / 2, xlabel_y, Align::center));
  if (!opt.y_label.empty()) L.texts.push_back(text_item(opt.y_label, x0, (block_top + block_bottom) / 2, Align::left, true));
  if (opt.colorbar) {
    const int lx = L.colorbar.right() + L.tick_len + gap;
    for (const auto& t : L.colorbar_ticks)
      L.texts.push_back(text_item(t.label, lx, t.pos - text_ascent(s) / 2, Align::left, false, false, t.sup));
    if (!opt.value_label.empty())
      L.texts.push_back(text_item(opt.value_label, lx + cblab_w + 2 * gap, L.colorbar.y + L.colorbar.h / 2, Align::left, true));
  }
  int lx = block_x + block_w / 2 - legend_w / 2;
  lx = std::clamp(lx, margin, std::max(margin, L.width - margin - legend_w));
  for (uint8_t code : legend_codes) {
    L.legend.push_back({{lx, legend_y, th, th}, code});
    lx += th + gap;
    L.texts.push_back(text_item(overlay_label(code), lx, legend_y, Align::left));
    lx += text_width(overlay_label(code), s) + 8 * s;
  }
  return L;
}

HeatmapLayout layout_heatmap(std::span<const float> values, int rows, int cols, const HeatmapOptions& opt,
                             std::span<const uint8_t> overlay) {
  const HeatmapPanel panel{values, overlay, ""};
  return layout_heatmap_grid(std::span(&panel, 1), rows, cols, 1, opt);
}

}  // namespace kvscope
