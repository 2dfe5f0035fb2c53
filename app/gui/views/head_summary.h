// The number under each grid thumbnail: the share of the head's attention
// at the shown step that lands on tokens its KV head keeps after that
// step's eviction. 100% means eviction took nothing this head was reading;
// a low share means the policy dropped (or is about to drop) what the head
// attends to — the heads where eviction hurts. The attention row at step r
// is computed over the cache before step r's eviction, so the positions
// evicted at r still carry their weight and the share is honest about the
// loss. Needs the layer's attention (recorded, or replayed).
#pragma once

#include "published_run.h"
#include "views/run_attention.h"

namespace kvscope::gui {

// NaN when the row has no attention.
float kept_attention_share(const PublishedRun& run, const RunAttention& attention, int layer, int head, int row);
extern const char* const kHeadSummaryRule;  // the rule above in one sentence, for tooltips

}  // namespace kvscope::gui
