#include "views/color_range.h"

#include <algorithm>
#include <cmath>

namespace kvscope::gui {

void RangeReports::report(RangeSlot slot, int value_kind, const kvscope::ValueExtent& extent) {
  reports_[static_cast<int>(slot)] = {true, value_kind, extent};
}

void RangeReports::forget(RangeSlot slot) { reports_[static_cast<int>(slot)].valid = false; }

void RangeReports::add_to(int value_kind, kvscope::ValueExtent& data) const {
  for (const Report& r : reports_)
    if (r.valid && r.value_kind == value_kind) data.add(r.extent);
}

kvscope::ColorScale resolve_scale(const ViewSettings& v, const RangeReports& reports, int value_kind,
                                  const kvscope::ValueExtent& own, bool diverging) {
  kvscope::ValueExtent data = own;
  if (v.shared_range) reports.add_to(value_kind, data);
  const kvscope::ScaleKind kind =
      diverging || v.scale == ColorScaleKind::Linear ? kvscope::ScaleKind::linear : kvscope::ScaleKind::log;
  if (diverging) {
    // A difference is read against zero: white (coolwarm's middle) = equal.
    double m = v.auto_range ? std::max(std::fabs(data.empty() ? 0 : data.min), std::fabs(data.empty() ? 0 : data.max))
                            : std::max(std::fabs(double(v.range_lo)), std::fabs(double(v.range_hi)));
    if (!(m > 0)) m = 1e-6;
    return {kind, -m, m};
  }
  kvscope::RangeSpec spec;
  if (!v.auto_range && v.range_lo < v.range_hi && (kind == kvscope::ScaleKind::linear || v.range_lo > 0)) {
    spec.kind = kvscope::RangeSpec::Kind::fixed;
    spec.lo = v.range_lo;
    spec.hi = v.range_hi;
  } else {
    spec.kind = kvscope::RangeSpec::Kind::automatic;
  }
  return kvscope::resolve_color_scale(kind, spec, data, data);
}

}  // namespace kvscope::gui
