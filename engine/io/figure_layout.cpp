#include "io/figure_layout.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace kvscope {

double nice_step(double span, int max_ticks) {
  if (!(span > 0) || !std::isfinite(span)) return 1;
  max_ticks = std::max(max_ticks, 1);
  const double raw = span / max_ticks;
  double p = std::pow(10.0, std::floor(std::log10(raw)));
  for (;;) {
    for (double m : {1.0, 2.0, 5.0})
      if (m * p >= raw * (1 - 1e-9)) return m * p;
    p *= 10;
  }
}

std::vector<double> ticks_in(double lo, double hi, double step) {
  std::vector<double> out;
  if (!(step > 0) || !(hi >= lo)) return out;
  const double eps = step * 1e-6;
  for (double k = std::ceil((lo - eps) / step); k * step <= hi + eps && out.size() < 1000; k += 1) {
    const double v = k * step;
    out.push_back(std::abs(v) < eps ? 0.0 : v);  // never "-0"
  }
  return out;
}

std::string tick_label(double value, double step) {
  char buf[48];
  const double mag = std::max(std::abs(value), step);
  if (mag >= 1e6 || step < 1e-5) {
    std::snprintf(buf, sizeof(buf), "%.3g", value);
  } else {
    const int decimals = std::max(0, static_cast<int>(-std::floor(std::log10(step) + 1e-9)));
    std::snprintf(buf, sizeof(buf), "%.*f", decimals, std::abs(value) < step * 1e-6 ? 0.0 : value);
  }
  return buf;
}

std::vector<std::pair<std::string, std::string>> decade_labels(const std::vector<int>& exponents) {
  bool plain = true;
  for (int k : exponents) plain = plain && std::abs(k) <= 3;
  std::vector<std::pair<std::string, std::string>> out;
  for (int k : exponents) {
    if (plain) {
      char buf[16];
      std::snprintf(buf, sizeof(buf), "%.*f", std::max(0, -k), std::pow(10.0, k));
      out.emplace_back(buf, "");
    } else {
      out.emplace_back("10", std::to_string(k));
    }
  }
  return out;
}

int sup_scale(int scale) { return std::max(1, scale - 1); }

int label_width(const std::string& text, const std::string& sup, int scale) {
  return text_width(text, scale) + (sup.empty() ? 0 : scale + text_width(sup, sup_scale(scale)));
}

Rect text_item_box(const TextItem& t, int scale) {
  const int w = label_width(t.text, t.sup, scale) + (t.bold ? 1 : 0), h = text_height(scale);
  if (t.vertical) return {t.x, t.y - w / 2, h, w};
  int x = t.x;
  if (t.align == TextItem::Align::center) x -= w / 2;
  if (t.align == TextItem::Align::right) x -= w;
  const int raise = t.sup.empty() ? 0 : scale;
  return {x, t.y - raise, w, h + raise};
}

void draw_text_items(Image& img, const std::vector<TextItem>& items, Rgb color, int scale) {
  for (const auto& t : items) {
    const Rect box = text_item_box(t, scale);
    if (t.vertical) {
      draw_text_up(img, box.x, box.y, t.text, color, scale);
      continue;
    }
    const int x = box.x + draw_text(img, box.x, t.y, t.text, color, scale, t.bold);
    if (!t.sup.empty()) draw_text(img, x + scale, t.y - scale, t.sup, color, sup_scale(scale));
  }
}

}  // namespace kvscope
