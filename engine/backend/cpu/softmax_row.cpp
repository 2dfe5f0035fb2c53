// cpu::softmax_row (declared in cpu_ops.h): the attention's softmax, one
// row at a time, eight entries per step.
//
// The exponential is kvscope's own rather than libm's expf, because a call
// per entry was a fifth of a long prefill (2048 tokens materialise a
// 2048 x 2048 row block per head) and a visible part of long-context
// decode. It is written with plain IEEE operations in a fixed order (this
// file is compiled without FMA contraction), so the baseline, AVX2 and
// AVX-512 copies give the same bits, and it stays within about one ulp of
// the true exponential (tests/backend/test_softmax_row.cpp).
#include <cstdint>
#include <cstring>
#include <limits>

#include "backend/cpu/cpu_ops.h"
#include "backend/cpu/simd_path.h"
#include "backend/cpu/vec8.h"

namespace kvscope::cpu {
namespace {

typedef int32_t v8i __attribute__((vector_size(32)));
typedef double v4d __attribute__((vector_size(32)));

// Below this, exp(t) is smaller than the smallest normal float; softmax
// entries that small are 0 here (expf would give a subnormal).
constexpr float kExpUnderflow = -87.33654f;

// exp(t) for t <= 0: t = n ln2 + r with n an integer and |r| <= ln2 / 2,
// exp(r) by its Taylor series to r^7 (the next term is below 1e-8 of the
// result), times 2^n built from the exponent bits. ln2 is split in two
// (Cody and Waite) so that n * ln2_hi is exact.
[[gnu::always_inline]] inline v8 exp_nonpositive(v8 t) {
  const float log2e = 1.44269504088896341f;
  const float ln2_hi = 0.693359375f;  // 355 / 512: 9 significant bits
  const float ln2_lo = -2.12194440e-4f;
  const float round_magic = 12582912.0f;  // 1.5 * 2^23: adding and subtracting it rounds to an integer
  // Clamped first (NaN included) so that n always converts to an int.
  const v8 lowest = v8{} + (kExpUnderflow - 1.0f);
  const v8 tc = t >= lowest ? t : lowest;
  const v8 n = (tc * log2e + round_magic) - round_magic;
  const v8 r = (tc - n * ln2_hi) - n * ln2_lo;
  v8 p = r * (1.0f / 5040) + (1.0f / 720);
  p = p * r + (1.0f / 120);
  p = p * r + (1.0f / 24);
  p = p * r + (1.0f / 6);
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  // n >= -126 wherever t >= kExpUnderflow, so 2^n is a normal float.
  const v8i n_int = __builtin_convertvector(n, v8i);
  const v8i bits = (n_int + 127) << 23;
  v8 scale;
  std::memcpy(&scale, &bits, sizeof scale);
  const v8 zero = {};
  return t >= kExpUnderflow ? p * scale : zero;
}

// Eight entries per step; a row's last (n mod 8) entries run as one more
// step over a copy padded with -inf, so every entry takes the same path.
// The sum is kept in double in eight fixed lanes (entry j in lane j mod 8),
// combined by one fixed tree.
[[gnu::always_inline]] inline void softmax_body(float* x, int n) {
  const float neg_inf = -std::numeric_limits<float>::infinity();
  const int whole = n / 8 * 8;
  float tail[8];
  for (int j = 0; j < 8; ++j) tail[j] = whole + j < n ? x[whole + j] : neg_inf;

  v8 mx8 = load8(tail);
  for (int j = 0; j < whole; j += 8) {
    const v8 v = load8(x + j);
    mx8 = v > mx8 ? v : mx8;
  }
  float lanes[8];
  std::memcpy(lanes, &mx8, sizeof lanes);
  float mx = lanes[0];
  for (int j = 1; j < 8; ++j) mx = lanes[j] > mx ? lanes[j] : mx;

  // -inf entries (masked slots) become exactly 0, as the scores' mask says.
  const v8 zero = {};
  v4d sum_lo = {}, sum_hi = {};
  auto exp_step = [&](float* p) {
    const v8 v = load8(p);
    const v8 e = v == neg_inf ? zero : exp_nonpositive(v - mx);
    store8(p, e);
    sum_lo += __builtin_convertvector(__builtin_shufflevector(e, e, 0, 1, 2, 3), v4d);
    sum_hi += __builtin_convertvector(__builtin_shufflevector(e, e, 4, 5, 6, 7), v4d);
  };
  for (int j = 0; j < whole; j += 8) exp_step(x + j);
  exp_step(tail);

  const v4d s4 = sum_lo + sum_hi;
  double s[4];
  std::memcpy(s, &s4, sizeof s);
  const double sum = (s[0] + s[2]) + (s[1] + s[3]);
  const float inv = static_cast<float>(1.0 / sum);
  for (int j = 0; j < whole; j += 8) store8(x + j, load8(x + j) * inv);
  for (int j = whole; j < n; ++j) x[j] = tail[j - whole] * inv;
}

KVSCOPE_SIMD_VARIANTS(void, softmax, (float* x, int n), (x, n))

}  // namespace

void softmax_row(SimdPath path, float* x, int n) {
  simd_pick(path, softmax_avx512, softmax_avx2, softmax_baseline)(x, n);
}

void softmax_row(float* x, int n) { softmax_row(simd_path(), x, n); }

}  // namespace kvscope::cpu
