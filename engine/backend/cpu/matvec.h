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

#include <cstdint>

#include "backend/cpu/simd_path.h"

namespace kvscope::cpu {

// Input rows a call of matvec_rows() takes at most.
constexpr int kMatvecMaxRows = 2;

// For output features r in [r0, r1) and input rows i < m (m <= kMatvecMaxRows):
// y[i * ldy + r] = sum_k x[i * in + k] * w[r * in + k]. No bias.
void matvec_rows(SimdPath path, const float* x, int m, int in, const float* w, int r0, int r1, float* y, int64_t ldy);
void matvec_rows(const float* x, int m, int in, const float* w, int r0, int r1, float* y, int64_t ldy);

}  // namespace kvscope::cpu
