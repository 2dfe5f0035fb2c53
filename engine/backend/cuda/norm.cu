// LayerNorm and RMSNorm, one block per row: cpu::layer_norm and
// cpu::rms_norm with the same double-precision statistics and the same fp32
// operation order (the __f*_rn intrinsics keep FMA contraction out).
#include "backend/cuda/common.cuh"

namespace kvscope::cuda {
namespace {

constexpr int kThreads = 256;

__global__ void layer_norm_kernel(const float* x, int d, const float* w, const float* b, double eps, float* y) {
  __shared__ double scratch[33];
  const float* r = x + int64_t(blockIdx.x) * d;
  float* o = y + int64_t(blockIdx.x) * d;
  double s = 0;
  for (int j = threadIdx.x; j < d; j += blockDim.x) s += r[j];
  const double mean = block_reduce(s, SumOp{}, scratch) / d;
  double v = 0;
  for (int j = threadIdx.x; j < d; j += blockDim.x) {
    const double t = r[j] - mean;
    v = __dadd_rn(v, __dmul_rn(t, t));
  }
  const double var = block_reduce(v, SumOp{}, scratch) / d;
  const float inv = static_cast<float>(1.0 / sqrt(var + eps));
  const float m = static_cast<float>(mean);
  for (int j = threadIdx.x; j < d; j += blockDim.x)
    o[j] = __fadd_rn(__fmul_rn(__fmul_rn(__fsub_rn(r[j], m), inv), w[j]), b ? b[j] : 0.0f);
}

__global__ void rms_norm_kernel(const float* x, int d, const float* w, double eps, float* y) {
  __shared__ double scratch[33];
  const float* r = x + int64_t(blockIdx.x) * d;
  float* o = y + int64_t(blockIdx.x) * d;
  double ss = 0;
  for (int j = threadIdx.x; j < d; j += blockDim.x) ss = __dadd_rn(ss, __dmul_rn(double(r[j]), double(r[j])));
  ss = block_reduce(ss, SumOp{}, scratch);
  const float inv = static_cast<float>(1.0 / sqrt(ss / d + eps));
  for (int j = threadIdx.x; j < d; j += blockDim.x) o[j] = __fmul_rn(w[j], __fmul_rn(r[j], inv));
}

// RMSNorm over each head of a projection in place (Qwen3's q and k norms):
// row r of n, head h of `heads`, at x + r * stride + col0 + h * hd; block
// r * heads + h. The same statistics and order as rms_norm_kernel, so as
// cpu::rms_norm over the heads' rows.
__global__ void rms_norm_heads_kernel(float* x, int stride, int col0, int heads, int hd, const float* w, double eps) {
  __shared__ double scratch[33];
  const int row = blockIdx.x / heads, h = blockIdx.x % heads;
  float* r = x + int64_t(row) * stride + col0 + int64_t(h) * hd;
  double ss = 0;
  for (int j = threadIdx.x; j < hd; j += blockDim.x) ss = __dadd_rn(ss, __dmul_rn(double(r[j]), double(r[j])));
  ss = block_reduce(ss, SumOp{}, scratch);  // every thread has read its values before any writes
  const float inv = static_cast<float>(1.0 / sqrt(ss / hd + eps));
  for (int j = threadIdx.x; j < hd; j += blockDim.x) r[j] = __fmul_rn(w[j], __fmul_rn(r[j], inv));
}

}  // namespace

void rms_norm_heads(float* x, int n, int stride, int col0, int heads, int hd, const float* w, double eps,
                    Stream stream) {
  if (n == 0 || heads == 0) return;
  rms_norm_heads_kernel<<<n * heads, kThreads, 0, stream>>>(x, stride, col0, heads, hd, w, eps);
  check_launch("rms_norm_heads_kernel");
}

void layer_norm(const float* x, int n, int d, const float* w, const float* b, double eps, float* y, Stream stream) {
  if (n == 0) return;
  layer_norm_kernel<<<n, kThreads, 0, stream>>>(x, d, w, b, eps, y);
  check_launch("layer_norm_kernel");
}

void rms_norm(const float* x, int n, int d, const float* w, double eps, float* y, Stream stream) {
  if (n == 0) return;
  rms_norm_kernel<<<n, kThreads, 0, stream>>>(x, d, w, eps, y);
  check_launch("rms_norm_kernel");
}

}  // namespace kvscope::cuda
