// Branch-free single-precision log and exp for the hot loops that draw
// Keyformer's noise and take its softmax. glibc's logf/expf are scalar
// calls, so a loop over a cache row cannot be vectorised around them; these
// are plain arithmetic on the float's bits, so the compiler turns a loop of
// them into SIMD code, and CUDA kernels use the same definitions (one noise
// stream on every backend).
//
// Accuracy against double-precision log/exp (tests/backend/
// test_keyformer_row.cpp): log_pos within 0.9 ulp over the positive normals,
// exp_nonpos within 1.2 ulp on [-87, 0]; the test asserts 2. Domains are what the callers need, not IEEE's
// whole range: log_pos takes positive normal floats; exp_nonpos takes
// z <= 0 including -inf and returns 0 below -87 (where e^z is subnormal).
#pragma once

#include <cstdint>
#include <cstring>

#ifdef __CUDACC__
#define KVSCOPE_FM __host__ __device__ __forceinline__
#else
#define KVSCOPE_FM inline
#endif

namespace kvscope::fm {

// The same bits as another 4-byte type (memcpy is the defined way in C++
// and compiles to a register move, on the host and in device code alike).
template <typename To, typename From>
KVSCOPE_FM To same_bits(From x) {
  static_assert(sizeof(To) == sizeof(From));
  To y;
  memcpy(&y, &x, sizeof y);
  return y;
}

// ln x for positive normal x. x = m * 2^e with m in [sqrt(1/2), sqrt(2)),
// ln m = 2 atanh(s), s = (m - 1) / (m + 1), |s| <= 0.1716, by its Taylor
// series to s^9 (the next term is below 2^-27 of the sum); ln 2 is split in
// a part exact in float times any exponent and a remainder.
KVSCOPE_FM float log_pos(float x) {
  const uint32_t b = same_bits<uint32_t>(x);
  // Exponent taken relative to sqrt(1/2)'s bit pattern, so the mantissa
  // lands in [sqrt(1/2), sqrt(2)).
  const int32_t e = static_cast<int32_t>(b - 0x3f3504f3u) >> 23;
  const float m = same_bits<float>(b - static_cast<uint32_t>(e) * (1u << 23));
  const float f = m - 1.0f;  // exact
  const float s = f / (m + 1.0f);
  const float s2 = s * s;
  // 2 atanh(s) = 2s + s R with R = 2s^2/3 + 2s^4/5 + ..., and 2s = f - s f,
  // so ln m = f - s (f - R): f is exact and the rounded part is small.
  const float R = s2 * (0.6666666667f + s2 * (0.4f + s2 * (0.2857142857f + s2 * 0.2222222222f)));
  const float ln_m = f - s * (f - R);
  const float ef = static_cast<float>(e);
  return ef * 0.693145752f + (ln_m + ef * 1.42860677e-6f);
}

// e^z for z <= 0 (and -inf -> 0). z = n ln 2 + r, |r| <= ln2 / 2, e^r by
// its Taylor series to r^7, 2^n put into the exponent bits.
KVSCOPE_FM float exp_nonpos(float z) {
  const float zc = z < -87.0f ? -87.0f : z;
  // Round to nearest by the 1.5 * 2^23 trick (exact for |t| < 2^22).
  const float t = zc * 1.44269504f + 12582912.0f;
  const float n = t - 12582912.0f;
  const float r = (zc - n * 0.693145752f) - n * 1.42860677e-6f;
  const float p =
      1.0f +
      r * (1.0f + r * (0.5f + r * (0.1666666667f + r * (0.04166666667f + r * (0.008333333333f +
                                                                             r * (0.001388888889f + r * 1.984126984e-4f))))));
  const float scale = same_bits<float>(static_cast<uint32_t>(static_cast<int32_t>(n) + 127) << 23);
  return z < -87.0f ? 0.0f : p * scale;
}

}  // namespace kvscope::fm
