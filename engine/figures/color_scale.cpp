#include "figures/color_scale.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "common/error.h"

namespace kvscope {
namespace {

bool parse_number(std::string_view s, double& out) {
  const std::string str(s);
  if (str.empty()) return false;
  char* end = nullptr;
  out = std::strtod(str.c_str(), &end);
  return end == str.c_str() + str.size() && std::isfinite(out);
}

std::string range_error(std::string_view text) {
  if (text == "auto" || text == "shared") return "";
  const auto colon = text.find(':');
  double lo = 0, hi = 0;
  if (colon == std::string_view::npos || !parse_number(text.substr(0, colon), lo) ||
      !parse_number(text.substr(colon + 1), hi))
    return "expected auto, shared or LO:HI (e.g. 0:0.5), got '" + std::string(text) + "'";
  if (!(lo < hi)) return "LO must be below HI, got '" + std::string(text) + "'";
  return "";
}

}  // namespace

std::string check_scale_name(std::string_view name) {
  return name == "linear" || name == "log" ? "" : "must be linear or log, got '" + std::string(name) + "'";
}

ScaleKind parse_scale(std::string_view name) { return name == "log" ? ScaleKind::log : ScaleKind::linear; }

RangeSpec RangeSpec::parse(std::string_view text, const std::string& field) {
  if (const std::string bad = range_error(text); !bad.empty()) throw Error(field, "", bad);
  RangeSpec r;
  if (text == "auto") r.kind = Kind::automatic;
  else if (text == "shared") r.kind = Kind::shared;
  else {
    const auto colon = text.find(':');
    r.kind = Kind::fixed;
    parse_number(text.substr(0, colon), r.lo);
    parse_number(text.substr(colon + 1), r.hi);
  }
  return r;
}

std::string RangeSpec::str() const {
  if (kind == Kind::automatic) return "auto";
  if (kind == Kind::shared) return "shared";
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%g:%g", lo, hi);
  return buf;
}

std::string check_range(std::string_view text, ScaleKind scale) {
  if (std::string bad = range_error(text); !bad.empty()) return bad;
  const RangeSpec r = RangeSpec::parse(text, "");
  if (r.kind == RangeSpec::Kind::fixed && scale == ScaleKind::log && !(r.lo > 0))
    return "a log scale needs LO > 0, got '" + std::string(text) + "'";
  return "";
}

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

}  // namespace kvscope
