// kvscope's own matrix-vector product for decode: y[m][r] = x[m] . W[r] for
// one or two input rows (a decode step, or a policy run and its full-cache
// reference stepped together). Each weight row is read once for all input
// rows, which is what makes stepping the reference alongside nearly free:
// decode is bound by reading the weights.
//
// Every dot product is summed the same way whatever the instruction set,
// the thread count, the band it falls in, or how many input rows share the
// call: 16 fixed lanes (lane t takes the elements i with i mod 16 == t), no
// FMA contraction, the lanes combined by one fixed tree. So one row alone
// and the same row next to another give the same bits, and so do the
// baseline, AVX2 and AVX-512 copies (backend/cpu/simd_path.h).
#pragma once

#include <cstddef>
#include <cstdint>

#include "backend/cpu/simd_path.h"
#include "io/ggml_type.h"

namespace kvscope::cpu {

// Input rows a call of matvec_rows() takes at most.
constexpr int kMatvecMaxRows = 2;

// For output features r in [r0, r1) and input rows i < m (m <= kMatvecMaxRows):
// y[i * ldy + r] = sum_k x[i * in + k] * w[r * in + k]. No bias.
void matvec_rows(SimdPath path, const float* x, int m, int in, const float* w, int r0, int r1, float* y, int64_t ldy);
void matvec_rows(const float* x, int m, int in, const float* w, int r0, int r1, float* y, int64_t ldy);
// The same with IEEE half weights (--weights f16): each half is widened to
// float exactly and summed as above, so the result is bit for bit that of
// matvec_rows() on the same weights stored as float.
void matvec_rows_f16(SimdPath path, const float* x, int m, int in, const uint16_t* w, int r0, int r1, float* y,
                     int64_t ldy);
void matvec_rows_f16(const float* x, int m, int in, const uint16_t* w, int r0, int r1, float* y, int64_t ldy);
// The same over rows of GGUF blocks (`type` quantized or BF16; a row is
// in / block elements whole blocks, read in place): each block dequantized
// as io/gguf_dequant.h does and summed as above, so the result is bit for
// bit that of matvec_rows() on the dequantized fp32 matrix, on every path.
bool matvec_reads_blocks(GgmlType type);  // the types these take (F16 rows go to matvec_rows_f16)
void matvec_rows_blocks(SimdPath path, GgmlType type, const float* x, int m, int in, const std::byte* w, int r0, int r1,
                        float* y, int64_t ldy);
void matvec_rows_blocks(GgmlType type, const float* x, int m, int in, const std::byte* w, int r0, int r1, float* y,
                        int64_t ldy);
// n elements (whole blocks of `type`, one of matvec_reads_blocks()) at src
// -> their floats, the values io/gguf_dequant.h gives, on every path.
void dequantize_blocks(SimdPath path, GgmlType type, const std::byte* src, int64_t n, float* dst);
void dequantize_blocks(GgmlType type, const std::byte* src, int64_t n, float* dst);
// f[i] = the float of half h[i], for i < n (exact; vectorised where F16C is).
void widen_halves(const uint16_t* h, int64_t n, float* f);

}  // namespace kvscope::cpu
