#include "io/figure_settings.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "common/error.h"

namespace kvscope {
namespace {

constexpr FigureFormat kFormats[] = {FigureFormat::png, FigureFormat::svg, FigureFormat::pdf};

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

std::optional<FigureFormat> parse_figure_format(std::string_view name) {
  for (FigureFormat f : kFormats)
    if (name == figure_format_name(f)) return f;
  return std::nullopt;
}

const char* figure_format_name(FigureFormat f) {
  switch (f) {
    case FigureFormat::png: return "png";
    case FigureFormat::svg: return "svg";
    case FigureFormat::pdf: return "pdf";
  }
  return "?";
}

std::string check_figure_formats(const std::vector<std::string>& names) {
  if (names.empty()) return "no format given (known: png, svg, pdf)";
  for (const auto& n : names)
    if (!parse_figure_format(n)) return "unknown format '" + n + "' (known: png, svg, pdf)";
  return "";
}

std::vector<FigureFormat> parse_figure_formats(const std::vector<std::string>& names) {
  if (const std::string bad = check_figure_formats(names); !bad.empty()) throw Error("figure", "formats", bad);
  std::vector<FigureFormat> out;
  for (const auto& n : names) {
    const FigureFormat f = *parse_figure_format(n);
    bool seen = false;
    for (FigureFormat g : out) seen = seen || g == f;
    if (!seen) out.push_back(f);
  }
  return out;
}

std::string check_dpi(double dpi) {
  if (std::isfinite(dpi) && dpi >= kMinDpi && dpi <= kMaxDpi) return "";
  char buf[128];
  std::snprintf(buf, sizeof(buf), "must be between %g and %g, got %g", kMinDpi, kMaxDpi, dpi);
  return buf;
}

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

std::string check_evicted_style(std::string_view name) {
  return name == "outline" || name == "strip" || name == "none"
             ? ""
             : "must be outline, strip or none, got '" + std::string(name) + "'";
}

EvictedStyle parse_evicted_style(std::string_view name) {
  return name == "strip" ? EvictedStyle::strip : name == "none" ? EvictedStyle::none : EvictedStyle::outline;
}

const char* evicted_style_name(EvictedStyle s) {
  return s == EvictedStyle::strip ? "strip" : s == EvictedStyle::none ? "none" : "outline";
}

}  // namespace kvscope
