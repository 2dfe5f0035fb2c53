// The attention rows of one layer of a published run, wherever they are:
// in the recorder (layers it keeps) or in the worker's replay of a layer it
// did not keep (EngineWorker::filled_layer). Rows are only read below the
// run's published `rows` (published_run.h).
#pragma once

#include <memory>
#include <vector>

#include "published_run.h"

namespace kvscope::gui {

class RunAttention {
 public:
  RunAttention() = default;
  // `filled`: the worker's [rows][heads][positions] replay of `layer`, or
  // nullptr; used only when the recorder does not keep the layer.
  RunAttention(const PublishedRun& run, int layer, std::shared_ptr<const std::vector<float>> filled);

  bool available() const { return rows_ > 0; }
  int rows() const { return rows_; }      // rows that have attention
  bool recorded() const { return recorded_; }
  // `positions` values of (row, head); nullptr when the row is not there.
  const float* row(int r, int head) const;
  const void* source() const { return base_; }  // identifies the data for cache keys

 private:
  const float* base_ = nullptr;
  std::shared_ptr<const std::vector<float>> filled_;  // keeps a replay alive while read
  int rows_ = 0, heads_ = 0, positions_ = 0;
  std::size_t row_stride_ = 0, head_stride_ = 0;
  bool recorded_ = false;
};

}  // namespace kvscope::gui
