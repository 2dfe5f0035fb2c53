#include "views/head_summary.h"

#include <algorithm>
#include <limits>

#include "views/cell_codes.h"
#include "views/cell_rows.h"

namespace kvscope::gui {

const char* const kHeadSummaryRule =
    "Attention still held: of the attention this head paid over the last 32 steps up to the shown one, the share "
    "that went to tokens its KV head still keeps at the shown step (100% = the policy dropped nothing this head "
    "has been reading).";

float kept_attention_share(const PublishedRun& run, const RunAttention& attention, int layer, int head, int row) {
  const Recorder& rec = run.session->recorder();
  const int seg = segment_of(run, layer, head);
  double kept = 0, total = 0;
  for (int r = std::max(0, row - kHeadSummarySteps + 1); r <= row; ++r) {
    const float* a = attention.row(r, head);
    if (!a) continue;
    for (int p = 0; p < rec.positions(); ++p) {
      if (rec.mask(r, seg, p) == kNotSeen) continue;
      total += a[p];
      if (is_kept(rec.mask(row, seg, p))) kept += a[p];
    }
  }
  return total > 0 ? float(kept / total) : std::numeric_limits<float>::quiet_NaN();
}

}  // namespace kvscope::gui
