#include "backend/leverage_scores.h"

#include <cmath>

#include "model/rope.h"

namespace kvscope {

void unrotate_keys(float* keys, int len, int hd, const int* rope_pos, const std::vector<float>& inv_freq) {
  if (inv_freq.empty()) return;
  for (int j = 0; j < len; ++j)
    rope_rotate(keys + static_cast<long>(j) * hd, inv_freq, -static_cast<float>(rope_pos[j]));
}

namespace {

// Lower Cholesky factor of the hd x hd matrix g + jitter I, in place of l;
// false when a pivot is not positive.
bool cholesky(const std::vector<double>& g, int hd, double jitter, std::vector<double>& l) {
  l.assign(g.size(), 0.0);
  for (int i = 0; i < hd; ++i)
    for (int k = 0; k <= i; ++k) {
      double sum = g[static_cast<std::size_t>(i) * hd + k] + (i == k ? jitter : 0.0);
      for (int m = 0; m < k; ++m)
        sum -= l[static_cast<std::size_t>(i) * hd + m] * l[static_cast<std::size_t>(k) * hd + m];
      if (i == k) {
        if (!(sum > 0.0)) return false;
        l[static_cast<std::size_t>(i) * hd + i] = std::sqrt(sum);
      } else {
        l[static_cast<std::size_t>(i) * hd + k] = sum / l[static_cast<std::size_t>(k) * hd + k];
      }
    }
  return true;
}

}  // namespace

void leverage_scores(const float* keys, int len, int hd, float* out) {
  if (len <= 0) return;
  std::vector<double> mean(hd, 0.0), x(static_cast<std::size_t>(len) * hd), g(static_cast<std::size_t>(hd) * hd, 0.0);
  for (int j = 0; j < len; ++j)
    for (int d = 0; d < hd; ++d) mean[d] += keys[static_cast<std::size_t>(j) * hd + d];
  for (int d = 0; d < hd; ++d) mean[d] /= len;
  for (int j = 0; j < len; ++j)
    for (int d = 0; d < hd; ++d)
      x[static_cast<std::size_t>(j) * hd + d] = keys[static_cast<std::size_t>(j) * hd + d] - mean[d];
  for (int j = 0; j < len; ++j) {
    const double* r = &x[static_cast<std::size_t>(j) * hd];
    for (int a = 0; a < hd; ++a)
      for (int b = 0; b <= a; ++b) g[static_cast<std::size_t>(a) * hd + b] += r[a] * r[b];
  }
  for (int a = 0; a < hd; ++a)
    for (int b = 0; b < a; ++b) g[static_cast<std::size_t>(b) * hd + a] = g[static_cast<std::size_t>(a) * hd + b];
  std::vector<double> l;
  bool ok = cholesky(g, hd, 0.0, l);
  for (double jitter = 1e-2; !ok && jitter < 1e2; jitter *= 10) ok = cholesky(g, hd, jitter, l);
  std::vector<double> y(hd);
  for (int j = 0; j < len; ++j) {
    if (!ok) {  // nothing to rank by (all keys equal): every key alike
      out[j] = 0.0f;
      continue;
    }
    // h = |L^-1 x|^2, by forward substitution.
    const double* r = &x[static_cast<std::size_t>(j) * hd];
    double h = 0.0;
    for (int i = 0; i < hd; ++i) {
      double sum = r[i];
      for (int m = 0; m < i; ++m) sum -= l[static_cast<std::size_t>(i) * hd + m] * y[m];
      y[i] = sum / l[static_cast<std::size_t>(i) * hd + i];
      h += y[i] * y[i];
    }
    out[j] = static_cast<float>(h);
  }
}

}  // namespace kvscope
