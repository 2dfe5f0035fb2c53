#include "session/recorder.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "backend/parallel.h"

namespace kvscope {

Recorder::Recorder(const KvLayout& layout, int rows, int positions, std::vector<int> attention_layers,
                   std::vector<int> attention_heads)
    : layout_(layout),
      rows_(rows),
      positions_(positions),
      attn_layers_(std::move(attention_layers)),
      attn_heads_(std::move(attention_heads)) {
  attn_index_.assign(layout_.n_layers, -1);
  for (std::size_t i = 0; i < attn_layers_.size(); ++i) attn_index_[attn_layers_[i]] = static_cast<int>(i);
  if (attn_heads_.empty())
    for (int h = 0; h < layout_.n_heads; ++h) attn_heads_.push_back(h);
  head_index_.assign(layout_.n_heads, -1);
  for (std::size_t i = 0; i < attn_heads_.size(); ++i) head_index_[attn_heads_[i]] = static_cast<int>(i);
  const size_t cells = size_t(rows) * layout_.n_segments() * positions;
  masks_.assign(cells, kNotSeen);
  scores_.assign(cells, std::numeric_limits<float>::quiet_NaN());
  attn_.assign(size_t(rows) * attn_layers_.size() * attn_heads_.size() * positions, 0.0f);
}

namespace {

// masks.npy's code of a slot that the policy has just judged: the slot
// states and the mask codes agree except for a dropped slot, which is
// evicted now under an evicting policy and only outside the top k under
// one that keeps everything (ideal).
static_assert(int{kKept} == int{kMaskKept} && int{kProtected} == int{kMaskProtected} && int{kDropped} == 0);
// Arithmetic rather than a select: GCC turns the select into a branch, which
// mispredicts on ideal's mask (its top k is scattered over the cache).
inline uint8_t mask_of(uint8_t slot_state, uint8_t dropped_code) {
  return static_cast<uint8_t>(slot_state + (slot_state == kDropped) * int{dropped_code});
}

}  // namespace

bool Recorder::records_layer(int layer) const {
  return layer >= 0 && layer < int(attn_index_.size()) && attn_index_[layer] >= 0 &&
         static_cast<int>(attn_heads_.size()) == layout_.n_heads;
}

bool Recorder::records_head(int layer, int head) const {
  return layer >= 0 && layer < int(attn_index_.size()) && attn_index_[layer] >= 0 && head >= 0 &&
         head < int(head_index_.size()) && head_index_[head] >= 0;
}

std::size_t Recorder::attention_offset(int row, int layer, int head) const {
  return ((size_t(row) * attn_layers_.size() + attn_index_[layer]) * attn_heads_.size() + head_index_[head]) *
         positions_;
}

float Recorder::attention(int row, int layer, int head, int pos) const {
  return attn_[attention_offset(row, layer, head) + pos];
}

const float* Recorder::attention_row(int row, int layer, int head) const {
  if (!records_head(layer, head) || row < 0 || row >= recorded_) return nullptr;
  return &attn_[attention_offset(row, layer, head)];
}

float Recorder::entropy(int row, int layer, int head) const {
  const float* r = attention_row(row, layer, head);
  if (!r) return std::numeric_limits<float>::quiet_NaN();
  double ent = 0;
  for (int p = 0; p < positions_; ++p)
    if (r[p] > 0) ent -= double(r[p]) * std::log(double(r[p]));
  return static_cast<float>(ent);
}

float Recorder::max_attention(int row, int layer, int head) const {
  const float* r = attention_row(row, layer, head);
  if (!r) return std::numeric_limits<float>::quiet_NaN();
  float mx = 0;
  for (int p = 0; p < positions_; ++p) mx = std::max(mx, r[p]);
  return mx;
}

std::size_t Recorder::bytes() const {
  return masks_.size() + scores_.size() * 4 + attn_.size() * 4 +
         events_.size() * sizeof(EvictionEvent) + metrics_.size() * sizeof(StepMetrics);
}

void Recorder::record(int row, const KvBook& book, const SlotChoice& choice, bool policy_has_statistic,
                      const std::function<const std::vector<float>&(int)>& stats,
                      const std::vector<AttentionRows>& captures, int step, const std::vector<int>& tokens,
                      bool evicts) {
  const int S = layout_.n_segments();
  // Everything up to the newest position has been seen; what a segment no
  // longer holds was evicted at an earlier step, or, in row 0, while a
  // streaming prefill fed the prompt: those are step 0's events, so they are
  // "evicted at this step" like the events.csv rows that name them.
  const uint8_t gone = row == 0 ? kEvictedNow : kEvictedEarlier;
  const uint8_t dropped_code = evicts ? kEvictedNow : kOutsideTopK;
  int newest = -1;
  for (int s = 0; s < S; ++s)
    if (book.len(s) > 0) newest = std::max(newest, book.positions(s).back());
  held_.resize(S);
  // Segments are independent: runs of them in parallel (a large model's row
  // is a million slots and some ten megabytes of masks and scores).
  const int runs = runs_for(S, book.total_slots());
  parallel_runs(S, runs, [&](int, int s) {
    uint8_t* m = &masks_[(size_t(row) * S + s) * positions_];
    float* sc = &scores_[(size_t(row) * S + s) * positions_];
    std::memset(m, gone, static_cast<std::size_t>(std::clamp(newest + 1, 0, positions_)));
    const auto& pos = book.positions(s);
    const int len = static_cast<int>(pos.size());
    const uint8_t* state = choice.state[s].data();
    held_[s].assign(pos.data(), len, positions_);
    held_[s].write_each(m, [&](int j) { return mask_of(state[j], dropped_code); });
    if (policy_has_statistic) held_[s].expand(stats(s).data(), sc);
  });
  record_events(step, book, choice, policy_has_statistic, stats, tokens, evicts);
  // Attention of the step's last query, scattered to absolute positions.
  for (const auto& a : captures) {
    const int li = attn_index_[a.layer];
    if (li < 0) continue;  // captured for the metrics only
    const int H = static_cast<int>(attn_heads_.size());
    parallel_runs(H, runs_for(H, int64_t(H) * positions_), [&](int, int i) {
      const int h = attn_heads_[i];
      held_[layout_.segment_of(a.layer, h)].expand(a.prob_row(h, a.n_queries - 1),
                                                   &attn_[attention_offset(row, a.layer, h)]);
    });
  }
  recorded_ = std::max(recorded_, row + 1);
}

void Recorder::record_events(int step, const KvBook& book, const SlotChoice& choice, bool policy_has_statistic,
                             const std::function<const std::vector<float>&(int)>& stats,
                             const std::vector<int>& tokens, bool evicts) {
  if (!evicts) return;
  // Each run of segments collects its events, appended in segment order.
  const int S = layout_.n_segments();
  const int runs = runs_for(S, book.total_slots());
  event_runs_.resize(runs);
  parallel_runs(S, runs, [&](int run, int s) {
    std::vector<EvictionEvent>& out = event_runs_[run];
    const auto& pos = book.positions(s);
    const std::vector<float>* st = policy_has_statistic ? &stats(s) : nullptr;
    // The dropped slots are few among many: memchr finds each (kDropped is 0).
    const uint8_t* states = choice.state[s].data();
    const std::size_t len = pos.size();
    for (const void* hit = len ? std::memchr(states, kDropped, len) : nullptr; hit;) {
      const std::size_t j = static_cast<std::size_t>(static_cast<const uint8_t*>(hit) - states);
      hit = j + 1 < len ? std::memchr(states + j + 1, kDropped, len - j - 1) : nullptr;
      EvictionEvent e;
      e.step = step;
      e.kv_layer = s / layout_.n_kv_heads;
      e.layer = layout_.owners[e.kv_layer];
      e.kv_head = s % layout_.n_kv_heads;
      e.position = pos[j];
      e.token = pos[j] < int(tokens.size()) ? tokens[pos[j]] : -1;
      e.statistic = st ? (*st)[j] : choice.score[s][j];
      e.rank = choice.rank[s][j];
      out.push_back(e);
    }
  });
  for (int r = 0; r < runs; ++r) {
    events_.insert(events_.end(), event_runs_[r].begin(), event_runs_[r].end());
    event_runs_[r].clear();
  }
}

}  // namespace kvscope
