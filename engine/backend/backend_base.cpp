// The Backend base class (backend.h): what every backend does the same way
// around its kernels, written once so the CPU reference and CUDA cannot
// disagree on it. The messages are the ones both backends gave before.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "backend/backend.h"
#include "common/error.h"

namespace kvscope {

Backend::Backend(const ModelConfig& cfg, const BackendOptions& opt) : opts_(opt) {
  if (opt.max_tokens <= 0) throw Error("backend", "max_tokens", "must be positive");
  if (opt.positions == PositionMode::Compacted && cfg.rope == RopeStyle::None && cfg.alibi_slopes.empty())
    throw Error(
        "backend", "positions",
        "compacted positions need rotary embeddings or ALiBi; " + cfg.model_type + " uses learned absolute positions");
  const KvLayout layout = KvLayout::from_config(cfg);
  book_ = KvBook(layout, opt.max_tokens);
  stats_.assign(layout.n_segments(), {});
  value_weights_.assign(layout.n_segments(), {});
  readers_.assign(layout.n_segments(), 0);
  for (int l = 0; l < cfg.n_layers; ++l)
    for (int h = 0; h < cfg.n_heads; ++h) ++readers_[layout.segment_of(l, h)];
}

void Backend::check_forward(std::span<const int> tokens) const {
  const ModelConfig& cfg = config();
  const int n = static_cast<int>(tokens.size());
  if (n == 0) throw Error("forward", "tokens", "no tokens");
  if (seen_ + n > cfg.max_positions)
    throw Error("forward", "positions", "sequence of " + std::to_string(seen_ + n) +
                                            " tokens is longer than the model's maximum positions (" +
                                            std::to_string(cfg.max_positions) + ")");
  if (book_.max_len() + n > opts_.max_tokens)
    throw Error("forward", "capacity", "KV cache capacity of " + std::to_string(opts_.max_tokens) + " tokens exceeded");
  check_backend_limits(n);
  for (int t : tokens)
    if (t < 0 || t >= cfg.vocab_size)
      throw Error("forward", "tokens", "token id " + std::to_string(t) + " outside the vocabulary (" +
                                           std::to_string(cfg.vocab_size) + ")");
}

// Each listed layer is captured once, in the order of its first mention;
// layers outside the model are skipped.
void Backend::place_captures(const ForwardOptions& opt) {
  capture_place_.assign(config().n_layers, -1);
  n_captures_ = 0;
  for (int want : opt.capture_layers)
    if (want >= 0 && want < config().n_layers && capture_place_[want] < 0) capture_place_[want] = n_captures_++;
}

int64_t Backend::capture_floats(const ForwardOptions& opt, int n) const {
  const KvLayout& layout = book_.layout();
  const int rows = opt.capture_last_query_only ? 1 : n;
  int64_t total = 0;
  for (int l = 0; l < layout.n_layers; ++l)
    if (capture_place_[l] >= 0)
      for (int h = 0; h < layout.n_heads; ++h) total += int64_t(rows) * (book_.len(layout.segment_of(l, h)) + n);
  return total;
}

int Backend::begin_forward(int n, const ForwardOptions& opt, ForwardOutput& out) {
  const KvLayout& layout = book_.layout();
  const int S = layout.n_segments();
  // Where each new token's key is rotated to in each segment.
  new_rope_pos_.resize(static_cast<std::size_t>(n) * S);
  for (int i = 0; i < n; ++i)
    for (int s = 0; s < S; ++s)
      new_rope_pos_[std::size_t(i) * S + s] = opts_.positions == PositionMode::Compacted ? book_.len(s) + i : seen_ + i;
  const int first_pos = seen_;
  for (int i = 0; i < n; ++i)
    book_.append(first_pos + i, std::span<const int>(&new_rope_pos_[std::size_t(i) * S], S));
  seen_ += n;
  for (int s = 0; s < S; ++s) stats_[s].resize(book_.len(s), 0.0f);

  row_weight_.clear();
  carry_ = 1.0f;
  if (opt.stats.active()) {
    row_weight_.resize(n);
    for (int i = 0; i < n; ++i) row_weight_[i] = std::pow(opt.stats.decay, static_cast<float>(n - 1 - i));
    if (opt.stats.last_rows > 0)  // rows before the observation window weigh nothing
      std::fill(row_weight_.begin(), row_weight_.begin() + std::max(n - opt.stats.last_rows, 0), 0.0f);
    carry_ = std::pow(opt.stats.decay, static_cast<float>(n));
  }

  // Captures come out in the order the caller listed the layers, into the
  // rows' storage of the caller's previous call: a session captures every
  // layer every step, and fresh vectors would cost a page fault per 4 KB.
  out.attention.resize(n_captures_);
  const int n_queries = opt.capture_last_query_only ? 1 : n;
  for (int l = 0; l < layout.n_layers; ++l) {
    if (capture_place_[l] < 0) continue;
    AttentionRows& a = out.attention[capture_place_[l]];
    a.layer = l;
    a.n_queries = n_queries;
    a.row_len.resize(layout.n_heads);
    a.offset.resize(layout.n_heads);
    int64_t total = 0;
    for (int h = 0; h < layout.n_heads; ++h) {
      a.row_len[h] = book_.len(layout.segment_of(l, h));
      a.offset[h] = total;
      total += int64_t(n_queries) * a.row_len[h];
    }
    a.probs.resize(std::size_t(total));
    a.logits.resize(opt.capture_logits ? std::size_t(total) : 0);
  }
  return first_pos;
}

int Backend::sample(const SamplingParams& p, uint64_t step) {
  if (!has_last_logits()) throw Error("sample", "", "no forward pass yet");
  return do_sample(p, step);
}

void Backend::retain(int seg, std::span<const int> keep) {
  if (seg < 0 || seg >= book_.layout().n_segments())
    throw Error("kv cache", "retain", "segment " + std::to_string(seg) + " out of range");
  // The whole list is checked before anything changes (KvBook::retain's
  // rule and message; it checks only as it goes).
  const int old_len = book_.len(seg);
  int prev = -1;
  for (int slot : keep) {
    if (slot <= prev || slot >= old_len)
      throw Error("kv cache", "retain", "slot list must be strictly ascending and inside the segment");
    prev = slot;
  }
  book_.retain(seg, keep);
  auto& s = stats_[seg];
  for (std::size_t i = 0; i < keep.size(); ++i) s[i] = s[keep[i]];
  s.resize(keep.size());
  // Value weights follow their slots while they are complete; otherwise
  // they are recomputed for every slot when next asked for.
  auto& w = value_weights_[seg];
  if (w.size() == static_cast<std::size_t>(old_len)) {
    for (std::size_t i = 0; i < keep.size(); ++i) w[i] = w[keep[i]];
    w.resize(keep.size());
  } else {
    w.clear();
  }
  do_retain(seg, keep, old_len);
  if (opts_.positions == PositionMode::Compacted) {
    // Kept keys now sit rotated to their new slots.
    std::vector<int> rope(keep.size());
    std::iota(rope.begin(), rope.end(), 0);
    book_.set_rope_positions(seg, std::move(rope));
  }
}

bool Backend::holds_every_token() const {
  for (int s = 0; s < book_.layout().n_segments(); ++s)
    if (book_.len(s) != seen_) return false;
  return true;
}

std::unique_ptr<Backend> Backend::clone_as_full_cache() {
  if (!holds_every_token())
    throw Error("backend", "", "a run that evicted is not a full-cache run: its twin must compute its tokens again");
  std::unique_ptr<Backend> twin = clone();
  twin->opts_.positions = PositionMode::Original;
  twin->clear_slot_stats();
  return twin;
}

void Backend::reset() {
  book_.clear();
  for (auto& st : stats_) st.clear();
  for (auto& w : value_weights_) w.clear();
  query_moments_.clear();
  seen_ = 0;
  do_reset();
}

}  // namespace kvscope

namespace kvscope {

void Backend::update_value_weights() {
  std::vector<ValueWeightJob> jobs;
  for (int seg = 0; seg < static_cast<int>(value_weights_.size()); ++seg) {
    auto& w = value_weights_[seg];
    const int len = book_.len(seg), have = static_cast<int>(w.size());
    if (have >= len) continue;
    w.resize(len);
    jobs.push_back({seg, have, len - have});
  }
  if (!jobs.empty()) compute_value_weights(jobs);
}

// The next token's rotation in seg starts the F future positions: its
// position, or in Compacted mode its slot (as if no slot left before it).
void Backend::expected_scores(int seg, const float* keys, const float* values, const SlotStatRule& rule,
                              const std::function<const std::vector<float>&(int)>& inv_freq_of) {
  const KvLayout& layout = book_.layout();
  std::vector<ExpectedReader> readers;
  for (int l = 0; l < layout.n_layers; ++l)
    for (int h = 0; h < layout.n_heads; ++h) {
      if (layout.segment_of(l, h) != seg) continue;
      ExpectedReader r;
      r.inv_freq = &inv_freq_of(l);
      if (!query_moments_.empty()) {
        r.count = query_moments_.count(l, h);
        r.sum = query_moments_.sum(l, h);
        r.outer = query_moments_.outer(l, h);
      }
      readers.push_back(r);
    }
  const int len = book_.len(seg);
  const int future = opts_.positions == PositionMode::Compacted ? len : seen_;
  stats_[seg].resize(len);
  expected_attention_scores(keys, values, len, layout.head_dim, readers, future, rule, stats_[seg].data());
}

}  // namespace kvscope
