#include "views/head_summary.h"

#include <limits>

#include "views/cell_codes.h"
#include "views/cell_rows.h"

namespace kvscope::gui {

const char* const kHeadSummaryRule =
    "Attention kept: the share of this head's attention at the shown step that falls on tokens its KV head keeps "
    "after that step's eviction (100% = the eviction took nothing this head reads).";

float kept_attention_share(const PublishedRun& run, const RunAttention& attention, int layer, int head, int row) {
  const float* a = attention.row(row, head);
  if (!a) return std::numeric_limits<float>::quiet_NaN();
  const Recorder& rec = run.session->recorder();
  const int seg = segment_of(run, layer, head);
  double kept = 0, total = 0;
  for (int p = 0; p < rec.positions(); ++p) {
    const uint8_t code = rec.mask(row, seg, p);
    if (code == kNotSeen) continue;
    total += a[p];
    if (is_kept(code)) kept += a[p];
  }
  return total > 0 ? float(kept / total) : std::numeric_limits<float>::quiet_NaN();
}

}  // namespace kvscope::gui
