// Linear layers, cpu::linear's twin: y = x W^T + b (y += ... with accumulate).
//
// Decode (n == 1) is bound by reading W once: gemv_kernel gives each warp one
// output row, streams the row in 16-byte loads (8 weights), four loads in
// flight per lane, multiplies by fp32 x and sums in fp32.
//
// Prefill (n > 1) runs cuBLAS. cuBLAS wants both operands 16-bit, and
// rounding the activations to bf16 moved greedy tokens on the golden models
// (measured with a CPU emulation), so x is split into hi = T(x) and
// lo = T(x - hi) and y = W hi + W lo: ~16 (bf16) or ~22 (fp16) significant
// bits of x, fp32 accumulation, twice the FLOPs of a plain GEMM.
#include "backend/cuda/common.cuh"
#include "backend/cuda/cublas_library.h"
#include "common/error.h"

namespace kvscope::cuda {
namespace {

constexpr int kGemvThreads = 256;  // 8 warps: 8 output rows per block
constexpr int kUnroll = 4;         // independent 16-byte loads in flight per lane

// acc += w[0..7] . x[0..7], w packed in a uint4 of 8 16-bit values.
template <class T>
__device__ __forceinline__ float dot8(const uint4& w, const float4* x, float acc) {
  using P = typename Pair<T>::type;
  const P* p = reinterpret_cast<const P*>(&w);
  const float4 a = __ldg(x), b = __ldg(x + 1);
  float2 f = to_f32x2(p[0]);
  acc = fmaf(f.x, a.x, acc);
  acc = fmaf(f.y, a.y, acc);
  f = to_f32x2(p[1]);
  acc = fmaf(f.x, a.z, acc);
  acc = fmaf(f.y, a.w, acc);
  f = to_f32x2(p[2]);
  acc = fmaf(f.x, b.x, acc);
  acc = fmaf(f.y, b.y, acc);
  f = to_f32x2(p[3]);
  acc = fmaf(f.x, b.z, acc);
  acc = fmaf(f.y, b.w, acc);
  return acc;
}

// kVec: W rows and x are 16-byte aligned (checked by the launcher).
template <class T, bool kVec>
__global__ void __launch_bounds__(kGemvThreads)
    gemv_kernel(const T* __restrict__ W, int64_t ld, int in, int out, const float* __restrict__ x,
                const float* __restrict__ bias, float* __restrict__ y, bool accumulate) {
  const int lane = threadIdx.x & 31;
  const int row = blockIdx.x * (kGemvThreads / 32) + (threadIdx.x >> 5);
  if (row >= out) return;  // whole warps leave; no block barrier follows
  const T* w = W + int64_t(row) * ld;
  float acc = 0.0f;
  int done = 0;
  if constexpr (kVec) {
    const int n8 = in / 8;
    const uint4* w8 = reinterpret_cast<const uint4*>(w);
    const float4* x4 = reinterpret_cast<const float4*>(x);
    int c = lane;
    for (; c + 32 * (kUnroll - 1) < n8; c += 32 * kUnroll) {
      uint4 v[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) v[u] = __ldcs(w8 + c + 32 * u);  // streamed: read once per step
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) acc = dot8<T>(v[u], x4 + 2 * (c + 32 * u), acc);
    }
    for (; c < n8; c += 32) acc = dot8<T>(__ldcs(w8 + c), x4 + 2 * c, acc);
    done = n8 * 8;
  }
  for (int k = done + lane; k < in; k += 32) acc = fmaf(to_f32(w[k]), x[k], acc);  // tail (or everything)
  acc = warp_reduce(acc, SumOp{});
  if (lane == 0) {
    float r = acc;
    if (bias) r = r + bias[row];          // y = x W^T + b
    y[row] = accumulate ? y[row] + r : r;  // x += y (the residual)
  }
}

// hi = T(x), lo = T(x - hi); x - hi is exact in fp32.
template <class T>
__global__ void split_kernel(const float* x, int n, int in, int64_t ld, T* hi, T* lo) {
  const int64_t total = int64_t(n) * in;
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < total; e += int64_t(gridDim.x) * blockDim.x) {
    const int64_t r = e / in, c = e % in;
    const float v = x[e];
    const T h = from_f32<T>(v);
    hi[r * ld + c] = h;
    lo[r * ld + c] = from_f32<T>(v - to_f32(h));
  }
}

__global__ void bias_add_kernel(float* y, int n, int out, const float* b) {
  const int64_t total = int64_t(n) * out;
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < total; e += int64_t(gridDim.x) * blockDim.x)
    y[e] += b[e % out];
}

}  // namespace

std::size_t linear_scratch_bytes(int n, int in) { return std::size_t(2) * n * round_up(in, 8) * 2; }

void linear(const DeviceLinear& W, const float* x, int n, float* y, bool accumulate, void* scratch,
            std::size_t scratch_bytes, BlasHandle blas, Stream stream) {
  if (n <= 0 || W.out == 0) return;
  if (n == 1) {
    const bool vec = W.ld % 8 == 0 && reinterpret_cast<uintptr_t>(W.w) % 16 == 0 &&
                     reinterpret_cast<uintptr_t>(x) % 16 == 0;
    const unsigned blocks = static_cast<unsigned>((W.out + kGemvThreads / 32 - 1) / (kGemvThreads / 32));
    dispatch(W.type, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* w = static_cast<const T*>(W.w);
      if (vec) gemv_kernel<T, true><<<blocks, kGemvThreads, 0, stream>>>(w, W.ld, W.in, W.out, x, W.b, y, accumulate);
      else gemv_kernel<T, false><<<blocks, kGemvThreads, 0, stream>>>(w, W.ld, W.in, W.out, x, W.b, y, accumulate);
    });
    check_launch("gemv_kernel");
    return;
  }
  if (scratch_bytes < linear_scratch_bytes(n, W.in))
    throw Error("cuda", "linear", "scratch too small for " + std::to_string(n) + " rows");
  const int64_t ldx = round_up(W.in, 8);
  const cudaDataType dt = W.type == WType::BF16 ? CUDA_R_16BF : CUDA_R_16F;
  void* hi = scratch;
  void* lo = static_cast<char*>(scratch) + std::size_t(n) * ldx * 2;
  dispatch(W.type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    split_kernel<T><<<grid_for(int64_t(n) * W.in, 256), 256, 0, stream>>>(x, n, W.in, ldx, static_cast<T*>(hi),
                                                                           static_cast<T*>(lo));
  });
  check_launch("split_kernel");
  // Row-major y[n][out] = x[n][in] W^T is column-major y^T (out x n) =
  // W (W^T stored column-major, in x out, ld) transposed times x^T (in x n).
  cudaStream_t bound = nullptr;
  KVSCOPE_CUDA(cublas().cublasGetStream(blas, &bound));
  if (bound != stream) KVSCOPE_CUDA(cublas().cublasSetStream(blas, stream));
  const float one = 1.0f, zero = 0.0f;
  KVSCOPE_CUDA(cublas().cublasGemmEx(blas, CUBLAS_OP_T, CUBLAS_OP_N, W.out, n, W.in, &one, W.w, dt,
                                     static_cast<int>(W.ld), hi, dt, static_cast<int>(ldx), accumulate ? &one : &zero,
                                     y, CUDA_R_32F, W.out, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  KVSCOPE_CUDA(cublas().cublasGemmEx(blas, CUBLAS_OP_T, CUBLAS_OP_N, W.out, n, W.in, &one, W.w, dt,
                                     static_cast<int>(W.ld), lo, dt, static_cast<int>(ldx), &one, y, CUDA_R_32F, W.out,
                                     CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  if (W.b) {
    bias_add_kernel<<<grid_for(int64_t(n) * W.out, 256), 256, 0, stream>>>(y, n, W.out, W.b);
    check_launch("bias_add_kernel");
  }
}

}  // namespace kvscope::cuda
