// Expected attention (Devoto et al. 2025, "Expected Attention: KV Cache
// Compression by Estimating Attention from Future Queries Distribution";
// kvpress's ExpectedAttentionPress), for StatSource::Expected. Host code run
// by both backends: the CPU backend on its cache, the CUDA backend on the
// keys and values it reads back after each call. The queries' moments come
// from each backend's forward call, taken before RoPE.
//
// For a KV segment and each query head q that reads it, with mu and Sigma
// the mean and (biased) covariance of q's queries before RoPE over the
// positions past the sinks, and Rbar the mean of the RoPE matrices of the
// next F positions (their rotation starts where the next token's would):
//   logit_j = k_j . (Rbar mu) / sqrt(d) + k_j^T (Rbar Sigma Rbar^T) k_j / (2 d)
// over the cached (rotated) keys of the slots past the sinks, softmax over
// those slots, mean over the readers, times |v_j|_2. The sinks score the
// maximum + 1, as kvpress pads them. All in double: kvpress computes in
// float32, and the goldens' smallest relative gap at a budget boundary is
// 7e-4, far above either's rounding.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "backend/slot_stats.h"

namespace kvscope {

// Running sums of the pre-RoPE queries of every (layer, query head): the
// count, sum q and the upper triangle of sum q q^T. Storage is made at the
// first add(), so a run of another policy holds none.
class QueryMoments {
 public:
  void clear() { count_.clear(), sum_.clear(), outer_.clear(); }
  bool empty() const { return count_.empty(); }
  // Adds the rows of query head `head` of layer `layer`: n rows of
  // `row_stride` floats starting at q (the head's hd floats at head * hd),
  // at positions first_pos, first_pos + 1, ...; those below `sinks` are left
  // out, as kvpress leaves out its n_sink first hidden states. Different
  // (layer, head) pairs may be added at the same time.
  void add(int layer, int head, const float* q, int n, int row_stride, int first_pos, int sinks);
  // Sizes the storage for a model; add() needs it first (not thread-safe).
  void ensure(int n_layers, int n_heads, int hd);
  int64_t count(int layer, int head) const { return count_[index(layer, head)]; }
  const double* sum(int layer, int head) const { return sum_.data() + index(layer, head) * hd_; }
  const double* outer(int layer, int head) const { return outer_.data() + index(layer, head) * hd_ * hd_; }

 private:
  std::size_t index(int layer, int head) const { return std::size_t(layer) * heads_ + head; }
  int heads_ = 0, hd_ = 0;
  std::vector<int64_t> count_;
  std::vector<double> sum_, outer_;
};

// One query head reading the segment: its moments and the RoPE of its layer.
struct ExpectedReader {
  int64_t count = 0;
  const double* sum = nullptr;                   // [hd]
  const double* outer = nullptr;                 // [hd * hd], upper triangle (row <= column) filled
  const std::vector<float>* inv_freq = nullptr;  // empty: no RoPE (Rbar = I)
};

// Bits of SlotStatRule::variant for StatSource::Expected.
constexpr int kExpectedNoCovariance = 1;  // the mean term alone (kvpress's use_covariance=False)
constexpr int kExpectedNoValueNorm = 2;   // no |v| factor (use_vnorm=False)

// The scores of `len` slots (keys and values: rows of hd floats, keys
// rotated) into out[0, len): rule.span is F, rule.sinks the slots left out
// of the softmax (the segment's first), rule.variant the bits above;
// future_start is the rotation of the next token in this segment.
void expected_attention_scores(const float* keys, const float* values, int len, int hd,
                               std::span<const ExpectedReader> readers, int future_start, const SlotStatRule& rule,
                               float* out);

// The mean over positions p = start .. start + F - 1 of cos and sin of
// p * inv_freq[i] (angles formed in float, as Hugging Face's rotary
// embedding forms them): Rbar's two diagonals.
void mean_rotation(const std::vector<float>& inv_freq, int start, int F, std::vector<double>& cos_mean,
                   std::vector<double>& sin_mean);

}  // namespace kvscope
