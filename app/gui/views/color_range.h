// The colour scale of a picture from the view settings: auto (its own
// values), fixed (lo/hi), or — with ViewSettings.shared_range — one range
// over every picture showing values of the same kind (main view, B, the
// grid's thumbnails), so that one colour means one value everywhere.
#pragma once

#include "app_state.h"
#include "figures/color_scale.h"

namespace kvscope::gui {

// The pictures that take part in a shared range. Each one reports what
// its values span when drawn; the shared range uses the latest report of
// each (at most a frame old).
enum class RangeSlot { MainA, MainB, Grid, kCount };

void report_extent(RangeSlot slot, int value_kind, const kvscope::ValueExtent& extent);
void forget_extent(RangeSlot slot);

// value_kind groups pictures that may share a range (attention, a
// statistic, a difference); `diverging` pictures (differences) get a range
// symmetric around 0 and a linear scale.
kvscope::ColorScale resolve_scale(const ViewSettings& v, int value_kind, const kvscope::ValueExtent& own,
                                  bool diverging);

}  // namespace kvscope::gui
