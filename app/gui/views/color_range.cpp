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
  if (diverging)  // white (coolwarm's middle) = equal, as the exported fork figure
    return kvscope::diverging_color_scale(v.auto_range
                                              ? kvscope::extent_magnitude(data)
                                              : std::max(std::fabs(double(v.range_lo)), std::fabs(double(v.range_hi))));
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
