// sample_token() (backend/sampler.cpp) in one block of 1024 threads:
//   best = argmax (lowest id on ties); greedy returns it.
//   p_i = expf((logit_i - max) / T) into `scratch`.
//   top-k: the k-th largest p, found by bisection on the bit patterns of
//     non-negative floats (ordered like the values): the largest t with
//     count(p >= t) >= k is exactly the k-th largest p.
//   top-p: the largest t with mass(p >= t) >= top_p * kept is exactly the p
//     at which the CPU's descending cumulative sum first reaches the target
//     (all elements tied with it are kept, as there).
//   u from the same Philox draw; the token is the first id whose running
//     kept mass exceeds u * total: per-thread chunks in id order, an
//     exclusive scan of the chunk sums, then the lowest crossing id.
// Sums are doubles like the CPU's, but added in another order, so a draw
// within ~1e-12 of a boundary could pick the neighbouring token; expf's last
// ulp against glibc's is the larger effect (tests count such draws).
#include <climits>

#include "backend/cuda/common.cuh"
#include "common/counter_random.h"

namespace kvscope::cuda {
namespace {

constexpr int kThreads = 1024;
constexpr uint32_t kOneBits = 0x3f800000u;  // 1.0f: the largest p (the argmax's)

struct Best {
  float v;
  int i;  // INT_MAX: none yet
};

__device__ __forceinline__ Best better(Best a, Best b) {
  if (a.i == INT_MAX) return b;
  if (b.i == INT_MAX) return a;
  return (b.v > a.v || (b.v == a.v && b.i < a.i)) ? b : a;
}

__device__ Best block_argmax(Best b, float* vs, int* is) {
  for (int o = 16; o > 0; o >>= 1) {
    Best other{__shfl_xor_sync(0xffffffffu, b.v, o), __shfl_xor_sync(0xffffffffu, b.i, o)};
    b = better(b, other);
  }
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) {
    vs[warp] = b.v;
    is[warp] = b.i;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    Best r{vs[0], is[0]};
    for (int w = 1; w < int(blockDim.x >> 5); ++w) r = better(r, Best{vs[w], is[w]});
    vs[32] = r.v;
    is[32] = r.i;
  }
  __syncthreads();
  const Best r{vs[32], is[32]};
  __syncthreads();
  return r;
}

__global__ void __launch_bounds__(kThreads)
    sample_kernel(const float* logits, int V, SamplingParams sp, uint64_t step, float* p, int* token_out) {
  __shared__ float fs[33];
  __shared__ int is[33];
  __shared__ double ds[33];
  __shared__ double prefix[kThreads];
  const int tid = threadIdx.x;

  Best b{-INFINITY, INT_MAX};
  for (int i = tid; i < V; i += blockDim.x) {
    const float v = logits[i];
    if (b.i == INT_MAX || v > b.v) b = Best{v, i};  // ascending ids per thread: the first max stays
  }
  b = block_argmax(b, fs, is);
  const int best = b.i;
  if (sp.temperature <= 0) {
    if (tid == 0) *token_out = best;
    return;
  }

  const float mx = logits[best];
  for (int i = tid; i < V; i += blockDim.x) p[i] = expf((logits[i] - mx) / sp.temperature);
  __syncthreads();  // p is read by other threads below

  float threshold = 0.0f;  // keep p_i >= threshold
  if (sp.top_k > 0 && sp.top_k < V) {
    uint32_t lo = 0, hi = kOneBits;  // count(p >= 0) = V >= k holds at lo
    while (lo < hi) {
      const uint32_t mid = lo + (hi - lo + 1) / 2;
      const float t = __uint_as_float(mid);
      int c = 0;
      for (int i = tid; i < V; i += blockDim.x) c += p[i] >= t;
      c = block_reduce(c, SumOp{}, is);
      if (c >= sp.top_k) lo = mid;
      else hi = mid - 1;
    }
    threshold = __uint_as_float(lo);
  }
  if (sp.top_p < 1.0f) {
    double kept = 0;
    for (int i = tid; i < V; i += blockDim.x)
      if (p[i] >= threshold) kept += p[i];
    kept = block_reduce(kept, SumOp{}, ds);
    const double target = double(sp.top_p) * kept;
    uint32_t lo = __float_as_uint(threshold), hi = kOneBits;  // mass(p >= threshold) = kept >= target at lo
    while (lo < hi) {
      const uint32_t mid = lo + (hi - lo + 1) / 2;
      const float t = __uint_as_float(mid);
      double m = 0;
      for (int i = tid; i < V; i += blockDim.x)
        if (p[i] >= t) m += p[i];
      m = block_reduce(m, SumOp{}, ds);
      if (m >= target) lo = mid;
      else hi = mid - 1;
    }
    threshold = fmaxf(threshold, __uint_as_float(lo));
  }

  // Thread t owns ids [t * chunk, (t + 1) * chunk).
  const int chunk = (V + blockDim.x - 1) / blockDim.x;
  const int begin = min(V, tid * chunk), end = min(V, begin + chunk);
  double local = 0;
  int last = -1;
  for (int i = begin; i < end; ++i)
    if (p[i] >= threshold) {
      local += p[i];
      last = i;
    }
  prefix[tid] = local;
  const double total = block_reduce(local, SumOp{}, ds);  // its barriers also publish prefix[]
  if (tid == 0) {
    double run = 0;
    for (int t = 0; t < int(blockDim.x); ++t) {
      const double v = prefix[t];
      prefix[t] = run;
      run += v;
    }
  }
  __syncthreads();
  const auto r = philox4(sp.seed, static_cast<uint32_t>(step), static_cast<uint32_t>(step >> 32),
                         static_cast<uint32_t>(RandomStream::Sampling), 0);
  const double target = static_cast<double>(uniform01(r.v[0])) * total;
  double run = prefix[tid];
  int found = INT_MAX;
  for (int i = begin; i < end; ++i) {
    if (p[i] < threshold) continue;
    run += p[i];
    if (run > target) {
      found = i;
      break;
    }
  }
  found = block_reduce(found, MinOp{}, is);
  last = block_reduce(last, MaxOp{}, is);
  if (tid == 0) *token_out = found != INT_MAX ? found : (last >= 0 ? last : best);
}

}  // namespace

void sample(const float* logits, int vocab, const SamplingParams& p, uint64_t step, float* scratch, int* token_out,
            Stream stream) {
  sample_kernel<<<1, kThreads, 0, stream>>>(logits, vocab, p, step, scratch, token_out);
  check_launch("sample_kernel");
}

}  // namespace kvscope::cuda
