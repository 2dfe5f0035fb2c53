#include "backend/cpu/matvec.h"

#include <cstring>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

#include "io/dtype.h"

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

// How a weight row's 16 elements become the two vectors (lanes 0-7, 8-15)
// of one step: fp32 rows as they are; fp16 rows converted, exactly (every
// half is a float), so an fp16 row gives the bits the same row rounded to
// fp16 and stored as fp32 would give.
struct F32Rows {
  using T = float;
  [[gnu::always_inline]] static inline void load16(const float* p, v8& lo, v8& hi) {
    lo = load8(p);
    hi = load8(p + 8);
  }
};

// Scalar conversion for the baseline copy (x86-64 without F16C).
struct F16RowsScalar {
  using T = uint16_t;
  [[gnu::always_inline]] static inline void load16(const uint16_t* p, v8& lo, v8& hi) {
    float f[16];
    for (int i = 0; i < 16; ++i) f[i] = f16_to_f32(p[i]);
    lo = load8(f);
    hi = load8(f + 8);
  }
};

#if defined(__x86_64__) && defined(__GNUC__) && !defined(KVSCOPE_NO_SIMD_VARIANTS)
// vcvtph2ps, for the AVX2 (with F16C) and AVX-512 copies.
struct F16RowsF16c {
  using T = uint16_t;
  [[gnu::always_inline]] __attribute__((target("avx2,f16c"))) static inline void load16(const uint16_t* p, v8& lo,
                                                                                       v8& hi) {
    const __m256 a = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    const __m256 b = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 8)));
    std::memcpy(&lo, &a, sizeof lo);
    std::memcpy(&hi, &b, sizeof hi);
  }
};
#define KVSCOPE_TARGET_F16C __attribute__((target("avx2,f16c")))
#else
using F16RowsF16c = F16RowsScalar;
#define KVSCOPE_TARGET_F16C
#endif

namespace plain {
#include "backend/cpu/matvec_loops.inc"
}  // namespace plain

#if defined(__x86_64__) && defined(__GNUC__) && !defined(KVSCOPE_NO_SIMD_VARIANTS)
#pragma GCC push_options
#pragma GCC target("avx2,f16c")
namespace f16c {
#include "backend/cpu/matvec_loops.inc"
}  // namespace f16c
#pragma GCC pop_options
#else
namespace f16c = plain;
#endif

[[gnu::always_inline]] inline void matvec_body(const float* x, int m, int in, const float* w, int r0, int r1,
                                               float* y, int64_t ldy) {
  plain::any_body<F32Rows>(x, m, in, w, r0, r1, y, ldy);
}

KVSCOPE_SIMD_VARIANTS(void, matvec, (const float* x, int m, int in, const float* w, int r0, int r1, float* y, int64_t ldy),
                      (x, m, in, w, r0, r1, y, ldy))

// The fp16 copies: the AVX-512 and AVX2 ones convert with F16C (part of
// x86-64-v3 and -v4), the baseline one in scalar code.
KVSCOPE_TARGET_AVX512 void matvec_f16_avx512(const float* x, int m, int in, const uint16_t* w, int r0, int r1,
                                             float* y, int64_t ldy) {
  f16c::any_body<F16RowsF16c>(x, m, in, w, r0, r1, y, ldy);
}
KVSCOPE_TARGET_F16C void matvec_f16_avx2(const float* x, int m, int in, const uint16_t* w, int r0, int r1, float* y,
                                         int64_t ldy) {
  f16c::any_body<F16RowsF16c>(x, m, in, w, r0, r1, y, ldy);
}
void matvec_f16_baseline(const float* x, int m, int in, const uint16_t* w, int r0, int r1, float* y, int64_t ldy) {
  plain::any_body<F16RowsScalar>(x, m, in, w, r0, r1, y, ldy);
}

KVSCOPE_TARGET_AVX512 void widen_avx512(const uint16_t* h, int64_t n, float* f) {
  f16c::widen_body<F16RowsF16c>(h, n, f);
}
KVSCOPE_TARGET_F16C void widen_avx2(const uint16_t* h, int64_t n, float* f) { f16c::widen_body<F16RowsF16c>(h, n, f); }
void widen_baseline(const uint16_t* h, int64_t n, float* f) { plain::widen_body<F16RowsScalar>(h, n, f); }

}  // namespace

void matvec_rows(SimdPath path, const float* x, int m, int in, const float* w, int r0, int r1, float* y, int64_t ldy) {
  simd_pick(path, matvec_avx512, matvec_avx2, matvec_baseline)(x, m, in, w, r0, r1, y, ldy);
}

void matvec_rows(const float* x, int m, int in, const float* w, int r0, int r1, float* y, int64_t ldy) {
  matvec_rows(simd_path(), x, m, in, w, r0, r1, y, ldy);
}

void matvec_rows_f16(SimdPath path, const float* x, int m, int in, const uint16_t* w, int r0, int r1, float* y,
                     int64_t ldy) {
  // An AVX2 CPU without F16C (none is known) would take the scalar copy.
  static const bool f16c = __builtin_cpu_supports("f16c");
  if (path == SimdPath::avx2 && !f16c) path = SimdPath::baseline;
  simd_pick(path, matvec_f16_avx512, matvec_f16_avx2, matvec_f16_baseline)(x, m, in, w, r0, r1, y, ldy);
}

void matvec_rows_f16(const float* x, int m, int in, const uint16_t* w, int r0, int r1, float* y, int64_t ldy) {
  matvec_rows_f16(simd_path(), x, m, in, w, r0, r1, y, ldy);
}

void widen_halves(const uint16_t* h, int64_t n, float* f) {
  static const bool f16c = __builtin_cpu_supports("f16c");
  SimdPath path = simd_path();
  if (path == SimdPath::avx2 && !f16c) path = SimdPath::baseline;
  simd_pick(path, widen_avx512, widen_avx2, widen_baseline)(h, n, f);
}

}  // namespace kvscope::cpu
