#include "backend/expected_attention.h"

#include <algorithm>
#include <cmath>

namespace kvscope {

void QueryMoments::ensure(int n_layers, int n_heads, int hd) {
  if (!count_.empty()) return;
  heads_ = n_heads;
  hd_ = hd;
  const std::size_t pairs = std::size_t(n_layers) * n_heads;
  count_.assign(pairs, 0);
  sum_.assign(pairs * hd, 0.0);
  outer_.assign(pairs * hd * hd, 0.0);
}

void QueryMoments::add(int layer, int head, const float* q, int n, int row_stride, int first_pos, int sinks) {
  const std::size_t at = index(layer, head);
  double* s = sum_.data() + at * hd_;
  double* o = outer_.data() + at * hd_ * hd_;
  for (int i = std::max(0, sinks - first_pos); i < n; ++i) {
    const float* x = q + std::size_t(i) * row_stride + std::size_t(head) * hd_;
    for (int a = 0; a < hd_; ++a) {
      const double xa = x[a];
      s[a] += xa;
      double* row = o + std::size_t(a) * hd_;
      for (int b = a; b < hd_; ++b) row[b] += xa * static_cast<double>(x[b]);
    }
    ++count_[at];
  }
}

void mean_rotation(const std::vector<float>& inv_freq, int start, int F, std::vector<double>& cos_mean,
                   std::vector<double>& sin_mean) {
  const std::size_t half = inv_freq.size();
  cos_mean.assign(half, 0.0);
  sin_mean.assign(half, 0.0);
  for (int p = start; p < start + F; ++p)
    for (std::size_t i = 0; i < half; ++i) {
      const double angle = inv_freq[i] * static_cast<float>(p);  // the product in float, as HF forms it
      cos_mean[i] += std::cos(angle);
      sin_mean[i] += std::sin(angle);
    }
  for (std::size_t i = 0; i < half; ++i) {
    cos_mean[i] /= F;
    sin_mean[i] /= F;
  }
}

namespace {

// y = Rbar x in place: pairs (i, i + half) of the rotary dims, as
// rope_rotate rotates them (model/rope.h); the other dims stay.
void apply_mean_rotation(double* x, const std::vector<double>& c, const std::vector<double>& s) {
  const std::size_t half = c.size();
  for (std::size_t i = 0; i < half; ++i) {
    const double a = x[i], b = x[i + half];
    x[i] = c[i] * a - s[i] * b;
    x[i + half] = c[i] * b + s[i] * a;
  }
}

}  // namespace

void expected_attention_scores(const float* keys, const float* values, int len, int hd,
                               std::span<const ExpectedReader> readers, int future_start, const SlotStatRule& rule,
                               float* out) {
  if (len <= 0) return;
  const int S = std::min(std::max(rule.sinks, 0), len);
  const bool covariance = !(rule.variant & kExpectedNoCovariance);
  const std::size_t d = std::size_t(hd);
  std::vector<double> acc(len, 0.0), mu(d), sigma(d * d), logit(len), col(d), u(d), c, s;
  const std::vector<float>* rotated_for = nullptr;  // the frequencies c and s were averaged for
  for (const ExpectedReader& r : readers) {
    // mu and Sigma (biased), the full symmetric matrix from the upper triangle.
    const double n = static_cast<double>(r.count);
    for (std::size_t a = 0; a < d; ++a) mu[a] = r.count > 0 ? r.sum[a] / n : 0.0;
    for (std::size_t a = 0; a < d; ++a)
      for (std::size_t b = a; b < d; ++b) {
        const double v = r.count > 0 ? r.outer[a * d + b] / n - mu[a] * mu[b] : 0.0;
        sigma[a * d + b] = sigma[b * d + a] = v;
      }
    // mu' = Rbar mu; Sigma' = Rbar Sigma Rbar^T: Rbar on every column, then on every row.
    if (r.inv_freq && !r.inv_freq->empty()) {
      // The readers of one layer share its RoPE: average it once for them.
      if (r.inv_freq != rotated_for) mean_rotation(*r.inv_freq, future_start, rule.span, c, s);
      rotated_for = r.inv_freq;
      apply_mean_rotation(mu.data(), c, s);
      for (std::size_t b = 0; b < d; ++b) {
        for (std::size_t a = 0; a < d; ++a) col[a] = sigma[a * d + b];
        apply_mean_rotation(col.data(), c, s);
        for (std::size_t a = 0; a < d; ++a) sigma[a * d + b] = col[a];
      }
      for (std::size_t a = 0; a < d; ++a) apply_mean_rotation(sigma.data() + a * d, c, s);
    }
    double top = -INFINITY;
    for (int j = S; j < len; ++j) {
      const float* k = keys + std::size_t(j) * d;
      double lin = 0.0, quad = 0.0;
      for (std::size_t a = 0; a < d; ++a) lin += k[a] * mu[a];
      if (covariance) {
        // u = Sigma' k as a sum of Sigma's rows (symmetric), each u[a]
        // summed in the same order: a loop the compiler vectorises
        // without reordering any sum, so every instruction set agrees.
        std::fill(u.begin(), u.end(), 0.0);
        for (std::size_t b = 0; b < d; ++b) {
          const double* row = sigma.data() + b * d;
          const double kb = k[b];
          for (std::size_t a = 0; a < d; ++a) u[a] += row[a] * kb;
        }
        for (std::size_t a = 0; a < d; ++a) quad += k[a] * u[a];
      }
      logit[j] = lin / std::sqrt(static_cast<double>(hd)) + quad / (2.0 * hd);
      top = std::max(top, logit[j]);
    }
    double total = 0.0;
    for (int j = S; j < len; ++j) total += logit[j] = std::exp(logit[j] - top);
    for (int j = S; j < len; ++j) acc[j] += logit[j] / total;
  }
  double best = -INFINITY;
  for (int j = S; j < len; ++j) {
    double score = readers.empty() ? 0.0 : acc[j] / static_cast<double>(readers.size());
    if (!(rule.variant & kExpectedNoValueNorm)) {
      const float* v = values + std::size_t(j) * d;
      double sq = 0.0;
      for (std::size_t a = 0; a < d; ++a) sq += static_cast<double>(v[a]) * v[a];
      score *= std::sqrt(sq);
    }
    out[j] = static_cast<float>(score);
    best = std::max(best, score);
  }
  // kvpress pads its sinks with the maximum + 1 so they stay (kvscope's
  // selection protects them anyway); the score views show them on top.
  for (int j = 0; j < S; ++j) out[j] = static_cast<float>(S < len ? best + 1.0 : 1.0);
}

}  // namespace kvscope
