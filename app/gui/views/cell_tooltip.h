// The hover tooltip of a heatmap cell: step, query token, position and its
// token, attention, statistic and mask state (and, in the comparison
// views, the full cache's attention or B's).
#pragma once

#include "app_state.h"
#include "views/run_attention.h"

namespace kvscope::gui {

struct TooltipInputs {
  const PublishedRun* a = nullptr;
  const PublishedRun* b = nullptr;
  const FullReference* full = nullptr;
  const RunAttention* attention_a = nullptr;
  const RunAttention* attention_b = nullptr;
  int layer = 0, head = 0;
};

void show_cell_tooltip(const TooltipInputs& in, int row, int position);

}  // namespace kvscope::gui
