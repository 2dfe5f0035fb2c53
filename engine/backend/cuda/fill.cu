// Weights onto the device: the Philox random fill of benchmark shapes
// (bit-identical to WeightTensor::to_f32 + the 16-bit store) and the
// conversion of checkpoint tensors to fp16/bf16 rows or fp32 vectors.
#include "backend/cuda/common.cuh"
#include "common/counter_random.h"

namespace kvscope::cuda {
namespace {

// random_weight_value() (model/weights.cpp), operation for operation. The
// __f*_rn intrinsics are never contracted into FMAs, so every step rounds as
// the host's separate multiply and add do.
__device__ __forceinline__ float random_value(uint64_t seed, uint32_t id, int64_t i, float scale, float offset) {
  const auto r = philox4(seed, static_cast<uint32_t>(i >> 2), static_cast<uint32_t>(static_cast<uint64_t>(i) >> 34),
                         id, static_cast<uint32_t>(RandomStream::Weights));
  const float u = uniform01(r.v[i & 3]);
  return __fadd_rn(offset, __fmul_rn(__fsub_rn(__fmul_rn(2.0f, u), 1.0f), scale));
}

template <class T>
__global__ void fill_random_kernel(T* dst, int64_t rows, int64_t cols, int64_t ld, uint64_t seed, uint32_t id,
                                   float scale, float offset) {
  const int64_t n = rows * cols;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t r = i / cols, c = i % cols;
    dst[r * ld + c] = from_f32<T>(random_value(seed, id, i, scale, offset));
  }
}

__global__ void fill_random_f32_kernel(float* dst, int64_t n, uint64_t seed, uint32_t id, float scale, float offset) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    dst[i] = random_value(seed, id, i, scale, offset);
}

// convert_to_f32 (io/dtype.cpp) for one element: f16 and bf16 widen exactly.
__device__ __forceinline__ float load_f32(DType t, const void* p, int64_t i) {
  switch (t) {
    case DType::F16: return __half2float(static_cast<const __half*>(p)[i]);
    case DType::BF16: return __bfloat162float(static_cast<const __nv_bfloat16*>(p)[i]);
    default: return static_cast<const float*>(p)[i];
  }
}

template <class T>
__global__ void convert_rows_kernel(DType src_type, const void* src, int64_t rows, int64_t cols, T* dst, int64_t ld,
                                    bool same_type) {
  const int64_t n = rows * cols;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t r = i / cols, c = i % cols;
    if (same_type) dst[r * ld + c] = static_cast<const T*>(src)[i];  // bit copy
    else dst[r * ld + c] = from_f32<T>(load_f32(src_type, src, i));
  }
}

__global__ void convert_to_f32_kernel(DType src_type, const void* src, int64_t n, float* dst) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    dst[i] = load_f32(src_type, src, i);
}

constexpr int kThreads = 256;

}  // namespace

void fill_random(WType t, void* dst, int64_t rows, int64_t cols, int64_t ld, uint64_t seed, uint32_t id, float scale,
                 float offset, Stream stream) {
  if (rows * cols == 0) return;
  dispatch(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    fill_random_kernel<T><<<grid_for(rows * cols, kThreads), kThreads, 0, stream>>>(static_cast<T*>(dst), rows, cols,
                                                                                     ld, seed, id, scale, offset);
  });
  check_launch("fill_random_kernel");
}

void fill_random_f32(float* dst, int64_t n, uint64_t seed, uint32_t id, float scale, float offset, Stream stream) {
  if (n == 0) return;
  fill_random_f32_kernel<<<grid_for(n, kThreads), kThreads, 0, stream>>>(dst, n, seed, id, scale, offset);
  check_launch("fill_random_f32_kernel");
}

void convert_rows(DType src_type, const void* src, int64_t rows, int64_t cols, WType t, void* dst, int64_t ld,
                  Stream stream) {
  if (rows * cols == 0) return;
  const bool same = (src_type == DType::F16 && t == WType::F16) || (src_type == DType::BF16 && t == WType::BF16);
  dispatch(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    convert_rows_kernel<T><<<grid_for(rows * cols, kThreads), kThreads, 0, stream>>>(src_type, src, rows, cols,
                                                                                      static_cast<T*>(dst), ld, same);
  });
  check_launch("convert_rows_kernel");
}

void convert_to_f32(DType src_type, const void* src, int64_t n, float* dst, Stream stream) {
  if (n == 0) return;
  convert_to_f32_kernel<<<grid_for(n, kThreads), kThreads, 0, stream>>>(src_type, src, n, dst);
  check_launch("convert_to_f32_kernel");
}

}  // namespace kvscope::cuda
