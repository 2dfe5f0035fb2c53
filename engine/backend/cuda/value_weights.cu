// CriticalKV's value weights (Backend::value_weights) of slots
// [first, first + count) of one segment: a block per slot, its threads over
// the output features o of each query head q reading the segment's KV
// head; |sum_d v_d W_o[o][q hd + d]| summed over o and q, then / G. The CPU
// backend sums the same terms (CpuBackend::compute_value_weights); the
// tests compare the two within the cache's 16-bit rounding.
#include "backend/cuda/common.cuh"
#include "common/error.h"

namespace kvscope::cuda {
namespace {

constexpr int kThreads = 128;

template <class T, class W>
__global__ void __launch_bounds__(kThreads)
    value_weights_kernel(DeviceLinear o, KvCache kv, int seg, int first, int q0, int G, float* out) {
  __shared__ float partial[kThreads];
  const int hd = kv.hd;
  const T* v = static_cast<const T*>(kv.v) + (kv_first_row(kv, seg) + first + blockIdx.x) * hd;
  const W* w = static_cast<const W*>(o.w);
  float total = 0.0f;
  for (int q = q0; q < q0 + G; ++q)
    for (int f = threadIdx.x; f < o.out; f += blockDim.x) {
      const W* row = w + int64_t(f) * o.ld + int64_t(q) * hd;
      float acc = 0.0f;
      for (int d = 0; d < hd; ++d) acc = __fadd_rn(acc, __fmul_rn(to_f32(v[d]), to_f32(row[d])));
      total += fabsf(acc);
    }
  partial[threadIdx.x] = total;
  __syncthreads();
  for (int s = kThreads / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) partial[threadIdx.x] += partial[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = partial[0] / static_cast<float>(G);
}

}  // namespace

void value_weights(const DeviceLinear& o, const KvCache& kv, int seg, int first, int count, int q0, int G, float* out,
                   Stream stream) {
  if (count == 0) return;
  dispatch(kv.type, [&](auto kv_tag) {
    using T = typename decltype(kv_tag)::type;
    dispatch(o.type, [&](auto w_tag) {
      using W = typename decltype(w_tag)::type;
      value_weights_kernel<T, W><<<count, kThreads, 0, stream>>>(o, kv, seg, first, q0, G, out);
    });
  });
  check_launch("value_weights_kernel");
}

}  // namespace kvscope::cuda
