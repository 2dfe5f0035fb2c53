// Every head's picture at thumbnail size, in one texture: layer l, head h
// is the block at rows l*T_r.., columns h*T_c.. (T at most 128 per side).
// A thumbnail cell holds the largest value of the recorder cells it covers
// (or the largest in magnitude, for differences) and the most telling mask code among them (an eviction now beats kept),
// so a 2048 x 2048 head becomes 128 x 128 without losing its bright spots.
// The mapping from recorder cells to thumbnail cells is fixed by the
// session's planned size, so new rows update only the thumbnail rows they
// fall in: never L x H full-size textures, and no re-downsampling.
#pragma once

#include <functional>
#include <vector>

#include "views/heatmap_texture.h"
#include "views/live_heatmap.h"

namespace kvscope::gui {

class ThumbnailAtlas {
 public:
  static constexpr int kMaxSide = 128;

  // Starts over (all background) for a picture of layers x heads blocks of
  // planned_rows x positions cells each. `pool_by_magnitude`: a thumbnail
  // cell keeps the value largest in magnitude (differences), not the largest.
  void reset(const void* owner_key, int layers, int heads, int planned_rows, int positions, bool pool_by_magnitude);
  bool matches(const void* owner_key, int layers, int heads, int planned_rows, int positions) const;
  // Brings layer `layer` up to `rows` rows, reading rows with fill(head)
  // (a filler per head). `source` identifies the layer's data: a change
  // (a replay arrived) starts the layer again. Processes at most `budget`
  // cells and returns how many it used (the rest continues next frame).
  long update_layer(int layer, const void* source, int rows, const std::function<RowFiller(int head)>& fill,
                    long budget);
  void upload_pending();
  void release();  // frees the GL texture (before the context goes)

  const HeatmapTexture& texture() const { return texture_; }
  int thumb_rows() const { return tr_; }
  int thumb_cols() const { return tc_; }
  int thumb_row_of(int row) const;   // the thumbnail row a recorder row falls in
  int thumb_col_end(int cols) const; // thumbnail columns covering positions [0, cols)
  int layer_rows(int layer) const { return done_[layer]; }
  // What the thumbnails' values span (recomputed when rows are uploaded).
  const kvscope::ValueExtent& extent() const { return extent_; }
  // The same with the top end at the 99th percentile of the nonzero
  // values (for differences: the 80th of the magnitudes, symmetric around 0): the thumbnails' own
  // colour range. One global maximum (a sink's attention early in a long
  // run, one large A - B cell) would otherwise push every other thumbnail
  // to the bottom colour, a picture that reads as blank.
  const kvscope::ValueExtent& robust_extent() const { return robust_; }

 private:
  const void* owner_ = nullptr;
  int layers_ = 0, heads_ = 0, rows_ = 0, cols_ = 0, tr_ = 1, tc_ = 1;
  bool by_magnitude_ = false;
  HeatmapTexture texture_;
  std::vector<float> values_;   // atlas, row-major
  std::vector<uint8_t> codes_;
  std::vector<int> done_;       // per layer: rows processed
  std::vector<const void*> source_;
  std::vector<std::pair<int, int>> dirty_;  // atlas row ranges to upload
  std::vector<float> row_values_;
  std::vector<uint8_t> row_codes_;
  kvscope::ValueExtent extent_, robust_;
  std::vector<float> sample_;
};

}  // namespace kvscope::gui
