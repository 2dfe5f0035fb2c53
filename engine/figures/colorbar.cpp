#include "figures/colorbar.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "figures/text.h"
#include "figures/ticks.h"
#include "figures/plot_style.h"

namespace kvscope {
namespace {

constexpr double kTickLen = 3, kGap = 2.5, kCaptionGap = 6;
const TextStyle kCaptionText{.size = 8.5};

std::vector<ColorbarTick> choose_ticks(const ColorScale& s, double y, double height) {
  const int max_ticks = std::max(2, static_cast<int>(height / 32));
  std::vector<ColorbarTick> out;
  auto at = [&](double v) { return y + height * (1 - s.normalize(v)); };
  if (s.kind == ScaleKind::log) {
    for (int k : decades_in(s.lo, s.hi, max_ticks))
      out.push_back({std::pow(10.0, k), at(std::pow(10.0, k)), decade_label(k)});
  } else {
    const double step = nice_step(s.hi - s.lo, max_ticks);
    for (double v : ticks_in(s.lo, s.hi, step)) out.push_back({v, at(v), tick_label(v, step)});
  }
  if (out.size() < 2) {  // less than one step inside the range: label its ends
    out.clear();
    for (double v : {s.lo, s.hi}) {
      char buf[32];
      std::snprintf(buf, sizeof(buf), "%.3g", v);
      out.push_back({v, at(v), buf});
    }
  }
  return out;
}

}  // namespace

std::string colorbar_caption(const std::string& value_name, ScaleKind kind) {
  return value_name + (kind == ScaleKind::log ? " (log scale)" : " (linear scale)");
}

Colorbar layout_colorbar(double x, double y, double height, const ColorScale& scale, const std::string& caption) {
  Colorbar c;
  c.bar = {x, y, kColorbarWidth, height};
  c.scale = scale;
  c.caption = caption;
  c.ticks = choose_ticks(scale, y, height);
  double label_w = 0;
  for (const auto& t : c.ticks) label_w = std::max(label_w, measure_text(t.label, kTickLabelText).width);
  c.width = kColorbarWidth + kTickLen + kGap + label_w;
  if (!caption.empty()) c.width += kCaptionGap + measure_text(caption, kCaptionText).height;
  return c;
}

double colorbar_width(double height, const ColorScale& scale, const std::string& caption) {
  return layout_colorbar(0, 0, height, scale, caption).width;
}

void paint_colormap_ramp(cairo_t* cr, const Box& box, const Colormap& cmap, bool vertical) {
  cairo_surface_t* img = cairo_image_surface_create(CAIRO_FORMAT_RGB24, vertical ? 1 : 256, vertical ? 256 : 1);
  cairo_surface_flush(img);
  unsigned char* data = cairo_image_surface_get_data(img);
  const int stride = cairo_image_surface_get_stride(img);
  for (int i = 0; i < 256; ++i) {
    const Rgb c = cmap.table[vertical ? 255 - i : i];  // vertical: the top is the high end
    auto* px = reinterpret_cast<uint32_t*>(data + (vertical ? std::size_t(i) * stride : 0)) + (vertical ? 0 : i);
    *px = 0xff000000u | uint32_t(c.r) << 16 | uint32_t(c.g) << 8 | c.b;
  }
  cairo_surface_mark_dirty(img);
  cairo_save(cr);
  cairo_rectangle(cr, box.x, box.y, box.w, box.h);
  cairo_clip(cr);
  cairo_translate(cr, box.x, box.y);
  cairo_scale(cr, box.w / (vertical ? 1 : 256), box.h / (vertical ? 256 : 1));
  cairo_set_source_surface(cr, img, 0, 0);
  cairo_pattern_set_filter(cairo_get_source(cr), CAIRO_FILTER_NEAREST);
  cairo_paint(cr);
  cairo_restore(cr);
  cairo_surface_destroy(img);
}

void draw_colorbar(cairo_t* cr, const Colorbar& c, const Colormap& cmap) {
  paint_colormap_ramp(cr, c.bar, cmap, true);
  stroke_box(cr, c.bar, kFrameColor, 0.6);
  double label_w = 0;
  for (const auto& t : c.ticks) {
    line(cr, c.bar.right(), t.y, c.bar.right() + kTickLen, t.y, kFrameColor, 0.6);
    draw_text(cr, t.label, c.bar.right() + kTickLen + kGap, t.y, kTickLabelText, HAlign::left, VAlign::middle);
    label_w = std::max(label_w, measure_text(t.label, kTickLabelText).width);
  }
  if (!c.caption.empty()) {
    const double x = c.bar.right() + kTickLen + kGap + label_w + kCaptionGap;
    draw_text(cr, c.caption, x, c.bar.y + c.bar.h / 2, kCaptionText, HAlign::center, VAlign::top, 90);
  }
}

}  // namespace kvscope
