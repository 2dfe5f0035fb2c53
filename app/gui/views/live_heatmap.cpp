#include "views/live_heatmap.h"

#include <algorithm>
#include <span>

namespace kvscope::gui {

void LiveHeatmap::clear() {
  texture_.release();
  valid_ = false;
  filled_ = 0;
  row_extents_.clear();
}

void LiveHeatmap::sync(const HeatmapKey& key, int planned_rows, int cols, int available_rows, const RowFiller& fill) {
  planned_rows = std::max(planned_rows, available_rows);
  if (!valid_ || !(key == key_) || texture_.rows() != std::max(planned_rows, 1) || texture_.cols() != std::max(cols, 1)) {
    texture_.allocate(planned_rows, cols);
    key_ = key;
    valid_ = true;
    filled_ = 0;
    row_extents_.clear();
  }
  // Rows only ever grow for one key; fewer rows means the worker went back
  // (a replay under the same generation is not expected, but stay correct).
  if (available_rows < filled_) {
    filled_ = 0;
    row_extents_.clear();
  }
  const int n = available_rows - filled_;
  if (n <= 0 || cols <= 0) return;
  values_.resize(std::size_t(n) * cols);
  codes_.resize(values_.size());
  for (int i = 0; i < n; ++i) {
    float* v = values_.data() + std::size_t(i) * cols;
    uint8_t* c = codes_.data() + std::size_t(i) * cols;
    fill(filled_ + i, v, c);
    kvscope::ValueExtent e;
    e.add(std::span<const float>(v, cols));
    row_extents_.push_back(e);
  }
  texture_.upload(filled_, n, values_.data(), codes_.data());
  filled_ = available_rows;
}

kvscope::ValueExtent LiveHeatmap::extent_of_rows(int first, int last_row) const {
  kvscope::ValueExtent e;
  const int end = std::min<int>(last_row + 1, static_cast<int>(row_extents_.size()));
  for (int r = std::max(0, first); r < end; ++r) e.add(row_extents_[r]);
  return e;
}

}  // namespace kvscope::gui
