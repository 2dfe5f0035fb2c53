// MLP activations, element by element: cpu::gelu_tanh, cpu::gelu_erf,
// cpu::silu, cpu::relu and cpu::silu_mul, in the same fp32 operation order (no FMA
// contraction). Only tanhf / erff / expf may differ from glibc's by an ulp.
#include <cmath>

#include "backend/cuda/common.cuh"

namespace kvscope::cuda {
namespace {

constexpr int kThreads = 256;

// 0.5 v (1 + tanh(k (v + 0.044715 v^3))), k = sqrt(2 / pi) as the CPU forms it.
__global__ void gelu_tanh_kernel(float* x, int64_t n, float k) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const float v = x[i];
    const float cube = __fmul_rn(__fmul_rn(__fmul_rn(0.044715f, v), v), v);
    const float t = tanhf(__fmul_rn(k, __fadd_rn(v, cube)));
    x[i] = __fmul_rn(__fmul_rn(0.5f, v), __fadd_rn(1.0f, t));
  }
}

// 0.5 v (1 + erf(v / sqrt 2)).
__global__ void gelu_erf_kernel(float* x, int64_t n, float rsqrt2) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const float v = x[i];
    x[i] = __fmul_rn(__fmul_rn(0.5f, v), __fadd_rn(1.0f, erff(__fmul_rn(v, rsqrt2))));
  }
}

__device__ __forceinline__ float silu_f(float v) { return __fdiv_rn(v, __fadd_rn(1.0f, expf(-v))); }

__global__ void silu_kernel(float* x, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    x[i] = silu_f(x[i]);
}

__global__ void relu_kernel(float* x, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    x[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

__global__ void clamp_kernel(float* x, int64_t n, float c) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    x[i] = x[i] < -c ? -c : (c < x[i] ? c : x[i]);  // std::clamp(v, -c, c); NaN passes through
}

// Row i of the fused projection holds gate (ff values) then up (ff values).
__global__ void silu_mul_kernel(const float* gate_up, int n, int ff, float* act) {
  const int64_t total = int64_t(n) * ff;
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < total; e += int64_t(gridDim.x) * blockDim.x) {
    const int64_t i = e / ff, j = e % ff;
    const float g = gate_up[i * 2 * ff + j];
    const float u = gate_up[i * 2 * ff + ff + j];
    act[e] = __fmul_rn(silu_f(g), u);
  }
}

}  // namespace

void gelu_tanh(float* x, int64_t n, Stream stream) {
  if (n == 0) return;
  const float k = std::sqrt(2.0f / static_cast<float>(M_PI));  // exactly as cpu::gelu_tanh
  gelu_tanh_kernel<<<grid_for(n, kThreads), kThreads, 0, stream>>>(x, n, k);
  check_launch("gelu_tanh_kernel");
}

void gelu_erf(float* x, int64_t n, Stream stream) {
  if (n == 0) return;
  gelu_erf_kernel<<<grid_for(n, kThreads), kThreads, 0, stream>>>(x, n, static_cast<float>(M_SQRT1_2));
  check_launch("gelu_erf_kernel");
}

void silu(float* x, int64_t n, Stream stream) {
  if (n == 0) return;
  silu_kernel<<<grid_for(n, kThreads), kThreads, 0, stream>>>(x, n);
  check_launch("silu_kernel");
}

void relu(float* x, int64_t n, Stream stream) {
  if (n == 0) return;
  relu_kernel<<<grid_for(n, kThreads), kThreads, 0, stream>>>(x, n);
  check_launch("relu_kernel");
}

void clamp(float* x, int64_t n, float c, Stream stream) {
  if (n == 0) return;
  clamp_kernel<<<grid_for(n, kThreads), kThreads, 0, stream>>>(x, n, c);
  check_launch("clamp_kernel");
}

void silu_mul(const float* gate_up, int n, int ff, float* act, Stream stream) {
  if (n == 0) return;
  silu_mul_kernel<<<grid_for(int64_t(n) * ff, kThreads), kThreads, 0, stream>>>(gate_up, n, ff, act);
  check_launch("silu_mul_kernel");
}

}  // namespace kvscope::cuda
