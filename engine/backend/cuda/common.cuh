// Device helpers shared by the kernels: 16-bit <-> float, warp and block
// reductions, and the dispatch from WType to a C++ element type.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "backend/cuda/cuda_check.h"
#include "backend/cuda/cuda_ops.h"

namespace kvscope::cuda {

// The first key / value row of segment `seg`'s slots (KvCache: its region,
// from its start row).
__device__ __forceinline__ int64_t kv_first_row(const KvCache& kv, int seg) {
  return int64_t(seg) * kv.region + kv.start[seg];
}

__device__ __forceinline__ float to_f32(__half v) { return __half2float(v); }
__device__ __forceinline__ float to_f32(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ float2 to_f32x2(__half2 v) { return __half22float2(v); }
__device__ __forceinline__ float2 to_f32x2(__nv_bfloat162 v) { return __bfloat1622float2(v); }

// Round to nearest even, as the host's f32_to_f16 / f32_to_bf16.
template <class T>
__device__ __forceinline__ T from_f32(float v);
template <>
__device__ __forceinline__ __half from_f32<__half>(float v) {
  return __float2half_rn(v);
}
template <>
__device__ __forceinline__ __nv_bfloat16 from_f32<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}

// Pairs, for 16-byte loads of 8 elements.
template <class T>
struct Pair;
template <>
struct Pair<__half> {
  using type = __half2;
};
template <>
struct Pair<__nv_bfloat16> {
  using type = __nv_bfloat162;
};

template <class T>
struct Tag {
  using type = T;
};
// Calls f(Tag<T>{}) with T the element type of `t`.
template <class F>
void dispatch(WType t, F&& f) {
  if (t == WType::F16) f(Tag<__half>{});
  else f(Tag<__nv_bfloat16>{});
}

struct SumOp {
  template <class T>
  __device__ __forceinline__ T operator()(T a, T b) const {
    return a + b;
  }
};
struct MaxOp {
  __device__ __forceinline__ float operator()(float a, float b) const { return fmaxf(a, b); }
  __device__ __forceinline__ int operator()(int a, int b) const { return a > b ? a : b; }
};
struct MinOp {
  __device__ __forceinline__ int operator()(int a, int b) const { return a < b ? a : b; }
};

// Butterfly reduction: every lane ends with the same value (a + b == b + a).
template <class T, class Op>
__device__ __forceinline__ T warp_reduce(T v, Op op) {
  for (int o = 16; o > 0; o >>= 1) v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

// Block-wide reduction returned to every thread; blockDim.x a multiple of 32.
// `scratch` holds 33 values. Deterministic: warps reduce by butterfly, thread
// 0 combines the warp results in warp order.
template <class T, class Op>
__device__ T block_reduce(T v, Op op, T* scratch) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, n_warps = blockDim.x >> 5;
  v = warp_reduce(v, op);
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  if (threadIdx.x == 0) {
    T r = scratch[0];
    for (int w = 1; w < n_warps; ++w) r = op(r, scratch[w]);
    scratch[32] = r;
  }
  __syncthreads();
  const T r = scratch[32];
  __syncthreads();  // scratch may be reused at once
  return r;
}

// Blocks for a grid-stride loop over n elements.
inline unsigned grid_for(int64_t n, int threads) {
  const int64_t b = (n + threads - 1) / threads;
  return static_cast<unsigned>(b < 1 ? 1 : (b > 65536 ? 65536 : b));
}

}  // namespace kvscope::cuda
