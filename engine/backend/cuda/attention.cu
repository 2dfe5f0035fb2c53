// One layer's attention, CpuBackend::attention step by step, for every
// query head and query of this call, each head over its own segment (heads
// of a GQA group share one; kv-head eviction gives segments different
// lengths). Per chunk of queries:
//   scores_kernel   S = scale * q.k (+ ALiBi) over the segment; causal and sliding-window masks -> -inf
//   softmax_kernel  capture the logits, softmax (cpu::softmax_row), capture the probabilities;
//                   Keyformer: also softmax((S + noise) / tau) into gumbel_rows
//   stats_kernel    slot statistics (CpuBackend::accumulate_stats), when a rule is active
//   pv_kernel       partial P.V over blocks of kPvKeys slots (no atomics: deterministic)
//   pv_reduce       out = sum of the partials, in block order
// Scores live in a [head][query][cap] scratch, so decode (one query) needs
// H x cap floats and prefill is cut into chunks that fit. A tile of keys
// that query i may not see at all (later tokens of this call) reads no K or
// V: its scores are -inf and its P.V partial 0, the values the full
// computation gives, so a prefill does about half the work.
#include <algorithm>
#include <cmath>

#include "backend/cuda/common.cuh"
#include "common/error.h"

namespace kvscope::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr int kScoreKeys = 64;  // slots per scores_kernel block (8 per warp)
constexpr int kPvKeys = 256;    // slots per pv_kernel block
constexpr int kMaxHd = 256;
constexpr int kStatThreads = 128;

__device__ __forceinline__ int segment_of(const AttentionArgs& a, int h) { return a.seg0 + h / a.group; }
template <class P>
__device__ __forceinline__ P* score_row(P* base, const AttentionArgs& a, int h, int qi, int qc) {
  return base + (int64_t(h) * qc + qi) * a.kv.cap;
}

// grid (key tiles, qc, heads).
template <class T>
__global__ void __launch_bounds__(kThreads) scores_kernel(AttentionArgs a, int q_begin, int qc) {
  __shared__ float qs[kMaxHd];
  const int h = blockIdx.z, qi = blockIdx.y, i = q_begin + qi;
  const int seg = segment_of(a, h), hd = a.kv.hd, cap = a.kv.cap;
  const int len = a.seg_len[seg];
  const int j0 = blockIdx.x * kScoreKeys;
  if (j0 >= len) return;  // uniform for the block, before any barrier
  const int base = len - a.n;  // slots before this call's tokens
  float* row = score_row(a.scores, a, h, qi, qc);
  if (j0 > base + i) {  // every key of the tile is a later new token: all masked (half of a prefill's tiles)
    for (int j = j0 + threadIdx.x; j < min(len, j0 + kScoreKeys); j += blockDim.x) row[j] = -INFINITY;
    return;
  }
  const float* q = a.q + int64_t(i) * a.q_stride + int64_t(h) * hd;
  for (int d = threadIdx.x; d < hd; d += blockDim.x) qs[d] = q[d];
  __syncthreads();
  const int qpos = a.first_pos + i;
  const T* K = static_cast<const T*>(a.kv.k) + kv_first_row(a.kv, seg) * hd;
  const int* pos = a.kv.pos + int64_t(seg) * cap;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  for (int jj = warp; jj < kScoreKeys; jj += kWarps) {
    const int j = j0 + jj;
    if (j >= len) break;
    const T* kr = K + int64_t(j) * hd;
    float acc = 0.0f;
    for (int d = lane; d < hd; d += 32) acc = fmaf(qs[d], to_f32(kr[d]), acc);
    acc = warp_reduce(acc, SumOp{});
    if (lane == 0) {
      bool masked = j > base + i;                                        // causal: later new tokens
      if (a.window > 0 && qpos - pos[j] >= a.window) masked = true;  // sliding window
      float s = __fmul_rn(acc, a.scale);
      if (a.alibi_slopes && !masked) {  // an integer distance times the fp32 slope, then added (no FMA)
        const int q = base + i;
        const int dist = a.alibi_slots ? j - q : pos[j] - pos[q];
        s = __fadd_rn(s, __fmul_rn(static_cast<float>(dist), a.alibi_slopes[h]));
      }
      row[j] = masked ? -INFINITY : s;
    }
  }
}

// cpu::softmax_row over one row by one block: max, exp with -inf -> 0,
// double sum, multiply by the fp32 inverse.
__device__ void softmax_row(float* x, int len, float* fscratch, double* dscratch) {
  float mx = -INFINITY;
  for (int j = threadIdx.x; j < len; j += blockDim.x) mx = fmaxf(mx, x[j]);
  mx = block_reduce(mx, MaxOp{}, fscratch);
  double sum = 0;
  for (int j = threadIdx.x; j < len; j += blockDim.x) {
    const float v = x[j];
    const float e = v == -INFINITY ? 0.0f : expf(v - mx);
    x[j] = e;
    sum += e;
  }
  sum = block_reduce(sum, SumOp{}, dscratch);
  const float inv = static_cast<float>(1.0 / sum);
  for (int j = threadIdx.x; j < len; j += blockDim.x) x[j] = x[j] * inv;
}

// grid (qc, heads).
__global__ void __launch_bounds__(kThreads) softmax_kernel(AttentionArgs a, int q_begin, int qc) {
  __shared__ float fscratch[33];
  __shared__ double dscratch[33];
  const int h = blockIdx.y, qi = blockIdx.x, i = q_begin + qi;
  const int seg = segment_of(a, h), cap = a.kv.cap;
  const int len = a.seg_len[seg];
  float* row = score_row(a.scores, a, h, qi, qc);
  if (a.stats.rule.source == StatSource::GumbelSoftmax) {
    // Keyformer: softmax((logit + noise(qpos, layer, head, kpos)) / tau), from the pre-softmax row.
    const SlotStatRule& r = a.stats.rule;
    const int* pos = a.kv.pos + int64_t(seg) * cap;
    const uint32_t qpos = static_cast<uint32_t>(pos[len - a.n + i]);
    float* g = score_row(a.stats.gumbel_rows, a, h, qi, qc);
    for (int j = threadIdx.x; j < len; j += blockDim.x) {
      const float noise = keyformer_noise(r.noise, r.seed, qpos, static_cast<uint32_t>(a.layer),
                                          static_cast<uint32_t>(h), static_cast<uint32_t>(pos[j]));
      g[j] = __fdiv_rn(__fadd_rn(row[j], noise), r.tau);
    }
    softmax_row(g, len, fscratch, dscratch);  // its own threads' entries only: no barrier needed before
  }
  float* cl = nullptr;
  float* cp = nullptr;
  if (a.capture_logits && i >= a.capture_first) {
    // AttentionRows: offset[h] = captured rows * (row lengths of heads before h); row i follows.
    int64_t before = 0;
    for (int h2 = 0; h2 < h; ++h2) before += a.seg_len[segment_of(a, h2)];
    const int64_t off = before * (a.n - a.capture_first) + int64_t(i - a.capture_first) * len;
    cl = a.capture_logits + off;
    cp = a.capture_probs + off;
  }
  if (cl)
    for (int j = threadIdx.x; j < len; j += blockDim.x) cl[j] = row[j];
  softmax_row(row, len, fscratch, dscratch);
  if (cp)
    for (int j = threadIdx.x; j < len; j += blockDim.x) cp[j] = row[j];
}

// grid (slot tiles, kv heads of this layer): CpuBackend::accumulate_stats for
// every reader row of this chunk, heads in order then queries in order.
__global__ void stats_kernel(AttentionArgs a, int q_begin, int qc) {
  const int kvh = blockIdx.y;
  const int j = blockIdx.x * blockDim.x + threadIdx.x;
  const int seg = a.seg0 + kvh, cap = a.kv.cap;
  const int len = a.seg_len[seg];
  if (j >= len) return;
  const StatArgs& s = a.stats;
  const float* f = s.rule.source == StatSource::GumbelSoftmax ? s.gumbel_rows : a.scores;
  const int h0 = kvh * a.group, h1 = h0 + a.group;
  if (s.rule.reduce == ReaderReduce::Mean) {
    float c = s.mean_acc[int64_t(kvh) * cap + j];
    for (int h = h0; h < h1; ++h)
      for (int qi = 0; qi < qc; ++qi) {
        const float w = __fdiv_rn(s.row_weight[q_begin + qi], s.readers);  // pow(decay, n-1-i) / readers
        c = __fadd_rn(c, __fmul_rn(w, score_row(f, a, h, qi, qc)[j]));
      }
    s.mean_acc[int64_t(kvh) * cap + j] = c;
  } else {
    for (int qi = 0; qi < qc; ++qi) {
      float* m = s.max_acc + (int64_t(kvh) * a.n + q_begin + qi) * cap + j;
      float v = *m;
      for (int h = h0; h < h1; ++h) v = fmaxf(v, score_row(f, a, h, qi, qc)[j]);
      *m = v;
    }
  }
}

// grid (key blocks, qc, heads): partial sums of P V over kPvKeys slots.
template <class T>
__global__ void __launch_bounds__(kThreads) pv_kernel(AttentionArgs a, int q_begin, int qc, int splits) {
  __shared__ float red[kWarps][kMaxHd];
  const int h = blockIdx.z, qi = blockIdx.y, block = blockIdx.x;
  const int seg = segment_of(a, h), hd = a.kv.hd;
  const int len = a.seg_len[seg];
  const int j0 = block * kPvKeys;
  if (j0 >= len) return;  // pv_reduce reads only the blocks that cover len
  float* part = a.partial + ((int64_t(h) * qc + qi) * splits + block) * hd;
  if (j0 > len - a.n + q_begin + qi) {
    // Causally masked block (a later new token's keys): every probability
    // is 0, and the sum below would be +0 in every lane, V being finite.
    for (int d = threadIdx.x; d < hd; d += blockDim.x) part[d] = 0.0f;
    return;
  }
  const int j1 = min(len, j0 + kPvKeys);
  const float* p = score_row(a.scores, a, h, qi, qc);
  const T* V = static_cast<const T*>(a.kv.v) + kv_first_row(a.kv, seg) * hd;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  float acc[kMaxHd / 32];
#pragma unroll
  for (int k = 0; k < kMaxHd / 32; ++k) acc[k] = 0.0f;
  for (int j = j0 + warp; j < j1; j += kWarps) {
    const float pj = p[j];
    const T* vr = V + int64_t(j) * hd;
#pragma unroll
    for (int k = 0; k < kMaxHd / 32; ++k) {
      const int d = lane + 32 * k;
      if (d < hd) acc[k] = fmaf(pj, to_f32(vr[d]), acc[k]);
    }
  }
#pragma unroll
  for (int k = 0; k < kMaxHd / 32; ++k) {
    const int d = lane + 32 * k;
    if (d < hd) red[warp][d] = acc[k];
  }
  __syncthreads();
  for (int d = threadIdx.x; d < hd; d += blockDim.x) {
    float s = 0.0f;
    for (int w = 0; w < kWarps; ++w) s += red[w][d];
    part[d] = s;
  }
}

// grid (qc, heads).
__global__ void pv_reduce_kernel(AttentionArgs a, int q_begin, int qc, int splits) {
  const int h = blockIdx.y, qi = blockIdx.x, i = q_begin + qi, hd = a.kv.hd;
  const int len = a.seg_len[segment_of(a, h)];
  const int blocks = (len + kPvKeys - 1) / kPvKeys;
  const float* part = a.partial + (int64_t(h) * qc + qi) * splits * hd;
  float* o = a.out + int64_t(i) * a.out_stride + int64_t(h) * hd;
  for (int d = threadIdx.x; d < hd; d += blockDim.x) {
    float s = 0.0f;
    for (int b = 0; b < blocks; ++b) s += part[int64_t(b) * hd + d];
    o[d] = s;
  }
}

// grid (slot tiles, kv heads): CpuBackend::finish_stats for one KV layer.
__global__ void finish_stats_kernel(StatArgs s, float carry, const int* seg_len, int seg0, int n, float* stats,
                                    int cap) {
  const int kvh = blockIdx.y;
  const int j = blockIdx.x * blockDim.x + threadIdx.x;
  const int seg = seg0 + kvh;
  const int len = seg_len[seg];
  if (j >= len) return;
  float total;
  if (s.rule.reduce == ReaderReduce::Mean) {
    total = s.mean_acc[int64_t(kvh) * cap + j];
  } else {
    total = 0.0f;
    for (int i = 0; i < n; ++i)
      total = __fadd_rn(total, __fmul_rn(s.row_weight[i], s.max_acc[(int64_t(kvh) * n + i) * cap + j]));
  }
  float* st = stats + int64_t(seg) * cap + j;
  *st = __fadd_rn(j < len - n ? __fmul_rn(carry, *st) : 0.0f, total);
}

unsigned tiles(int n, int per) { return static_cast<unsigned>((n + per - 1) / per); }

}  // namespace

int pv_splits(int cap) { return (cap + kPvKeys - 1) / kPvKeys; }

void attention(const AttentionArgs& a, Stream stream) {
  if (a.n == 0 || a.max_len == 0) return;
  if (a.kv.hd > kMaxHd) throw Error("cuda", "attention", "head_dim above " + std::to_string(kMaxHd));
  const int splits = pv_splits(a.kv.cap);
  const int chunk = std::max(1, std::min(a.q_chunk, 65535));
  const int n_kv = a.n_heads / a.group;
  const bool stats = a.stats.rule.source != StatSource::None;
  for (int q0 = 0; q0 < a.n; q0 += chunk) {
    const int qc = std::min(chunk, a.n - q0);
    dispatch(a.kv.type, [&](auto tag) {
      using T = typename decltype(tag)::type;
      scores_kernel<T><<<dim3(tiles(a.max_len, kScoreKeys), qc, a.n_heads), kThreads, 0, stream>>>(a, q0, qc);
    });
    check_launch("scores_kernel");
    softmax_kernel<<<dim3(qc, a.n_heads), kThreads, 0, stream>>>(a, q0, qc);
    check_launch("softmax_kernel");
    if (stats) {
      stats_kernel<<<dim3(tiles(a.max_len, kStatThreads), n_kv), kStatThreads, 0, stream>>>(a, q0, qc);
      check_launch("stats_kernel");
    }
    dispatch(a.kv.type, [&](auto tag) {
      using T = typename decltype(tag)::type;
      pv_kernel<T><<<dim3(tiles(a.max_len, kPvKeys), qc, a.n_heads), kThreads, 0, stream>>>(a, q0, qc, splits);
    });
    check_launch("pv_kernel");
    pv_reduce_kernel<<<dim3(qc, a.n_heads), 128, 0, stream>>>(a, q0, qc, splits);
    check_launch("pv_reduce_kernel");
  }
}

void clear_stat_acc(const StatArgs& s, int n_kv_heads, int n, int cap, Stream stream) {
  if (s.rule.source == StatSource::None) return;
  if (s.rule.reduce == ReaderReduce::Mean)
    KVSCOPE_CUDA(cudaMemsetAsync(s.mean_acc, 0, sizeof(float) * n_kv_heads * std::size_t(cap), stream));
  else
    KVSCOPE_CUDA(cudaMemsetAsync(s.max_acc, 0, sizeof(float) * n_kv_heads * std::size_t(n) * cap, stream));
}

void finish_stats(const StatArgs& s, float carry, const int* seg_len, int seg0, int n_kv_heads, int n, int max_len,
                  float* stats, int cap, Stream stream) {
  if (s.rule.source == StatSource::None || max_len == 0) return;
  finish_stats_kernel<<<dim3(tiles(max_len, kStatThreads), n_kv_heads), kStatThreads, 0, stream>>>(
      s, carry, seg_len, seg0, n, stats, cap);
  check_launch("finish_stats_kernel");
}

}  // namespace kvscope::cuda
