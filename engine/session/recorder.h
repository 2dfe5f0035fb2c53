// What a session keeps for the window and the exports, step by step: for
// every row (row 0 = after the prompt, then one per generated token) the
// slot state of every position in every KV segment, the policy statistic,
// the attention rows of the recorded layers over absolute positions,
// eviction events and metrics. Per-head summaries (entropy, peak) are
// derived from the recorded rows when asked for, not on every step.
// Attention rows are the big part; they are kept for the layers that fit
// the memory budget, and a deterministic replay fills in any other layer.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

#include "backend/backend.h"
#include "common/mask_codes.h"
#include "kv/kv_layout.h"
#include "policy/selection.h"
#include "session/metrics.h"
#include "session/position_set.h"

namespace kvscope {

struct EvictionEvent {
  int step = 0;
  int kv_layer = 0;  // index into the owning layers
  int layer = 0;     // the owning layer's number
  int kv_head = 0;
  int position = 0;
  int token = 0;
  float statistic = std::numeric_limits<float>::quiet_NaN();
  int rank = 0;  // 1 = best to keep within its decision unit
};

class Recorder {
 public:
  Recorder() = default;
  // rows: 1 + planned new tokens; positions: prompt + planned new tokens;
  // the attention of `attention_heads` (empty: every query head) in each of
  // `attention_layers` is kept (session/memory_forecast.h chooses them).
  Recorder(const KvLayout& layout, int rows, int positions, std::vector<int> attention_layers,
           std::vector<int> attention_heads = {});

  const KvLayout& layout() const { return layout_; }
  int rows() const { return rows_; }
  int rows_recorded() const { return recorded_; }
  int positions() const { return positions_; }
  const std::vector<int>& attention_layers() const { return attn_layers_; }
  const std::vector<int>& attention_heads() const { return attn_heads_; }
  // Every head of `layer` recorded (what a view of the whole layer needs).
  bool records_layer(int layer) const;
  bool records_head(int layer, int head) const;

  // Records row `row` from the cache as the step's attention saw it
  // (`book` before eviction), the policy's choice, the statistics and the
  // captured attention of the step's last query.
  void record(int row, const KvBook& book, const SlotChoice& choice, bool policy_has_statistic,
              const std::function<const std::vector<float>&(int)>& stats,
              const std::vector<AttentionRows>& captures, int step, const std::vector<int>& tokens,
              bool evicts);
  // Eviction events alone (streaming prefill, whose steps are not rows).
  void record_events(int step, const KvBook& book, const SlotChoice& choice, bool policy_has_statistic,
                     const std::function<const std::vector<float>&(int)>& stats, const std::vector<int>& tokens,
                     bool evicts);
  void add_metrics(const StepMetrics& m) { metrics_.push_back(m); }
  StepMetrics& last_metrics() { return metrics_.back(); }

  uint8_t mask(int row, int seg, int pos) const { return masks_[(size_t(row) * layout_.n_segments() + seg) * positions_ + pos]; }
  float score(int row, int seg, int pos) const { return scores_[(size_t(row) * layout_.n_segments() + seg) * positions_ + pos]; }
  // Attention of a recorded query head (records_head) of `layer` at `row`, by position (0 where absent).
  float attention(int row, int layer, int head, int pos) const;
  // Entropy (nats) and maximum of a recorded head's attention row; NaN for
  // a head that is not recorded.
  float entropy(int row, int layer, int head) const;
  float max_attention(int row, int layer, int head) const;

  const std::vector<uint8_t>& masks() const { return masks_; }  // [rows][segments][positions]
  const std::vector<float>& scores() const { return scores_; }  // [rows][segments][positions]
  const std::vector<EvictionEvent>& events() const { return events_; }
  const std::vector<StepMetrics>& metrics() const { return metrics_; }
  // Attention as [rows][recorded layers][recorded heads][positions].
  const std::vector<float>& attention_rows() const { return attn_; }
  std::size_t bytes() const;

  // Bytes one recorded layer of `heads` heads costs for `rows` x `positions`.
  static std::size_t layer_bytes(int rows, int heads, int positions) {
    return size_t(rows) * heads * positions * sizeof(float);
  }

 private:
  const float* attention_row(int row, int layer, int head) const;  // nullptr if not recorded
  std::size_t attention_offset(int row, int layer, int head) const;

  KvLayout layout_;
  int rows_ = 0, positions_ = 0, recorded_ = 0;
  std::vector<int> attn_layers_;
  std::vector<int> attn_index_;  // layer -> index into attn_layers_, or -1
  std::vector<int> attn_heads_;  // recorded query heads, ascending
  std::vector<int> head_index_;  // head -> index into attn_heads_, or -1
  std::vector<uint8_t> masks_;
  std::vector<float> scores_;
  std::vector<float> attn_;
  std::vector<EvictionEvent> events_;
  std::vector<StepMetrics> metrics_;
  std::vector<PositionSet> held_;  // [segment]: this step's positions (scratch of record())
  std::vector<std::vector<EvictionEvent>> event_runs_;  // scratch of record_events(): one list per run of segments
};

}  // namespace kvscope
