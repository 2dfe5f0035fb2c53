// What each picture's cells are, one row at a time (for LiveHeatmap and the
// grid's thumbnails). Every row holds `positions` cells (the recorder's
// columns); positions not yet seen are NaN with code kNotSeen.
#pragma once

#include <vector>

#include "engine_worker.h"
#include "live_heatmap.h"
#include "published_run.h"
#include "views/run_attention.h"

namespace kvscope::gui {

enum class CellKind {
  Attention,      // attention; codes = the mask of the head's KV segment
  Mask,           // codes only
  Statistic,      // the policy statistic; codes = the mask
  DiffFull,       // attention A - the full cache's; codes = mask A
  DiffFork,       // attention A - B; codes = the fork comparison (cell_codes.h)
  Ideal,          // attention A; codes = ideal overlay (cell_codes.h)
};

// Everything a filler reads; the caller keeps the pointees alive while the
// filler runs (LiveHeatmap::sync runs it at once).
struct CellInputs {
  const PublishedRun* a = nullptr;
  const PublishedRun* b = nullptr;            // DiffFork
  const FullReference* full = nullptr;        // DiffFull
  RunAttention attention_a, attention_b;
  int layer = 0, head = 0;
};

// Rows the picture can show now (the published rows that have all inputs).
int available_rows(CellKind kind, const CellInputs& in);
RowFiller make_row_filler(CellKind kind, const CellInputs& in);
HeatmapKey make_key(CellKind kind, const CellInputs& in);

// The KV segment a query head reads (the recorder's layout).
int segment_of(const PublishedRun& run, int layer, int head);

// The ideal-overlay codes of one row: mask `mask` (kept count k) against
// the top k of `attention` (NaN-free over seen positions).
void ideal_codes(const uint8_t* mask, const float* attention, int positions, uint8_t* out,
                 std::vector<int>& scratch);

}  // namespace kvscope::gui
