#include "views/run_attention.h"

#include <algorithm>

namespace kvscope::gui {

RunAttention::RunAttention(const PublishedRun& run, int layer, std::shared_ptr<const std::vector<float>> filled) {
  if (!run.session) return;
  const Recorder& rec = run.session->recorder();
  heads_ = run.session->model_config().n_heads;
  positions_ = rec.positions();
  const std::vector<int>& layers = rec.attention_layers();
  const auto it = std::find(layers.begin(), layers.end(), layer);
  // A layer of which only some heads are recorded (recording.heads) is
  // shown from the replay, as one that is not recorded: the views show
  // every head of a layer.
  if (it != layers.end() && rec.records_layer(layer)) {
    // [rows][recorded layers][heads][positions], allocated whole up front.
    const std::size_t index = static_cast<std::size_t>(it - layers.begin());
    head_stride_ = positions_;
    row_stride_ = layers.size() * heads_ * head_stride_;
    base_ = rec.attention_rows().data() + index * heads_ * head_stride_;
    rows_ = run.rows;
    recorded_ = true;
    return;
  }
  if (filled && heads_ > 0 && positions_ > 0) {
    filled_ = std::move(filled);
    head_stride_ = positions_;
    row_stride_ = std::size_t(heads_) * positions_;
    base_ = filled_->data();
    rows_ = std::min<int>(run.rows, static_cast<int>(filled_->size() / row_stride_));
  }
}

const float* RunAttention::row(int r, int head) const {
  if (!base_ || r < 0 || r >= rows_ || head < 0 || head >= heads_) return nullptr;
  return base_ + r * row_stride_ + head * head_stride_;
}

}  // namespace kvscope::gui
