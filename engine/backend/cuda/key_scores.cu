// Slot scores from the keys alone (slot_stats.h: KeyNorm, KeyDiff), one
// block per segment, with CpuBackend::key_scores's sums in its order: each
// slot's norm over its dimensions in order, the anchor's each dimension
// over the slots in order, then each slot's cosine with the anchor. The
// norms wait in the statistics row until the scores replace them.
#include <cmath>

#include "backend/cuda/common.cuh"
#include "common/error.h"

namespace kvscope::cuda {
namespace {

constexpr int kThreads = 128;
constexpr int kMaxHd = 256;

template <class T>
__global__ void __launch_bounds__(kThreads)
    key_scores_kernel(KvCache kv, StatSource source, const int* seg_len, int seg0) {
  __shared__ float anchor[kMaxHd];
  __shared__ float anchor_norm;
  const int seg = seg0 + blockIdx.x, hd = kv.hd;
  const int len = seg_len[seg];
  const T* K = static_cast<const T*>(kv.k) + kv_first_row(kv, seg) * hd;
  float* st = kv.stats + int64_t(seg) * kv.cap;
  for (int j = threadIdx.x; j < len; j += blockDim.x) {
    const T* k = K + int64_t(j) * hd;
    float sq = 0.0f;
    for (int d = 0; d < hd; ++d) sq = __fadd_rn(sq, __fmul_rn(to_f32(k[d]), to_f32(k[d])));
    st[j] = sqrtf(sq);
  }
  if (source == StatSource::KeyNorm) {
    __syncthreads();
    for (int j = threadIdx.x; j < len; j += blockDim.x) st[j] = -st[j];
    return;
  }
  __syncthreads();
  for (int d = threadIdx.x; d < hd; d += blockDim.x) {
    float sum = 0.0f;
    for (int j = 0; j < len; ++j)
      sum = __fadd_rn(sum, __fdiv_rn(to_f32(K[int64_t(j) * hd + d]), fmaxf(st[j], kKeyNormEps)));
    anchor[d] = __fdiv_rn(sum, static_cast<float>(len));
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    float an = 0.0f;
    for (int d = 0; d < hd; ++d) an = __fadd_rn(an, __fmul_rn(anchor[d], anchor[d]));
    anchor_norm = sqrtf(an);
  }
  __syncthreads();
  for (int j = threadIdx.x; j < len; j += blockDim.x) {
    const T* k = K + int64_t(j) * hd;
    float dot = 0.0f;
    for (int d = 0; d < hd; ++d) dot = __fadd_rn(dot, __fmul_rn(to_f32(k[d]), anchor[d]));
    st[j] = -__fdiv_rn(dot, fmaxf(__fmul_rn(st[j], anchor_norm), kKeyCosEps));
  }
}

}  // namespace

void key_scores(const KvCache& kv, StatSource source, const int* seg_len, int seg0, int n_segments, Stream stream) {
  if (n_segments == 0) return;
  if (kv.hd > kMaxHd) throw Error("cuda", "key scores", "head_dim above " + std::to_string(kMaxHd));
  dispatch(kv.type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    key_scores_kernel<T><<<n_segments, kThreads, 0, stream>>>(kv, source, seg_len, seg0);
  });
  check_launch("key_scores_kernel");
}

}  // namespace kvscope::cuda
