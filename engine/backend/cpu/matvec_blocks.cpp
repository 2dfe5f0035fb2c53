#include <cstring>

#include "backend/cpu/matvec.h"
#include "io/dtype.h"

namespace kvscope::cpu {
namespace {

constexpr int kLanes = 16;

// See matvec.cpp: eight floats as one GCC vector, loads through memcpy.
typedef float v8 __attribute__((vector_size(32)));

#include "backend/cpu/dequant_blocks.inc"
#include "backend/cpu/matvec_loops.inc"

// The cache lines of the block at p, asked for ahead of their use: decode
// streams a quantized matrix from memory as it does an fp32 one.
template <class B>
[[gnu::always_inline]] inline void prefetch_block(const std::byte* p) {
  for (int off = 0; off < B::kBytes; off += 64) __builtin_prefetch(p + off);
  if (B::kBytes % 64 != 0) __builtin_prefetch(p + B::kBytes - 1);
}

// matvec_rows() over rows of blocks: each block dequantized into a small
// buffer (in L1), then multiplied 16 elements at a time exactly as
// matvec_loops.inc's rows_body does: element k in lane k mod 16, lanes
// summed in the element order, no FMA, the same fixed tree at the end. So a
// row of blocks gives the bits of the same row dequantized to fp32.
template <class B, int M>
[[gnu::always_inline]] inline void block_rows_body(const float* x, int in, const std::byte* w, int r0, int r1, float* y,
                                                   int64_t ldy) {
  static_assert(B::kElements % kLanes == 0);
  const int blocks = in / B::kElements;
  const int64_t row_bytes = int64_t(blocks) * B::kBytes;
  alignas(32) float buf[B::kElements];
  for (int r = r0; r < r1; ++r) {
    const std::byte* row = w + int64_t(r) * row_bytes;
    v8 lo[M] = {}, hi[M] = {};
    for (int b = 0; b < blocks; ++b) {
      const std::byte* block = row + int64_t(b) * B::kBytes;
      prefetch_block<B>(block + 2 * row_bytes);
      B::dequantize(block, buf);
      const float* xb = x + int64_t(b) * B::kElements;
      for (int k = 0; k < B::kElements; k += kLanes) {
        const v8 wl = load8(buf + k), wh = load8(buf + k + 8);
        for (int i = 0; i < M; ++i) {
          lo[i] += wl * load8(xb + int64_t(i) * in + k);
          hi[i] += wh * load8(xb + int64_t(i) * in + k + 8);
        }
      }
    }
    for (int i = 0; i < M; ++i) y[int64_t(i) * ldy + r] = reduce(lo[i], hi[i]);
  }
}

template <class B>
[[gnu::always_inline]] inline void any_block_body(const float* x, int m, int in, const std::byte* w, int r0, int r1,
                                                  float* y, int64_t ldy) {
  if (m == 1) block_rows_body<B, 1>(x, in, w, r0, r1, y, ldy);
  else block_rows_body<B, 2>(x, in, w, r0, r1, y, ldy);
}

#define KVSCOPE_BLOCK_MATVEC(T)                                                                                     \
  [[gnu::always_inline]] inline void matvec_##T##_body(const float* x, int m, int in, const std::byte* w, int r0,   \
                                                       int r1, float* y, int64_t ldy) {                             \
    any_block_body<T##Blocks>(x, m, in, w, r0, r1, y, ldy);                                                         \
  }                                                                                                                 \
  KVSCOPE_SIMD_VARIANTS(void, matvec_##T,                                                                           \
                        (const float* x, int m, int in, const std::byte* w, int r0, int r1, float* y, int64_t ldy), \
                        (x, m, in, w, r0, r1, y, ldy))

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

#define KVSCOPE_PICK(T) simd_pick(path, matvec_##T##_avx512, matvec_##T##_avx2, matvec_##T##_baseline)

BlockMatvec block_matvec(SimdPath path, GgmlType type) {
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
  return nullptr;
}
#undef KVSCOPE_PICK

}  // namespace

bool matvec_reads_blocks(GgmlType type) { return block_matvec(SimdPath::baseline, type) != nullptr; }

void matvec_rows_blocks(SimdPath path, GgmlType type, const float* x, int m, int in, const std::byte* w, int r0, int r1,
                        float* y, int64_t ldy) {
  block_matvec(path, type)(x, m, in, w, r0, r1, y, ldy);
}

void matvec_rows_blocks(GgmlType type, const float* x, int m, int in, const std::byte* w, int r0, int r1, float* y,
                        int64_t ldy) {
  matvec_rows_blocks(simd_path(), type, x, m, in, w, r0, r1, y, ldy);
}

}  // namespace kvscope::cpu
