// What the matrix-vector product files share (matvec.cpp: fp32 and fp16
// rows; matvec_blocks.cpp: GGUF blocks): the vector type and lane count
// matvec_loops.inc sums in, and the pragmas that compile a namespace of
// those loops for a wider instruction set than the build's baseline.
#pragma once

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

#include "backend/cpu/simd_path.h"

namespace kvscope::cpu {

// Sixteen lanes as two eight-float vectors: the fixed order every product
// sums in, on every instruction set (so every copy gives the same bits).
inline constexpr int kLanes = 16;

// Eight floats as one GCC vector: a ymm register in the AVX2 and AVX-512
// copies, two xmm registers in the baseline one. Loads go through memcpy
// (rows need not be 32-byte aligned).
typedef float v8 __attribute__((vector_size(32)));

// The step every product sums by, lane by lane: acc + a * b rounded once (a
// fused multiply-add). One rounding is IEEE's fusedMultiplyAdd, exactly
// defined, so the FMA instruction of the AVX2 and AVX-512 copies and the
// baseline copy's fmaf give the same bits; and one instruction where an
// unfused step took two (the product and the sum each rounded) is what an
// exact product is bound by once the weights are dequantized in registers
// (bench/NOTES.md, 2026-11-28: Q4_K 15% faster on a Zen 4). Each copy of
// the loops names its own as mul_add. (The files are still built without
// contraction, so nothing else is fused: a dequantized weight is the
// reference's own product and sum.)
[[gnu::always_inline]] inline v8 mul_add_scalar(v8 a, v8 b, v8 acc) {
  v8 r;
  for (int i = 0; i < 8; ++i) r[i] = __builtin_fmaf(a[i], b[i], acc[i]);
  return r;
}

}  // namespace kvscope::cpu

// KVSCOPE_TARGET_PUSH("avx2,f16c") ... KVSCOPE_TARGET_POP: every function
// between them is compiled for that target (GCC's target pragma; clang
// ignores it, and its attribute pragma does the same). Only where
// KVSCOPE_HAVE_TARGET_PRAGMAS is 1: elsewhere the files alias the wider
// copy to the plain one.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(KVSCOPE_NO_SIMD_VARIANTS)
#define KVSCOPE_HAVE_TARGET_PRAGMAS 1
#define KVSCOPE_PRAGMA(x) _Pragma(#x)
#if defined(__clang__)
#define KVSCOPE_TARGET_PUSH(t) KVSCOPE_PRAGMA(clang attribute push(__attribute__((target(t))), apply_to = function))
#define KVSCOPE_TARGET_POP KVSCOPE_PRAGMA(clang attribute pop)
#else
#define KVSCOPE_TARGET_PUSH(t) KVSCOPE_PRAGMA(GCC push_options) KVSCOPE_PRAGMA(GCC target(t))
#define KVSCOPE_TARGET_POP KVSCOPE_PRAGMA(GCC pop_options)
#endif
#else
#define KVSCOPE_HAVE_TARGET_PRAGMAS 0
#endif

#if KVSCOPE_HAVE_TARGET_PRAGMAS
namespace kvscope::cpu {
[[gnu::always_inline]] __attribute__((target("avx2,fma"))) inline v8 mul_add_fma(v8 a, v8 b, v8 acc) {
  return v8(_mm256_fmadd_ps(__m256(a), __m256(b), __m256(acc)));
}
}  // namespace kvscope::cpu
#endif
