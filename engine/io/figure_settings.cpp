#include "io/figure_settings.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <utility>

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

std::string size_error(std::string_view text, FigureSizeSpec* out) {
  FigureSizeSpec r;
  if (text == "natural" || text == "column" || text == "page") {
    r.kind = text == "natural"  ? FigureSizeSpec::Kind::natural
             : text == "column" ? FigureSizeSpec::Kind::column
                                : FigureSizeSpec::Kind::page;
    if (r.kind != FigureSizeSpec::Kind::natural)
      r.width = 72 * (r.kind == FigureSizeSpec::Kind::column ? kColumnWidthIn : kPageWidthIn);
    if (out) *out = r;
    return "";
  }
  const std::string usage = "expected natural, column, page or WxH with a unit (3.3x2.5in, 240x180pt, 8x6cm), got '" +
                            std::string(text) + "'";
  static constexpr std::pair<const char*, double> kUnits[] = {
      {"in", 72}, {"pt", 1}, {"cm", 72 / 2.54}, {"mm", 72 / 25.4}};
  double per = 0;
  std::string_view body;
  for (const auto& [unit, points] : kUnits) {
    const std::string_view u(unit);
    if (text.size() > u.size() && text.substr(text.size() - u.size()) == u) {
      per = points;
      body = text.substr(0, text.size() - u.size());
    }
  }
  const auto x = body.find('x');
  double w = 0, h = 0;
  if (per == 0 || x == std::string_view::npos || !parse_number(body.substr(0, x), w) ||
      !parse_number(body.substr(x + 1), h))
    return usage;
  r.kind = FigureSizeSpec::Kind::exact;
  r.width = w * per, r.height = h * per;
  for (double side : {r.width, r.height})
    if (!(side >= kMinFigureSidePt && side <= kMaxFigureSidePt)) {
      char buf[160];
      std::snprintf(buf, sizeof(buf), "each side must be between 1 in and 40 in (%g and %g pt), got '%s'",
                    kMinFigureSidePt, kMaxFigureSidePt, std::string(text).c_str());
      return buf;
    }
  if (out) *out = r;
  return "";
}

std::string positions_error(std::string_view text, PositionRange* out) {
  if (text == "all") {
    if (out) *out = {};
    return "";
  }
  const auto colon = text.find(':');
  double a = 0, b = 0;
  if (colon == std::string_view::npos || !parse_number(text.substr(0, colon), a) ||
      !parse_number(text.substr(colon + 1), b) || a != std::floor(a) || b != std::floor(b) || a < 0 || b > 1e9)
    return "expected A:B, two positions from 0 (e.g. 0:63), or all, got '" + std::string(text) + "'";
  if (a > b) return "A must not be above B, got '" + std::string(text) + "'";
  if (out) *out = {static_cast<int>(a), static_cast<int>(b)};
  return "";
}

}  // namespace

FigureSizeSpec FigureSizeSpec::parse(std::string_view text, const std::string& field) {
  FigureSizeSpec r;
  if (const std::string bad = size_error(text, &r); !bad.empty()) throw Error(field, "", bad);
  return r;
}

std::string FigureSizeSpec::str() const {
  if (kind == Kind::natural) return "natural";
  if (kind == Kind::column) return "column";
  if (kind == Kind::page) return "page";
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%gx%gpt", width, height);
  return buf;
}

std::string check_figure_size(std::string_view text) { return size_error(text, nullptr); }

PositionRange PositionRange::parse(std::string_view text, const std::string& field) {
  PositionRange r;
  if (const std::string bad = positions_error(text, &r); !bad.empty()) throw Error(field, "", bad);
  return r;
}

std::string PositionRange::str() const { return all() ? "all" : std::to_string(first) + ":" + std::to_string(last); }

std::string check_positions(std::string_view text) { return positions_error(text, nullptr); }

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
