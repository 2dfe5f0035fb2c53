#include <cstring>
#include <type_traits>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

#include "backend/cpu/matvec.h"
#include "backend/cpu/matvec_target.h"
#include "io/dtype.h"

namespace kvscope::cpu {
namespace {

typedef int32_t i32x8 __attribute__((vector_size(32)));
typedef uint32_t u32x8 __attribute__((vector_size(32)));
typedef uint16_t u16x8 __attribute__((vector_size(16)));
typedef uint16_t u16x16 __attribute__((vector_size(32)));
typedef uint8_t u8x32 __attribute__((vector_size(32)));

// The loops, included twice: once as plain code (the baseline copy), once
// under the AVX2, FMA and F16C target (the AVX2 and AVX-512 copies), each
// with its own fused step (mul_add, matvec_target.h), its own way of
// widening eight bytes in memory (zext8, sext8) to eight int32 lanes and
// of reading a half, its exact_product_plus / _minus (a * b +- c for an
// exact a * b: dequant_blocks.inc), and how many Q6_K rows a thread reads
// side by side (KVSCOPE_Q6_K_ROWS, matvec_blocks_body.inc). (GCC turns the
// generic vector form of that widening into byte-by-byte scalar code, the
// cost of the whole product; the AVX2 copy says vpmovzxbd / vpmovsxbd.)
namespace plain {
[[gnu::always_inline]] inline v8 mul_add(v8 a, v8 b, v8 acc) { return mul_add_scalar(a, b, acc); }
[[gnu::always_inline]] inline v8 exact_product_plus(v8 a, v8 b, v8 c) { return a * b + c; }
[[gnu::always_inline]] inline v8 exact_product_minus(v8 a, v8 b, v8 c) { return a * b - c; }
[[gnu::always_inline]] inline i32x8 zext8(const std::byte* p) {
  i32x8 v;
  for (int i = 0; i < 8; ++i) v[i] = static_cast<uint8_t>(p[i]);
  return v;
}
[[gnu::always_inline]] inline i32x8 sext8(const std::byte* p) {
  i32x8 v;
  for (int i = 0; i < 8; ++i) v[i] = static_cast<int8_t>(p[i]);
  return v;
}
#define KVSCOPE_BLOCKS_F16C 0
#define KVSCOPE_Q6_K_ROWS 2
#include "backend/cpu/matvec_loops.inc"
#include "backend/cpu/dequant_blocks.inc"
#include "backend/cpu/matvec_blocks_body.inc"
#undef KVSCOPE_Q6_K_ROWS
#undef KVSCOPE_BLOCKS_F16C
}  // namespace plain

#if KVSCOPE_HAVE_TARGET_PRAGMAS
KVSCOPE_TARGET_PUSH("avx2,f16c,fma")
namespace avx2 {
[[gnu::always_inline]] inline v8 mul_add(v8 a, v8 b, v8 acc) { return mul_add_fma(a, b, acc); }
[[gnu::always_inline]] inline v8 exact_product_plus(v8 a, v8 b, v8 c) { return mul_add_fma(a, b, c); }
[[gnu::always_inline]] inline v8 exact_product_minus(v8 a, v8 b, v8 c) {
  return v8(_mm256_fmsub_ps(__m256(a), __m256(b), __m256(c)));
}
[[gnu::always_inline]] inline i32x8 zext8(const std::byte* p) {
  const __m256i v = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
  i32x8 r;
  std::memcpy(&r, &v, sizeof r);
  return r;
}
[[gnu::always_inline]] inline i32x8 sext8(const std::byte* p) {
  const __m256i v = _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
  i32x8 r;
  std::memcpy(&r, &v, sizeof r);
  return r;
}
#define KVSCOPE_BLOCKS_F16C 1
#define KVSCOPE_Q6_K_ROWS 3
#include "backend/cpu/matvec_loops.inc"
#include "backend/cpu/dequant_blocks.inc"
#include "backend/cpu/matvec_blocks_body.inc"
#undef KVSCOPE_Q6_K_ROWS
#undef KVSCOPE_BLOCKS_F16C
}  // namespace avx2
KVSCOPE_TARGET_POP
KVSCOPE_TARGET_PUSH("avx512f,avx512bw,avx512dq,avx512vl,avx2,f16c,fma")
#include "backend/cpu/matvec_blocks_avx512.inc"
namespace avx512 {
// The AVX-512 copy of each type's product: its own table form where it has
// one, else the AVX2 loops with AVX-512's encoding and registers.
template <class B>
[[gnu::always_inline]] inline void any_block_body(const float* x, int m, int in, const std::byte* w, int r0, int r1,
                                                  float* y, int64_t ldy) {
  if constexpr (std::is_same_v<B, avx2::Q4_0Blocks>) zmm_body<Q4_0Zmm>(x, m, in, w, r0, r1, y, ldy);
  else if constexpr (std::is_same_v<B, avx2::Q4_1Blocks>) zmm_body<Q4_1Zmm>(x, m, in, w, r0, r1, y, ldy);
  else if constexpr (std::is_same_v<B, avx2::Q5_0Blocks>) zmm_body<Q5SmallZmm<false>>(x, m, in, w, r0, r1, y, ldy);
  else if constexpr (std::is_same_v<B, avx2::Q5_1Blocks>) zmm_body<Q5SmallZmm<true>>(x, m, in, w, r0, r1, y, ldy);
  else if constexpr (std::is_same_v<B, avx2::Q4_KBlocks>) zmm_body<KQuantZmm<16, false>>(x, m, in, w, r0, r1, y, ldy);
  else if constexpr (std::is_same_v<B, avx2::Q5_KBlocks>) zmm_body<KQuantZmm<48, true>>(x, m, in, w, r0, r1, y, ldy);
  else if constexpr (std::is_same_v<B, avx2::Q8_0Blocks>) zmm_body<Q8_0Zmm>(x, m, in, w, r0, r1, y, ldy);
  else if constexpr (std::is_same_v<B, avx2::Q6_KBlocks>) zmm_body<Q6_KZmm>(x, m, in, w, r0, r1, y, ldy);
  else avx2::any_block_body<B>(x, m, in, w, r0, r1, y, ldy);
}
}  // namespace avx512
KVSCOPE_TARGET_POP
#else
namespace avx2 = plain;
namespace avx512 = plain;
#endif

#define KVSCOPE_BLOCK_MATVEC(T)                                                                                     \
  KVSCOPE_TARGET_AVX512 void matvec_##T##_avx512(const float* x, int m, int in, const std::byte* w, int r0, int r1, \
                                                 float* y, int64_t ldy) {                                           \
    avx512::any_block_body<avx2::T##Blocks>(x, m, in, w, r0, r1, y, ldy);                                           \
  }                                                                                                                 \
  KVSCOPE_TARGET_F16C void matvec_##T##_avx2(const float* x, int m, int in, const std::byte* w, int r0, int r1,     \
                                             float* y, int64_t ldy) {                                               \
    avx2::any_block_body<avx2::T##Blocks>(x, m, in, w, r0, r1, y, ldy);                                             \
  }                                                                                                                 \
  void matvec_##T##_baseline(const float* x, int m, int in, const std::byte* w, int r0, int r1, float* y,           \
                             int64_t ldy) {                                                                         \
    plain::any_block_body<plain::T##Blocks>(x, m, in, w, r0, r1, y, ldy);                                           \
  }                                                                                                                 \
  KVSCOPE_TARGET_AVX512 void dequantize_##T##_avx512(const std::byte* src, int64_t n, float* dst) {                 \
    avx2::dequantize_body<avx2::T##Blocks>(src, n, dst);                                                            \
  }                                                                                                                 \
  KVSCOPE_TARGET_F16C void dequantize_##T##_avx2(const std::byte* src, int64_t n, float* dst) {                     \
    avx2::dequantize_body<avx2::T##Blocks>(src, n, dst);                                                            \
  }                                                                                                                 \
  void dequantize_##T##_baseline(const std::byte* src, int64_t n, float* dst) {                                     \
    plain::dequantize_body<plain::T##Blocks>(src, n, dst);                                                          \
  }

KVSCOPE_BLOCK_MATVEC(Q4_0)
KVSCOPE_BLOCK_MATVEC(Q4_1)
KVSCOPE_BLOCK_MATVEC(Q5_0)
KVSCOPE_BLOCK_MATVEC(Q5_1)
KVSCOPE_BLOCK_MATVEC(Q8_0)
KVSCOPE_BLOCK_MATVEC(Q4_K)
KVSCOPE_BLOCK_MATVEC(Q5_K)
KVSCOPE_BLOCK_MATVEC(Q6_K)
KVSCOPE_BLOCK_MATVEC(BF16)
#undef KVSCOPE_BLOCK_MATVEC

using BlockMatvec = void (*)(const float*, int, int, const std::byte*, int, int, float*, int64_t);
using BlockDequantize = void (*)(const std::byte*, int64_t, float*);

struct BlockKernels {
  BlockMatvec matvec = nullptr;
  BlockDequantize dequantize = nullptr;
};

#define KVSCOPE_PICK(T)                                                                            \
  BlockKernels {                                                                                   \
    simd_pick(path, matvec_##T##_avx512, matvec_##T##_avx2, matvec_##T##_baseline),                \
        simd_pick(path, dequantize_##T##_avx512, dequantize_##T##_avx2, dequantize_##T##_baseline) \
  }

BlockKernels block_kernels(SimdPath path, GgmlType type) {
  path = matvec_simd_path(path);
  switch (type) {
    case GgmlType::Q4_0: return KVSCOPE_PICK(Q4_0);
    case GgmlType::Q4_1: return KVSCOPE_PICK(Q4_1);
    case GgmlType::Q5_0: return KVSCOPE_PICK(Q5_0);
    case GgmlType::Q5_1: return KVSCOPE_PICK(Q5_1);
    case GgmlType::Q8_0: return KVSCOPE_PICK(Q8_0);
    case GgmlType::Q4_K: return KVSCOPE_PICK(Q4_K);
    case GgmlType::Q5_K: return KVSCOPE_PICK(Q5_K);
    case GgmlType::Q6_K: return KVSCOPE_PICK(Q6_K);
    case GgmlType::BF16: return KVSCOPE_PICK(BF16);
    case GgmlType::F32:
    case GgmlType::F16: break;
  }
  return {};
}
#undef KVSCOPE_PICK

}  // namespace

bool matvec_reads_blocks(GgmlType type) { return block_kernels(SimdPath::baseline, type).matvec != nullptr; }

void matvec_rows_blocks(SimdPath path, GgmlType type, const float* x, int m, int in, const std::byte* w, int r0, int r1,
                        float* y, int64_t ldy) {
  block_kernels(path, type).matvec(x, m, in, w, r0, r1, y, ldy);
}

void matvec_rows_blocks(GgmlType type, const float* x, int m, int in, const std::byte* w, int r0, int r1, float* y,
                        int64_t ldy) {
  matvec_rows_blocks(simd_path(), type, x, m, in, w, r0, r1, y, ldy);
}

void dequantize_blocks(SimdPath path, GgmlType type, const std::byte* src, int64_t n, float* dst) {
  block_kernels(path, type).dequantize(src, n, dst);
}

void dequantize_blocks(GgmlType type, const std::byte* src, int64_t n, float* dst) {
  dequantize_blocks(simd_path(), type, src, n, dst);
}

}  // namespace kvscope::cpu
