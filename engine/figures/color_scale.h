// How values become colours: a linear or log scale over a range, and where
// the range comes from — each figure's own data (auto), one range over every
// figure of an export or a sweep (shared), or fixed ends (LO:HI). A shared
// range is what makes two figures comparable: the same value has the same
// colour in both.
#pragma once

#include <limits>
#include <span>
#include <string>
#include <string_view>

#include "io/figure_settings.h"  // ScaleKind, RangeSpec and their checks

namespace kvscope {

// What the data spans: its finite minimum and maximum and its smallest
// positive value (for log scales).
struct ValueExtent {
  double min = std::numeric_limits<double>::infinity();
  double max = -std::numeric_limits<double>::infinity();
  double min_positive = std::numeric_limits<double>::infinity();
  void add(std::span<const float> values);
  void add(const ValueExtent& other);
  bool empty() const { return !(min <= max); }
};

// Automatic ranges: linear [min(0, data min), data max] (attention and most
// statistics are >= 0, so 0 anchors the bottom); log [max(smallest positive,
// max / 10^4), max], four decades at most.
inline constexpr double kLogDecades = 4;

struct ColorScale {
  ScaleKind kind = ScaleKind::linear;
  double lo = 0, hi = 1;  // lo < hi; lo > 0 on a log scale

  // Position of v in the range, clamped to [0, 1]; NaN stays NaN. On a log
  // scale values <= lo (zero included) map to 0.
  double normalize(double v) const;
  double value_at(double t) const;  // inverse of normalize inside the range
};

// The scale for one figure: `own` is its data, `shared` the data of every
// figure it is compared with (used when the spec says shared).
ColorScale resolve_color_scale(ScaleKind kind, const RangeSpec& spec, const ValueExtent& own,
                               const ValueExtent& shared);

// A difference (attention A - B, or a run against the full cache) is read
// against zero: a linear [-m, m], so a diverging colormap's middle is
// "equal". `magnitude` is the largest |value| to show; where it is not
// positive (no difference at all) a tiny range keeps every cell white.
ColorScale diverging_color_scale(double magnitude);
// The magnitude of what the data spans: max(|min|, |max|), 0 when empty.
double extent_magnitude(const ValueExtent& e);

}  // namespace kvscope
