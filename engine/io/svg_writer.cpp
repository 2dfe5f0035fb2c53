#include "io/svg_writer.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "common/error.h"
#include "io/atomic_file.h"
#include "io/colormap.h"

namespace kvscope {
namespace {

constexpr const char* kFrame = "#404040";
constexpr const char* kGrid = "#e8e8e8";
constexpr const char* kText = "#141414";

std::string hex(Rgb c) {
  char buf[8];
  std::snprintf(buf, sizeof(buf), "#%02x%02x%02x", c.r, c.g, c.b);
  return buf;
}

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.2f", v);
  std::string s = buf;
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s == "-0" ? "0" : s;
}

std::string escape(std::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string rect(double x, double y, double w, double h, const std::string& fill, const std::string& extra = "") {
  return "<rect x=\"" + num(x) + "\" y=\"" + num(y) + "\" width=\"" + num(w) + "\" height=\"" + num(h) +
         "\" fill=\"" + fill + "\"" + extra + "/>\n";
}

// A one-pixel frame drawn just outside `r`, as the PNG does.
std::string frame(Rect r) {
  return rect(r.x - 0.5, r.y - 0.5, r.w + 1, r.h + 1, "none", std::string(" stroke=\"") + kFrame + "\"");
}

std::string header(int w, int h, int font_scale) {
  // Font size chosen so that capitals are as tall as the bitmap font's
  // (7 rows per scale unit; sans-serif caps are ~0.72 em).
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" +
         std::to_string(w) + "\" height=\"" + std::to_string(h) + "\" viewBox=\"0 0 " + std::to_string(w) + " " +
         std::to_string(h) + "\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\" font-size=\"" +
         num(9.7 * font_scale) + "\">\n" + rect(0, 0, w, h, "#ffffff");
}

std::string texts(const std::vector<TextItem>& items, int scale) {
  std::string out = std::string("<g fill=\"") + kText + "\">\n";
  const int asc = text_ascent(scale);
  for (const auto& t : items) {
    if (t.vertical) {
      out += "<text transform=\"translate(" + num(t.x + asc) + " " + num(t.y) +
             ") rotate(-90)\" text-anchor=\"middle\">" + escape(t.text) + "</text>\n";
      continue;
    }
    const char* anchor = t.align == TextItem::Align::left ? "start" : t.align == TextItem::Align::center ? "middle" : "end";
    out += "<text x=\"" + num(t.x) + "\" y=\"" + num(t.y + asc) + "\" text-anchor=\"" + anchor + "\"" +
           (t.bold ? " font-weight=\"bold\"" : "") + ">" + escape(t.text);
    // Absolute sizes: some renderers mishandle percentages on <tspan>.
    if (!t.sup.empty())
      out += "<tspan dy=\"" + num(-4.0 * scale) + "\" font-size=\"" + num(6.8 * scale) + "\">" + escape(t.sup) + "</tspan>";
    out += "</text>\n";
  }
  return out + "</g>\n";
}

// ---- heatmap ----------------------------------------------------------------

// Hatch patterns: a white and a black line side by side read on any colour.
std::string hatch_defs(int period) {
  auto pattern = [&](const char* id, bool cross) {
    const std::string p = std::to_string(period);
    std::string s = std::string("<pattern id=\"") + id + "\" patternUnits=\"userSpaceOnUse\" width=\"" + p +
                    "\" height=\"" + p + "\">\n";
    for (int flip = 0; flip < (cross ? 2 : 1); ++flip) {
      const std::string d = flip ? "M0 0L" + p + " " + p : "M0 " + p + "L" + p + " 0";
      s += "<path d=\"" + d + "\" stroke=\"#ffffff\" stroke-opacity=\"0.8\" stroke-width=\"1\"/>\n";
      s += "<path d=\"" + d + "\" stroke=\"#000000\" stroke-opacity=\"0.6\" stroke-width=\"0.7\" transform=\"translate(1 0)\"/>\n";
    }
    return s + "</pattern>\n";
  };
  return "<defs>\n" + pattern("evicted", false) + pattern("evicted-now", true) + "</defs>\n";
}

std::string evicted_fill(uint8_t code, EvictedStyle style) {
  if (style == EvictedStyle::dim)
    return code == kOverlayEvictedNow ? "url(#evicted)" : "#ffffff";
  return code == kOverlayEvictedNow ? "url(#evicted-now)" : "url(#evicted)";
}

std::string heatmap_panel(const HeatmapLayout& L, int p, const HeatmapPanel& panel, const Colormap& cmap,
                          const HeatmapOptions& opt) {
  std::string out = "<g shape-rendering=\"crispEdges\">\n";
  auto color_of = [&](int i, int j) {
    const double t = L.normalize(panel.values[std::size_t(i) * L.cols + j]);
    return std::isnan(t) ? opt.nan_color : cmap.at(t);
  };
  // Runs of equal colour along each row keep the file small.
  for (int i = 0; i < L.rows; ++i)
    for (int j = 0; j < L.cols;) {
      const Rgb c = color_of(i, j);
      int k = j + 1;
      while (k < L.cols && color_of(i, k) == c) ++k;
      const Rect r = L.cell_rect(i, j, p);
      out += rect(r.x, r.y, (k - j) * L.cell_w, r.h, hex(c));
      j = k;
    }
  if (!panel.overlay.empty()) {
    const auto code = [&](int i, int j) { return panel.overlay[std::size_t(i) * L.cols + j]; };
    for (int i = 0; i < L.rows; ++i)
      for (int j = 0; j < L.cols;) {
        const uint8_t c = code(i, j);
        int k = j + 1;
        while (k < L.cols && code(i, k) == c) ++k;
        if (c == kOverlayEvicted || c == kOverlayEvictedNow) {
          const Rect r = L.cell_rect(i, j, p);
          if (opt.evicted_style == EvictedStyle::dim)
            out += rect(r.x, r.y, (k - j) * L.cell_w, r.h, "#ffffff", " fill-opacity=\"0.65\"");
          if (opt.evicted_style == EvictedStyle::hatch || c == kOverlayEvictedNow)
            out += rect(r.x, r.y, (k - j) * L.cell_w, r.h, evicted_fill(c, opt.evicted_style));
        }
        j = k;
      }
    // Protected regions: outline edges facing unprotected cells (as the PNG).
    const int t = std::clamp(std::min(L.cell_w, L.cell_h) / 4, 1, L.font_scale);
    const std::string pc = hex(opt.protected_color);
    auto prot = [&](int i, int j) { return i >= 0 && j >= 0 && i < L.rows && j < L.cols && code(i, j) == kOverlayProtected; };
    for (int i = 0; i < L.rows; ++i)
      for (int j = 0; j < L.cols; ++j) {
        if (!prot(i, j)) continue;
        const Rect c = L.cell_rect(i, j, p);
        if (!prot(i - 1, j)) out += rect(c.x, c.y, c.w, t, pc);
        if (!prot(i + 1, j)) out += rect(c.x, c.bottom() - t, c.w, t, pc);
        if (!prot(i, j - 1)) out += rect(c.x, c.y, t, c.h, pc);
        if (!prot(i, j + 1)) out += rect(c.right() - t, c.y, t, c.h, pc);
      }
  }
  const Rect& R = L.panels[p];
  out += frame(R);
  for (const auto& tk : L.x_ticks) out += rect(R.x + tk.pos, R.bottom() + 1, 1, L.tick_len, kFrame);
  for (const auto& tk : L.y_ticks) out += rect(R.x - 1 - L.tick_len, R.y + tk.pos, L.tick_len, 1, kFrame);
  return out + "</g>\n";
}

std::string heatmap_document(std::span<const HeatmapPanel> panels, const HeatmapLayout& L, const HeatmapOptions& opt) {
  const Colormap& cmap = colormap(opt.colormap);
  std::string out = header(L.width, L.height, L.font_scale) + hatch_defs(std::max(4, 3 * L.font_scale));
  for (int p = 0; p < int(panels.size()); ++p) out += heatmap_panel(L, p, panels[p], cmap, opt);
  if (!L.colorbar.empty()) {
    const Rect& B = L.colorbar;
    out += "<g shape-rendering=\"crispEdges\">\n";
    for (int y = B.y; y < B.bottom();) {
      const int idx = L.colorbar_index(y);
      int k = y + 1;
      while (k < B.bottom() && L.colorbar_index(k) == idx) ++k;
      out += rect(B.x, y, B.w, k - y, hex(cmap.table[idx]));
      y = k;
    }
    out += frame(B);
    for (const auto& t : L.colorbar_ticks) out += rect(B.right() + 1, t.pos, L.tick_len, 1, kFrame);
    out += "</g>\n";
  }
  for (const auto& e : L.legend) {
    const Rect& r = e.swatch;
    out += rect(r.x, r.y, r.w, r.h, hex(cmap.at(0.5)));
    if (e.code == kOverlayProtected) {
      const int t = std::clamp(std::min(L.cell_w, L.cell_h) / 4, 1, L.font_scale);
      out += rect(r.x + t / 2.0, r.y + t / 2.0, r.w - t, r.h - t, "none",
                  " stroke=\"" + hex(opt.protected_color) + "\" stroke-width=\"" + std::to_string(t) + "\"");
    } else {
      if (opt.evicted_style == EvictedStyle::dim) out += rect(r.x, r.y, r.w, r.h, "#ffffff", " fill-opacity=\"0.65\"");
      if (opt.evicted_style == EvictedStyle::hatch || e.code == kOverlayEvictedNow)
        out += rect(r.x, r.y, r.w, r.h, evicted_fill(e.code, opt.evicted_style));
    }
    out += frame(r);
  }
  return out + texts(L.texts, L.font_scale) + "</svg>\n";
}

void check_svg_size(int rows, int cols) {
  if (static_cast<std::size_t>(std::max(rows, 0)) * std::max(cols, 0) > kSvgMaxHeatmapCells)
    throw Error("heatmap svg", "size",
                std::to_string(rows) + " x " + std::to_string(cols) + " cells is too many for SVG (at most " +
                    std::to_string(kSvgMaxHeatmapCells) + "); export the heatmap as PNG instead");
}

// ---- line chart ---------------------------------------------------------------

std::string marker_svg(Marker m, double cx, double cy, double r, const std::string& color) {
  auto polygon = [&](std::initializer_list<std::pair<double, double>> pts) {
    std::string s = "<polygon points=\"";
    for (auto [x, y] : pts) s += num(x) + "," + num(y) + " ";
    s.back() = '"';
    return s + " fill=\"" + color + "\"/>\n";
  };
  switch (m) {
    case Marker::circle:
      return "<circle cx=\"" + num(cx) + "\" cy=\"" + num(cy) + "\" r=\"" + num(r) + "\" fill=\"" + color + "\"/>\n";
    case Marker::square: {
      const double h = r * 0.88;
      return rect(cx - h, cy - h, 2 * h, 2 * h, color);
    }
    case Marker::triangle: {
      const double h = r * 1.25;
      return polygon({{cx, cy - h}, {cx + h * 0.866, cy + h * 0.5}, {cx - h * 0.866, cy + h * 0.5}});
    }
    case Marker::diamond: {
      const double h = r * 1.25;
      return polygon({{cx, cy - h}, {cx + h, cy}, {cx, cy + h}, {cx - h, cy}});
    }
    case Marker::none: break;
  }
  return "";
}

}  // namespace

std::string line_chart_svg(std::span<const LineSeries> series, const LineChartOptions& opt) {
  const LineChartLayout L = layout_line_chart(series, opt);
  const Rect& P = L.plot;
  std::string out = header(L.width, L.height, L.font_scale);
  out += "<defs><clipPath id=\"plot\">" + rect(P.x + 1, P.y + 1, P.w - 2, P.h - 2, "#000") + "</clipPath></defs>\n";
  out += "<g shape-rendering=\"crispEdges\">\n";
  for (const auto& t : L.x_ticks) out += rect(t.pos, P.y + 1, 1, P.h - 2, kGrid);
  for (const auto& t : L.y_ticks) out += rect(P.x + 1, t.pos, P.w - 2, 1, kGrid);
  out += "</g>\n<g clip-path=\"url(#plot)\">\n";
  for (std::size_t si = 0; si < series.size(); ++si) {
    const auto& s = series[si];
    const std::string color = hex(series_color(si));
    std::string points;
    auto flush = [&] {
      if (!points.empty())
        out += "<polyline fill=\"none\" stroke=\"" + color + "\" stroke-width=\"" + num(L.line_width) +
               "\" stroke-linejoin=\"round\" stroke-linecap=\"round\" points=\"" + points + "\"/>\n";
      points.clear();
    };
    for (std::size_t i = 0; i < s.x.size(); ++i) {
      const double x = L.x_to_px(s.x[i]), y = L.y_to_px(s.y[i]);
      if (!std::isfinite(x) || !std::isfinite(y)) {
        flush();
        continue;
      }
      if (!points.empty()) points += ' ';
      points += num(x);
      points += ',';
      points += num(y);
    }
    flush();
    for (std::size_t i = 0; i < s.x.size(); ++i)
      if (L.visible(s.x[i], s.y[i]))
        out += marker_svg(series_marker(si), L.x_to_px(s.x[i]), L.y_to_px(s.y[i]), L.marker_radius, color);
  }
  out += "</g>\n<g shape-rendering=\"crispEdges\">\n" + frame({P.x + 1, P.y + 1, P.w - 2, P.h - 2});
  for (const auto& t : L.x_ticks) out += rect(t.pos, P.bottom(), 1, L.tick_len, kFrame);
  for (const auto& t : L.y_ticks) out += rect(P.x - L.tick_len, t.pos, L.tick_len, 1, kFrame);
  for (const auto& t : L.y_minor_ticks) out += rect(P.x - L.tick_len / 2, t.pos, L.tick_len / 2, 1, kFrame);
  out += "</g>\n";
  for (const auto& e : L.legend) {
    const std::string color = hex(series_color(e.series));
    out += "<line x1=\"" + num(e.x - L.swatch_half) + "\" y1=\"" + num(e.y + 0.5) + "\" x2=\"" +
           num(e.x + L.swatch_half) + "\" y2=\"" + num(e.y + 0.5) + "\" stroke=\"" + color + "\" stroke-width=\"" +
           num(L.line_width) + "\"/>\n";
    out += marker_svg(series_marker(e.series), e.x + 0.5, e.y + 0.5, L.marker_radius, color);
  }
  return out + texts(L.texts, L.font_scale) + "</svg>\n";
}

std::string heatmap_grid_svg(std::span<const HeatmapPanel> panels, int rows, int cols, int grid_columns,
                             const HeatmapOptions& opt) {
  check_svg_size(rows, cols);
  return heatmap_document(panels, layout_heatmap_grid(panels, rows, cols, grid_columns, opt), opt);
}

std::string heatmap_svg(std::span<const float> values, int rows, int cols, const HeatmapOptions& opt,
                        std::span<const uint8_t> overlay) {
  const HeatmapPanel panel{values, overlay, ""};
  return heatmap_grid_svg(std::span(&panel, 1), rows, cols, 1, opt);
}

void write_line_chart_svg(const std::filesystem::path& path, std::span<const LineSeries> series,
                          const LineChartOptions& opt) {
  std::string svg;
  try {
    svg = line_chart_svg(series, opt);
  } catch (const Error& e) {
    throw Error(path.string(), "", e.what());
  }
  write_text_file(path, svg);
}

void write_heatmap_svg(const std::filesystem::path& path, std::span<const float> values, int rows, int cols,
                       const HeatmapOptions& opt, std::span<const uint8_t> overlay) {
  std::string svg;
  try {
    svg = heatmap_svg(values, rows, cols, opt, overlay);
  } catch (const Error& e) {
    throw Error(path.string(), "", e.what());
  }
  write_text_file(path, svg);
}

}  // namespace kvscope
