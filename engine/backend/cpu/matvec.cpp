#include "backend/cpu/matvec.h"

#include <cstring>

namespace kvscope::cpu {
namespace {

constexpr int kLanes = 16;

// Eight floats as one GCC vector: a ymm register in the AVX2 and AVX-512
// copies, two xmm registers in the baseline one. Loads go through memcpy
// (rows need not be 32-byte aligned).
typedef float v8 __attribute__((vector_size(32)));

[[gnu::always_inline]] inline v8 load8(const float* p) {
  v8 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// Lane t of a row's sum holds the products of elements k = t (mod 16): two
// vectors, lanes 0-7 and 8-15. Combined by the fixed tree lane t + s into
// lane t for s = 8, 4, 2, 1.
[[gnu::always_inline]] inline float reduce(v8 lo, v8 hi) {
  const v8 s8 = lo + hi;
  float l[8];
  std::memcpy(l, &s8, sizeof l);
  for (int t = 0; t < 4; ++t) l[t] += l[t + 4];
  l[0] += l[2];
  l[1] += l[3];
  return l[0] + l[1];
}

// R output features at a time (each input element loaded once for them),
// M input rows. The tail of a row (in mod 16 elements) runs as one more
// step over zero-padded copies, so every element lands in its lane the same
// way on every path.
template <int M, int R>
[[gnu::always_inline]] inline void block_body(const float* x, int in, const float (*xt)[kLanes], const float* w, int r,
                                              float* y, int64_t ldy) {
  const int whole = in / kLanes * kLanes;
  v8 lo[M][R] = {}, hi[M][R] = {};
  for (int k = 0; k < whole; k += kLanes) {
    v8 wl[R], wh[R];
    for (int j = 0; j < R; ++j) {
      const float* wr = w + int64_t(r + j) * in + k;
      // The same line of the next block's rows: decode streams the weights
      // from memory, and the hardware prefetcher alone keeps too few lines
      // in flight for one core to reach the memory's bandwidth.
      __builtin_prefetch(wr + int64_t(2 * R) * in);
      wl[j] = load8(wr);
      wh[j] = load8(wr + 8);
    }
    for (int i = 0; i < M; ++i) {
      const v8 xl = load8(x + int64_t(i) * in + k), xh = load8(x + int64_t(i) * in + k + 8);
      for (int j = 0; j < R; ++j) {
        lo[i][j] += wl[j] * xl;
        hi[i][j] += wh[j] * xh;
      }
    }
  }
  if (whole < in) {
    for (int j = 0; j < R; ++j) {
      float wt[kLanes] = {};
      std::memcpy(wt, w + int64_t(r + j) * in + whole, sizeof(float) * (in - whole));
      const v8 wl = load8(wt), wh = load8(wt + 8);
      for (int i = 0; i < M; ++i) {
        lo[i][j] += wl * load8(xt[i]);
        hi[i][j] += wh * load8(xt[i] + 8);
      }
    }
  }
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < R; ++j) y[int64_t(i) * ldy + r + j] = reduce(lo[i][j], hi[i][j]);
}

template <int M>
[[gnu::always_inline]] inline void rows_body(const float* x, int in, const float* w, int r0, int r1, float* y,
                                             int64_t ldy) {
  constexpr int R = 4 / M;  // 8 accumulator vectors in flight either way
  const int whole = in / kLanes * kLanes;
  float xt[M][kLanes] = {};
  for (int i = 0; i < M; ++i) std::memcpy(xt[i], x + int64_t(i) * in + whole, sizeof(float) * (in - whole));
  int r = r0;
  for (; r + R <= r1; r += R) block_body<M, R>(x, in, xt, w, r, y, ldy);
  for (; r < r1; ++r) block_body<M, 1>(x, in, xt, w, r, y, ldy);
}

[[gnu::always_inline]] inline void matvec_body(const float* x, int m, int in, const float* w, int r0, int r1,
                                               float* y, int64_t ldy) {
  if (m == 1) rows_body<1>(x, in, w, r0, r1, y, ldy);
  else rows_body<2>(x, in, w, r0, r1, y, ldy);
}

KVSCOPE_SIMD_VARIANTS(void, matvec, (const float* x, int m, int in, const float* w, int r0, int r1, float* y, int64_t ldy),
                      (x, m, in, w, r0, r1, y, ldy))

}  // namespace

void matvec_rows(SimdPath path, const float* x, int m, int in, const float* w, int r0, int r1, float* y, int64_t ldy) {
  simd_pick(path, matvec_avx512, matvec_avx2, matvec_baseline)(x, m, in, w, r0, r1, y, ldy);
}

void matvec_rows(const float* x, int m, int in, const float* w, int r0, int r1, float* y, int64_t ldy) {
  matvec_rows(simd_path(), x, m, in, w, r0, r1, y, ldy);
}

}  // namespace kvscope::cpu
