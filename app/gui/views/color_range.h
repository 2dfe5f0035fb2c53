// The colour scale of a picture from the view settings: auto (its own
// values), fixed (lo/hi), or — with ViewSettings.shared_range — one range
// over every picture showing values of the same kind (main view, B, the
// grid's thumbnails), so that one colour means one value everywhere.
#pragma once

#include <array>

#include "app_state.h"
#include "figures/color_scale.h"

namespace kvscope::gui {

// The pictures that take part in a shared range.
enum class RangeSlot { MainA, MainB, Grid, kCount };

// What each picture's values spanned when it was last drawn (at most a
// frame old); the shared range is taken over these. Part of ViewCaches.
class RangeReports {
 public:
  void report(RangeSlot slot, int value_kind, const kvscope::ValueExtent& extent);
  void forget(RangeSlot slot);
  // The union of the valid reports of `value_kind` into `data`.
  void add_to(int value_kind, kvscope::ValueExtent& data) const;

 private:
  struct Report {
    bool valid = false;
    int value_kind = 0;
    kvscope::ValueExtent extent;
  };
  std::array<Report, static_cast<int>(RangeSlot::kCount)> reports_;
};

// value_kind groups pictures that may share a range (attention, a
// statistic, a difference); `diverging` pictures (differences) get a range
// symmetric around 0 and a linear scale.
kvscope::ColorScale resolve_scale(const ViewSettings& v, const RangeReports& reports, int value_kind,
                                  const kvscope::ValueExtent& own, bool diverging);

}  // namespace kvscope::gui
