#include "views/thumbnail_atlas.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <span>

#include "views/cell_codes.h"

namespace kvscope::gui {
namespace {

// Which code a thumbnail cell shows when its cells differ: what the eye
// should not miss first (an eviction at this step, a lost top-k token, a
// difference between A and B), then protected, kept, and evicted earlier.
int priority(uint8_t code) {
  switch (code) {
    case kEvictedNow: case kIdealTopKOnly: case kForkOnlyA: case kForkOnlyB: return 6;
    case kMaskProtected: case kIdealKeptOnly: return 5;
    case kOutsideTopK: return 4;
    case kMaskKept: case kIdealBoth: case kForkBothKeep: return 3;
    case kEvictedEarlier: case kIdealNeither: case kForkBothEvicted: return 2;
    default: return 0;
  }
}

}  // namespace

bool ThumbnailAtlas::matches(const void* owner_key, int layers, int heads, int planned_rows, int positions) const {
  return owner_ == owner_key && layers == layers_ && heads == heads_ && planned_rows == rows_ && positions == cols_ &&
         texture_.rows() > 0;
}

void ThumbnailAtlas::reset(const void* owner_key, int layers, int heads, int planned_rows, int positions,
                           bool pool_by_magnitude) {
  owner_ = owner_key;
  by_magnitude_ = pool_by_magnitude;
  layers_ = layers;
  heads_ = heads;
  rows_ = std::max(planned_rows, 1);
  cols_ = std::max(positions, 1);
  tr_ = std::min(kMaxSide, rows_);
  tc_ = std::min(kMaxSide, cols_);
  texture_.allocate(layers_ * tr_, heads_ * tc_);
  values_.assign(std::size_t(layers_) * tr_ * heads_ * tc_, std::numeric_limits<float>::quiet_NaN());
  codes_.assign(values_.size(), kNotSeen);
  done_.assign(layers_, 0);
  source_.assign(layers_, nullptr);
  dirty_.clear();
  extent_ = {};
  robust_ = {};
}

void ThumbnailAtlas::release() {
  texture_.release();
  owner_ = nullptr;
  layers_ = 0;
}

int ThumbnailAtlas::thumb_row_of(int row) const { return int(int64_t(row) * tr_ / rows_); }
int ThumbnailAtlas::thumb_col_end(int cols) const {
  return std::min(tc_, int((int64_t(cols) * tc_ + cols_ - 1) / cols_));
}

long ThumbnailAtlas::update_layer(int layer, const void* source, int rows, const std::function<RowFiller(int)>& fill,
                                  long budget) {
  if (layer < 0 || layer >= layers_) return 0;
  const std::size_t atlas_w = std::size_t(heads_) * tc_;
  if (source_[layer] != source || rows < done_[layer]) {
    // New data for this layer (a replay arrived, another mode): start it over.
    for (int t = 0; t < tr_; ++t) {
      const std::size_t at = (std::size_t(layer) * tr_ + t) * atlas_w;
      std::fill(values_.begin() + at, values_.begin() + at + atlas_w, std::numeric_limits<float>::quiet_NaN());
      std::fill(codes_.begin() + at, codes_.begin() + at + atlas_w, uint8_t(kNotSeen));
    }
    dirty_.push_back({layer * tr_, tr_});
    source_[layer] = source;
    done_[layer] = 0;
  }
  if (done_[layer] >= rows || !fill) return 0;
  auto stronger = [this](float x, float y) { return by_magnitude_ ? std::fabs(x) > std::fabs(y) : x > y; };
  std::vector<RowFiller> fillers;
  for (int h = 0; h < heads_; ++h) fillers.push_back(fill(h));
  row_values_.resize(cols_);
  row_codes_.resize(cols_);
  long used = 0;
  const int first = done_[layer];
  while (done_[layer] < rows && used < budget) {
    const int r = done_[layer];
    const int t = thumb_row_of(r);
    const bool block_start = r == 0 || thumb_row_of(r - 1) != t;
    for (int h = 0; h < heads_; ++h) {
      fillers[h](r, row_values_.data(), row_codes_.data());
      float* out_v = values_.data() + (std::size_t(layer) * tr_ + t) * atlas_w + std::size_t(h) * tc_;
      uint8_t* out_c = codes_.data() + (std::size_t(layer) * tr_ + t) * atlas_w + std::size_t(h) * tc_;
      for (int c = 0; c < tc_; ++c) {
        const int p0 = int(int64_t(c) * cols_ / tc_), p1 = std::max(p0 + 1, int(int64_t(c + 1) * cols_ / tc_));
        float best = std::numeric_limits<float>::quiet_NaN();
        uint8_t code = kNotSeen;
        for (int p = p0; p < p1; ++p) {
          const float v = row_values_[p];
          if (!std::isnan(v) && (std::isnan(best) || stronger(v, best))) best = v;
          if (priority(row_codes_[p]) > priority(code)) code = row_codes_[p];
        }
        // Rows in one thumbnail row: values keep their strongest; the code
        // is the latest row's (the mask as it now stands).
        if (block_start || std::isnan(out_v[c])) out_v[c] = best;
        else if (!std::isnan(best) && stronger(best, out_v[c])) out_v[c] = best;
        if (block_start || code != kNotSeen) out_c[c] = code;
      }
    }
    used += long(heads_) * cols_;
    ++done_[layer];
  }
  const int t0 = thumb_row_of(first), t1 = thumb_row_of(done_[layer] - 1);
  dirty_.push_back({layer * tr_ + t0, t1 - t0 + 1});
  return used;
}

void ThumbnailAtlas::upload_pending() {
  if (dirty_.empty()) return;
  const std::size_t atlas_w = std::size_t(heads_) * tc_;
  for (auto [row0, n] : dirty_)
    texture_.upload(row0, n, values_.data() + row0 * atlas_w, codes_.data() + row0 * atlas_w);
  dirty_.clear();
  extent_ = {};
  extent_.add(std::span<const float>(values_));
  // The percentile over an even sample of at most ~64k cells (a few
  // hundred microseconds, at every upload).
  sample_.clear();
  const std::size_t stride = std::max<std::size_t>(1, values_.size() / 65536);
  for (std::size_t i = 0; i < values_.size(); i += stride)
    if (std::isfinite(values_[i]) && values_[i] != 0) sample_.push_back(std::fabs(values_[i]));
  robust_ = extent_;
  if (!sample_.empty()) {
    // Differences are sparse and heavy-tailed (a few cells where one side
    // evicted a token the head reads) over a floor of small changes: their
    // range leaves out the top 20%, so a thumbnail shows where A and B part.
    const std::size_t percent = by_magnitude_ ? 80 : 99;
    const auto at = sample_.begin() + std::ptrdiff_t((sample_.size() - 1) * percent / 100);
    std::nth_element(sample_.begin(), at, sample_.end());
    const double top = *at;
    if (by_magnitude_) {
      robust_.min = -top;
      robust_.max = top;
    } else if (top > robust_.min) {
      robust_.max = top;
    }
  }
}

}  // namespace kvscope::gui
