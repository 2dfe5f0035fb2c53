// CUR's and LagKV's slot scores (backend/cache_scores.h) on the device: one
// thread per segment runs the very code CpuBackend runs, built with
// -fmad=false as the CPU's is without contraction, on the cache's 16-bit
// keys and values widened to float. Scoring is once per layer and step,
// small beside the attention it follows; a thread per segment keeps the
// one definition.
#include "backend/cache_scores.h"
#include "backend/cuda/common.cuh"
#include "common/error.h"

namespace kvscope::cuda {
namespace {

template <class T>
struct DeviceRows {
  const T *keys, *values;
  int hd;
  __device__ const T* k(int j) const { return keys + int64_t(j) * hd; }
  __device__ const T* v(int j) const { return values + int64_t(j) * hd; }
  __device__ static float to_float(T x) { return to_f32(x); }
};

template <class T>
__global__ void cache_scores_kernel(KvCache kv, SlotStatRule rule, const int* seg_len, int seg0, int n_segments) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n_segments) return;
  const int seg = seg0 + i;
  const int64_t first = kv_first_row(kv, seg) * kv.hd;
  const DeviceRows<T> rows{static_cast<const T*>(kv.k) + first, static_cast<const T*>(kv.v) + first, kv.hd};
  float* out = kv.stats + int64_t(seg) * kv.cap;
  if (rule.source == StatSource::Cur) {
    cur_scores(rows, seg_len[seg], kv.hd, rule, out);
  } else {
    LagKvScratch scratch;
    lagkv_scores(rows, seg_len[seg], kv.hd, rule, scratch, out);
  }
}

}  // namespace

void cache_scores(const KvCache& kv, const SlotStatRule& rule, const int* seg_len, int seg0, int n_segments,
                  Stream stream) {
  if (n_segments == 0) return;
  if (kv.hd > kCacheScoreMaxHd)
    throw Error("cuda", "cache scores", "head_dim above " + std::to_string(kCacheScoreMaxHd));
  constexpr int kThreads = 32;
  dispatch(kv.type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    cache_scores_kernel<T>
        <<<(n_segments + kThreads - 1) / kThreads, kThreads, 0, stream>>>(kv, rule, seg_len, seg0, n_segments);
  });
  check_launch("cache_scores_kernel");
}

}  // namespace kvscope::cuda
