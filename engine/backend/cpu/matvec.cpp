#include "backend/cpu/matvec.h"

#include <cstring>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

#include "backend/cpu/matvec_target.h"
#include "io/dtype.h"

namespace kvscope::cpu {
namespace {

#if KVSCOPE_HAVE_TARGET_PRAGMAS
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
#define KVSCOPE_HAVE_F16C_LOADER 1
#endif

// The loops twice: plain code (the baseline copy, its fused step fmaf) and
// under the AVX2, FMA and F16C target (the AVX2 and AVX-512 copies).
namespace plain {
[[gnu::always_inline]] inline v8 mul_add(v8 a, v8 b, v8 acc) { return mul_add_scalar(a, b, acc); }
#include "backend/cpu/matvec_loops.inc"
}  // namespace plain
#ifndef KVSCOPE_HAVE_F16C_LOADER
using F16RowsF16c = plain::F16RowsScalar;
#endif

#if KVSCOPE_HAVE_TARGET_PRAGMAS
KVSCOPE_TARGET_PUSH("avx2,f16c,fma")
namespace wide {
[[gnu::always_inline]] inline v8 mul_add(v8 a, v8 b, v8 acc) { return mul_add_fma(a, b, acc); }
#include "backend/cpu/matvec_loops.inc"
}  // namespace wide
KVSCOPE_TARGET_POP
#else
namespace wide = plain;
#endif

// Rows read side by side (rows_body's R): two on the AVX2 copies, one on
// the AVX-512 ones, as measured on a Zen 3 and a Zen 5 (bench/NOTES.md).
// On a Zen 4 two rows read an 8192-wide matrix 15-20% faster alone, but
// SmolLM2's F32 decode (576-wide rows) ran at 36-37 tok/s against one
// row's 49-62: one it stays.
constexpr int kRowsAvx2 = 2, kRowsAvx512 = 1;

KVSCOPE_TARGET_AVX512 void matvec_avx512(const float* x, int m, int in, const float* w, int r0, int r1, float* y,
                                         int64_t ldy) {
  wide::any_body<wide::F32Rows, kRowsAvx512>(x, m, in, w, r0, r1, y, ldy);
}
KVSCOPE_TARGET_F16C void matvec_avx2(const float* x, int m, int in, const float* w, int r0, int r1, float* y,
                                     int64_t ldy) {
  wide::any_body<wide::F32Rows, kRowsAvx2>(x, m, in, w, r0, r1, y, ldy);
}
void matvec_baseline(const float* x, int m, int in, const float* w, int r0, int r1, float* y, int64_t ldy) {
  plain::any_body<plain::F32Rows>(x, m, in, w, r0, r1, y, ldy);
}

// The fp16 copies: the AVX-512 and AVX2 ones convert with F16C (part of
// x86-64-v3 and -v4), the baseline one in scalar code.
KVSCOPE_TARGET_AVX512 void matvec_f16_avx512(const float* x, int m, int in, const uint16_t* w, int r0, int r1,
                                             float* y, int64_t ldy) {
  wide::any_body<F16RowsF16c, kRowsAvx512>(x, m, in, w, r0, r1, y, ldy);
}
KVSCOPE_TARGET_F16C void matvec_f16_avx2(const float* x, int m, int in, const uint16_t* w, int r0, int r1, float* y,
                                         int64_t ldy) {
  wide::any_body<F16RowsF16c, kRowsAvx2>(x, m, in, w, r0, r1, y, ldy);
}
void matvec_f16_baseline(const float* x, int m, int in, const uint16_t* w, int r0, int r1, float* y, int64_t ldy) {
  plain::any_body<plain::F16RowsScalar>(x, m, in, w, r0, r1, y, ldy);
}

KVSCOPE_TARGET_AVX512 void widen_avx512(const uint16_t* h, int64_t n, float* f) {
  wide::widen_body<F16RowsF16c>(h, n, f);
}
KVSCOPE_TARGET_F16C void widen_avx2(const uint16_t* h, int64_t n, float* f) { wide::widen_body<F16RowsF16c>(h, n, f); }
void widen_baseline(const uint16_t* h, int64_t n, float* f) { plain::widen_body<plain::F16RowsScalar>(h, n, f); }

}  // namespace

void matvec_rows(SimdPath path, const float* x, int m, int in, const float* w, int r0, int r1, float* y, int64_t ldy) {
  path = matvec_simd_path(path);
  simd_pick(path, matvec_avx512, matvec_avx2, matvec_baseline)(x, m, in, w, r0, r1, y, ldy);
}

void matvec_rows(const float* x, int m, int in, const float* w, int r0, int r1, float* y, int64_t ldy) {
  matvec_rows(simd_path(), x, m, in, w, r0, r1, y, ldy);
}

void matvec_rows_f16(SimdPath path, const float* x, int m, int in, const uint16_t* w, int r0, int r1, float* y,
                     int64_t ldy) {
  path = matvec_simd_path(path);
  simd_pick(path, matvec_f16_avx512, matvec_f16_avx2, matvec_f16_baseline)(x, m, in, w, r0, r1, y, ldy);
}

void matvec_rows_f16(const float* x, int m, int in, const uint16_t* w, int r0, int r1, float* y, int64_t ldy) {
  matvec_rows_f16(simd_path(), x, m, in, w, r0, r1, y, ldy);
}

void widen_halves(const uint16_t* h, int64_t n, float* f) {
  const SimdPath path = matvec_simd_path(simd_path());
  simd_pick(path, widen_avx512, widen_avx2, widen_baseline)(h, n, f);
}

}  // namespace kvscope::cpu
