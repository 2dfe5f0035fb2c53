#include "figures/color_scale.h"

#include <algorithm>
#include <cmath>

#include "common/error.h"

namespace kvscope {
void ValueExtent::add(std::span<const float> values) {
  for (float f : values) {
    if (!std::isfinite(f)) continue;
    const double v = f;
    min = std::min(min, v);
    max = std::max(max, v);
    if (v > 0) min_positive = std::min(min_positive, v);
  }
}

void ValueExtent::add(const ValueExtent& o) {
  min = std::min(min, o.min);
  max = std::max(max, o.max);
  min_positive = std::min(min_positive, o.min_positive);
}

double ColorScale::normalize(double v) const {
  if (std::isnan(v)) return v;
  double t;
  if (kind == ScaleKind::log) {
    if (!(v > lo)) return 0;
    t = (std::log10(v) - std::log10(lo)) / (std::log10(hi) - std::log10(lo));
  } else {
    t = (v - lo) / (hi - lo);
  }
  return std::clamp(t, 0.0, 1.0);
}

double ColorScale::value_at(double t) const {
  if (kind == ScaleKind::log) return std::pow(10.0, std::log10(lo) + t * (std::log10(hi) - std::log10(lo)));
  return lo + t * (hi - lo);
}

ColorScale resolve_color_scale(ScaleKind kind, const RangeSpec& spec, const ValueExtent& own,
                               const ValueExtent& shared) {
  ColorScale s;
  s.kind = kind;
  if (spec.kind == RangeSpec::Kind::fixed) {
    if (!(spec.lo < spec.hi) || (kind == ScaleKind::log && !(spec.lo > 0)))
      throw Error("figure", "range", "'" + spec.str() + "' is not a range for a " +
                                         (kind == ScaleKind::log ? "log" : "linear") + " scale");
    s.lo = spec.lo;
    s.hi = spec.hi;
    return s;
  }
  const ValueExtent& e = spec.kind == RangeSpec::Kind::shared && !shared.empty() ? shared : own;
  if (kind == ScaleKind::log) {
    const double hi = e.max > 0 ? e.max : 1;
    double lo = std::isfinite(e.min_positive) ? e.min_positive : hi / 10;
    lo = std::max(lo, hi * std::pow(10.0, -kLogDecades));
    if (!(lo < hi)) lo = hi / 10;  // one value: a decade below it
    s.lo = lo;
    s.hi = hi;
    return s;
  }
  if (e.empty()) return s;  // nothing finite: [0, 1]
  s.lo = std::min(0.0, e.min);
  s.hi = e.max;
  if (!(s.lo < s.hi)) s.hi = s.lo + (s.lo == 0 ? 1 : std::abs(s.lo));  // all zero, or one negative value
  return s;
}

ColorScale diverging_color_scale(double magnitude) {
  const double m = magnitude > 0 ? magnitude : 1e-6;  // also for NaN
  return {ScaleKind::linear, -m, m};
}

double extent_magnitude(const ValueExtent& e) { return e.empty() ? 0 : std::max(std::fabs(e.min), std::fabs(e.max)); }

}  // namespace kvscope
