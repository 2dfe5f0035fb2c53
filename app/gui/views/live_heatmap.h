// A heatmap that follows a running session: the GPU texture of one
// (session generation, layer, head, mode) picture, filled row by row as the
// worker publishes steps. A changed key (another head, mode, session)
// re-uploads everything once; otherwise each frame uploads only the rows
// that appeared since the last one — one row per decoding step.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "figures/color_scale.h"
#include "views/heatmap_texture.h"

namespace kvscope::gui {

// What a picture shows; equal keys mean equal cells for the rows both have.
struct HeatmapKey {
  const void* source = nullptr;  // the Session (or reference) the cells come from
  uint64_t generation = 0;
  int layer = 0, head = 0;
  int kind = 0;                  // what is computed per cell (see cell_rows.h)
  const void* extra = nullptr;   // a second source (fork, full reference, filled layer)
  bool operator==(const HeatmapKey&) const = default;
};

// Writes one row: `cols` values (NaN = no value) and `cols` codes.
using RowFiller = std::function<void(int row, float* values, uint8_t* codes)>;

class LiveHeatmap {
 public:
  // Makes the texture show `key`, sized planned_rows x cols, with rows
  // [0, available_rows) filled by `fill` (only the missing ones).
  void sync(const HeatmapKey& key, int planned_rows, int cols, int available_rows, const RowFiller& fill);
  void clear();

  const HeatmapTexture& texture() const { return texture_; }
  int filled_rows() const { return filled_; }
  const HeatmapKey& key() const { return key_; }
  // The finite values of rows 0..last_row (kept per row, so scrubbing the
  // timeline costs O(rows), not O(cells)).
  kvscope::ValueExtent extent_up_to(int last_row) const { return extent_of_rows(0, last_row); }
  // The finite values of rows first..last_row.
  kvscope::ValueExtent extent_of_rows(int first, int last_row) const;

 private:
  HeatmapKey key_;
  bool valid_ = false;
  int filled_ = 0;
  HeatmapTexture texture_;
  std::vector<kvscope::ValueExtent> row_extents_;
  std::vector<float> values_;
  std::vector<uint8_t> codes_;
};

}  // namespace kvscope::gui
