// The number under each grid thumbnail: of the attention this head paid
// over the recent steps (up to 32, ending at the shown one), the share that
// went to tokens its KV head still holds at the shown step. 100% means the
// policy kept everything the head has been reading; a low share means it
// has since dropped what the head attended to — the heads where eviction
// hurts. (The share at a single step says little: a step's attention is
// computed over the cache it had, so it lands almost entirely on kept
// tokens.) Needs the layer's attention (recorded, or replayed).
#pragma once

#include "published_run.h"
#include "views/run_attention.h"

namespace kvscope::gui {

inline constexpr int kHeadSummarySteps = 32;

// NaN when the rows have no attention.
float kept_attention_share(const PublishedRun& run, const RunAttention& attention, int layer, int head, int row);
extern const char* const kHeadSummaryRule;  // the rule above in one sentence, for tooltips

}  // namespace kvscope::gui
