#include "backend/cpu/decode_attention.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "backend/cpu/vec8.h"

namespace kvscope::cpu {
namespace {

constexpr int kLanes = 16;
// Rows of V per block of the output pass: each slab of 64 output elements
// reads the block's rows once, so a block (16 KB at head_dim 64, 64 KB at
// Gemma's 256) is read from memory once and then from L1 or L2.
constexpr int kValueBlock = 64;

typedef float v4 __attribute__((vector_size(16)));

[[gnu::always_inline]] inline v8 splat(float f) { return v8{f, f, f, f, f, f, f, f}; }

// The fixed tree of matvec.h: lanes 0-7 and 8-15 added, then lane t + s
// into lane t for s = 4, 2, 1; written with 4-lane vectors (the same
// additions, lane by lane) because a decode step runs it once per cached
// row and query head.
[[gnu::always_inline]] inline float reduce(v8 lo, v8 hi) {
  const v8 s8 = lo + hi;
  const v4 x = __builtin_shufflevector(s8, s8, 0, 1, 2, 3) + __builtin_shufflevector(s8, s8, 4, 5, 6, 7);
  const v4 y = x + __builtin_shufflevector(x, x, 2, 3, 2, 3);
  return y[0] + y[1];
}

// G query heads' scores against rows [0, len) of K. q16 holds the queries
// zero-padded to hd16 (a multiple of 16) elements each; a key row's tail
// past its last multiple of 16 is padded the same way, so every element
// lands in the same lane on every path.
template <int G>
[[gnu::always_inline]] inline void scores_body(const float* K, int len, int hd, const float* q16, int hd16, float scale,
                                               float* scores, int64_t ld_scores) {
  const int whole = hd / kLanes * kLanes;
  for (int j = 0; j < len; ++j) {
    const float* k = K + int64_t(j) * hd;
    v8 lo[G] = {}, hi[G] = {};
    for (int e = 0; e < whole; e += kLanes) {
      const v8 kl = load8(k + e), kh = load8(k + e + 8);
      for (int g = 0; g < G; ++g) {
        lo[g] += kl * load8(q16 + g * hd16 + e);
        hi[g] += kh * load8(q16 + g * hd16 + e + 8);
      }
    }
    if (whole < hd) {
      float t[kLanes] = {};
      std::memcpy(t, k + whole, sizeof(float) * (hd - whole));
      const v8 kl = load8(t), kh = load8(t + 8);
      for (int g = 0; g < G; ++g) {
        lo[g] += kl * load8(q16 + g * hd16 + whole);
        hi[g] += kh * load8(q16 + g * hd16 + whole + 8);
      }
    }
    for (int g = 0; g < G; ++g) scores[g * ld_scores + j] = scale * reduce(lo[g], hi[g]);
  }
}

// acc[d] += p[j] * V[j][d] for rows j in [j0, j1), in row order, for the
// W vectors of 8 elements from d0: the slab's sums stay in registers while
// the rows go by.
template <int W>
[[gnu::always_inline]] inline void values_slab(const float* V, int j0, int j1, int hd, int d0, const float* p,
                                               float* acc) {
  v8 s[W];
  for (int w = 0; w < W; ++w) s[w] = load8(acc + d0 + 8 * w);
  for (int j = j0; j < j1; ++j) {
    const float* v = V + int64_t(j) * hd + d0;
    const v8 pj = splat(p[j]);
    for (int w = 0; w < W; ++w) s[w] += pj * load8(v + 8 * w);
  }
  for (int w = 0; w < W; ++w) store8(acc + d0 + 8 * w, s[w]);
}

// out_g[d] = the sum in row order of p_g[j] * V[j][d] for the G query heads
// of one KV head. Rows go in blocks that stay in cache (L1 at head_dim 64)
// while each head's slabs of 64 output elements pass over them, so V is
// read from memory once for the group, not once per head; acc ([G][hd])
// carries each head's sums from block to block, in row order as before.
[[gnu::always_inline]] inline void values_body(const float* V, int len, int hd, const float* p, int64_t ld_p, int G,
                                               float* out, int64_t ld_out, float* acc) {
  constexpr int W = 8;
  const int whole = hd / 8 * 8;
  std::fill(acc, acc + std::size_t(G) * hd, 0.0f);
  for (int j0 = 0; j0 < len; j0 += kValueBlock) {
    const int j1 = std::min(len, j0 + kValueBlock);
    for (int g = 0; g < G; ++g) {
      const float* pg = p + g * ld_p;
      float* ag = acc + std::size_t(g) * hd;
      int d = 0;
      for (; d + 8 * W <= whole; d += 8 * W) values_slab<W>(V, j0, j1, hd, d, pg, ag);
      for (; d < whole; d += 8) values_slab<1>(V, j0, j1, hd, d, pg, ag);
      // The elements past the last multiple of 8, one at a time: the same
      // operations in the same order as a lane of the vector loop.
      for (; d < hd; ++d) {
        float a = ag[d];
        for (int j = j0; j < j1; ++j) a = a + pg[j] * V[int64_t(j) * hd + d];
        ag[d] = a;
      }
    }
  }
  for (int g = 0; g < G; ++g) std::memcpy(out + g * ld_out, acc + std::size_t(g) * hd, sizeof(float) * hd);
}

// Scratch per thread: padded queries and the value pass's partial sums.
struct Scratch {
  float* get(std::size_t n) {
    if (buf.size() < n) buf.resize(n);
    return buf.data();
  }
  std::vector<float> buf;
};
thread_local Scratch scratch_q, scratch_acc;

[[gnu::always_inline]] inline void decode_scores_body(const float* K, int len, int hd, const float* q, int64_t ld_q, int G,
                                              float scale, float* scores, int64_t ld_scores) {
  const int hd16 = (hd + kLanes - 1) / kLanes * kLanes;
  for (int g0 = 0; g0 < G; g0 += 4) {
    const int n = std::min(4, G - g0);
    float* q16 = scratch_q.get(std::size_t(n) * hd16);
    std::fill(q16, q16 + std::size_t(n) * hd16, 0.0f);
    for (int g = 0; g < n; ++g) std::memcpy(q16 + g * hd16, q + (g0 + g) * ld_q, sizeof(float) * hd);
    float* s = scores + g0 * ld_scores;
    switch (n) {
      case 1: scores_body<1>(K, len, hd, q16, hd16, scale, s, ld_scores); break;
      case 2: scores_body<2>(K, len, hd, q16, hd16, scale, s, ld_scores); break;
      case 3: scores_body<3>(K, len, hd, q16, hd16, scale, s, ld_scores); break;
      default: scores_body<4>(K, len, hd, q16, hd16, scale, s, ld_scores); break;
    }
  }
}

[[gnu::always_inline]] inline void decode_values_body(const float* V, int len, int hd, const float* p, int64_t ld_p, int G,
                                              float* out, int64_t ld_out) {
  // One head at a time within each block of rows: the value pass is
  // fastest with a whole row of sums in registers, and a group's heads
  // would split them; the block is then read from cache by the next head.
  float* acc = scratch_acc.get(std::size_t(G) * hd);
  values_body(V, len, hd, p, ld_p, G, out, ld_out, acc);
}

KVSCOPE_SIMD_VARIANTS(void, decode_scores,
                      (const float* K, int len, int hd, const float* q, int64_t ld_q, int G, float scale, float* scores,
                       int64_t ld_scores),
                      (K, len, hd, q, ld_q, G, scale, scores, ld_scores))
KVSCOPE_SIMD_VARIANTS(void, decode_values,
                      (const float* V, int len, int hd, const float* p, int64_t ld_p, int G, float* out,
                       int64_t ld_out),
                      (V, len, hd, p, ld_p, G, out, ld_out))

}  // namespace

void decode_scores(SimdPath path, const float* K, int len, int hd, const float* q, int64_t ld_q, int G, float scale,
                   float* scores, int64_t ld_scores) {
  simd_pick(path, decode_scores_avx512, decode_scores_avx2, decode_scores_baseline)(K, len, hd, q, ld_q, G, scale,
                                                                                    scores, ld_scores);
}

void decode_scores(const float* K, int len, int hd, const float* q, int64_t ld_q, int G, float scale, float* scores,
                   int64_t ld_scores) {
  decode_scores(simd_path(), K, len, hd, q, ld_q, G, scale, scores, ld_scores);
}

void decode_values(SimdPath path, const float* V, int len, int hd, const float* p, int64_t ld_p, int G, float* out,
                   int64_t ld_out) {
  simd_pick(path, decode_values_avx512, decode_values_avx2, decode_values_baseline)(V, len, hd, p, ld_p, G, out,
                                                                                    ld_out);
}

void decode_values(const float* V, int len, int hd, const float* p, int64_t ld_p, int G, float* out, int64_t ld_out) {
  decode_values(simd_path(), V, len, hd, p, ld_p, G, out, ld_out);
}

}  // namespace kvscope::cpu
