#include "backend/cpu/cpu_ops.h"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>

#include "backend/parallel.h"

namespace kvscope::cpu {

Linear Linear::from(const WeightTensor& w, const WeightTensor& b) {
  Linear L;
  if (w.empty()) return L;
  L.out = static_cast<int>(w.rows());
  L.in = static_cast<int>(w.cols());
  L.w = w.to_f32();
  if (!b.empty()) L.b = b.to_f32();
  return L;
}

// One band of output features [r0, r1): OpenBLAS on its own thread (the
// backend's pool owns the parallelism), the same kernel for every band.
void linear_rows(const float* x, int n, const Linear& W, float* y, int r0, int r1) {
  const float* w = W.w.data() + int64_t(r0) * W.in;
  if (n == 1) {
    cblas_sgemv(CblasRowMajor, CblasNoTrans, r1 - r0, W.in, 1.0f, w, W.in, x, 1, 0.0f, y + r0, 1);
  } else {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, r1 - r0, W.in, 1.0f, x, W.in, w, W.in, 0.0f, y + r0,
                W.out);
  }
  if (!W.b.empty()) {
    for (int i = 0; i < n; ++i)
      for (int j = r0; j < r1; ++j) y[static_cast<int64_t>(i) * W.out + j] += W.b[j];
  }
}

namespace {
// Below this many multiply-adds a product is not worth handing out.
constexpr int64_t kParallelMacs = 8192;
}  // namespace

void use_single_threaded_blas() {
  static std::once_flag once;
  std::call_once(once, [] { openblas_set_num_threads(1); });
}

void linear(const float* x, int n, const Linear& W, float* y) {
  use_single_threaded_blas();
  const int64_t macs = int64_t(n) * W.out * W.in;
  // Bands of 64 features keep every band on the kernels' full-width path.
  const Split s = split_evenly(W.out, 64, macs < kParallelMacs ? 1 : pool_threads());
  if (s.parts == 1) return linear_rows(x, n, W, y, 0, W.out);
  parallel_for(s.parts, [&](int p) {
    linear_rows(x, n, W, y, static_cast<int>(s.begin(p)), static_cast<int>(s.end(p)));
  });
}

void layer_norm(const float* x, int n, int d, const float* w, const float* b, double eps, float* y) {
  for (int i = 0; i < n; ++i) {
    const float* r = x + static_cast<int64_t>(i) * d;
    float* o = y + static_cast<int64_t>(i) * d;
    double mean = 0;
    for (int j = 0; j < d; ++j) mean += r[j];
    mean /= d;
    double var = 0;
    for (int j = 0; j < d; ++j) var += (r[j] - mean) * (r[j] - mean);
    var /= d;
    const float inv = static_cast<float>(1.0 / std::sqrt(var + eps));
    const float m = static_cast<float>(mean);
    for (int j = 0; j < d; ++j) o[j] = (r[j] - m) * inv * w[j] + (b ? b[j] : 0.0f);
  }
}

void rms_norm(const float* x, int n, int d, const float* w, double eps, float* y) {
  for (int i = 0; i < n; ++i) {
    const float* r = x + static_cast<int64_t>(i) * d;
    float* o = y + static_cast<int64_t>(i) * d;
    double ss = 0;
    for (int j = 0; j < d; ++j) ss += static_cast<double>(r[j]) * r[j];
    const float inv = static_cast<float>(1.0 / std::sqrt(ss / d + eps));
    for (int j = 0; j < d; ++j) o[j] = w[j] * (r[j] * inv);
  }
}

void gelu_tanh(float* x, int64_t n) {
  const float k = std::sqrt(2.0f / static_cast<float>(M_PI));
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i];
    x[i] = 0.5f * v * (1.0f + std::tanh(k * (v + 0.044715f * v * v * v)));
  }
}

void gelu_erf(float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] = 0.5f * x[i] * (1.0f + std::erf(x[i] * static_cast<float>(M_SQRT1_2)));
}

void silu(float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] = x[i] / (1.0f + std::exp(-x[i]));
}

void silu_mul(float* gate, const float* up, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float g = gate[i];
    gate[i] = g / (1.0f + std::exp(-g)) * up[i];
  }
}

void softmax_row(float* x, int n) {
  float mx = -std::numeric_limits<float>::infinity();
  for (int j = 0; j < n; ++j) mx = std::max(mx, x[j]);
  double sum = 0;
  for (int j = 0; j < n; ++j) {
    const float e = x[j] == -std::numeric_limits<float>::infinity() ? 0.0f : std::exp(x[j] - mx);
    x[j] = e;
    sum += e;
  }
  const float inv = static_cast<float>(1.0 / sum);
  for (int j = 0; j < n; ++j) x[j] *= inv;
}

}  // namespace kvscope::cpu
