#include "io/dtype.h"

#include <cmath>

namespace kvscope {

std::optional<DType> parse_safetensors_dtype(std::string_view s) {
  if (s == "F32") return DType::F32;
  if (s == "F16") return DType::F16;
  if (s == "BF16") return DType::BF16;
  return std::nullopt;
}

const char* dtype_name(DType t) {
  switch (t) {
    case DType::F32: return "F32";
    case DType::F16: return "F16";
    case DType::BF16: return "BF16";
  }
  return "?";
}

std::size_t dtype_size(DType t) { return t == DType::F32 ? 4 : 2; }

float f16_to_f32(uint16_t h) {
  const uint32_t sign = (h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1f;
  const uint32_t mant = h & 0x3ffu;
  uint32_t u;
  if (exp == 0) {
    if (mant == 0) {
      u = sign;
    } else {  // subnormal half: value = mant * 2^-24
      float f = std::ldexp(static_cast<float>(mant), -24);
      std::memcpy(&u, &f, 4);
      u |= sign;
    }
  } else if (exp == 31) {
    u = sign | 0x7f800000u | (mant << 13);
  } else {
    u = sign | ((exp + 112) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

uint16_t f32_to_f16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  const uint32_t sign = (u >> 16) & 0x8000u;
  const uint32_t absu = u & 0x7fffffffu;
  if (absu >= 0x7f800000u) {  // inf or nan
    return static_cast<uint16_t>(sign | 0x7c00u | (absu > 0x7f800000u ? 0x200u : 0));
  }
  if (absu >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds to inf
  if (absu < 0x38800000u) {  // below the smallest normal half: subnormal or zero
    float a;
    std::memcpy(&a, &absu, 4);
    // Round a / 2^-24 to nearest even integer.
    float m = std::nearbyint(a * 16777216.0f);
    return static_cast<uint16_t>(sign | static_cast<uint32_t>(m));
  }
  // Normal: round mantissa from 23 to 10 bits, nearest even.
  uint32_t mant = absu & 0x7fffffu;
  uint32_t exp = (absu >> 23) - 112;
  uint32_t h = (exp << 10) | (mant >> 13);
  const uint32_t rest = mant & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) h += 1;  // may carry into exp: still right
  return static_cast<uint16_t>(sign | h);
}

uint16_t f32_to_bf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40u);  // quiet nan
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}

int64_t first_beyond_half(DType from, const void* src, std::size_t n) {
  if (from == DType::F16) return -1;
  for (std::size_t i = 0; i < n; ++i) {
    float f;
    if (from == DType::F32) std::memcpy(&f, static_cast<const char*>(src) + 4 * i, 4);
    else f = bf16_to_f32(static_cast<const uint16_t*>(src)[i]);
    // Compared on the float itself (NaN and infinities stay as they are), at
    // the threshold f32_to_f16 rounds to infinity from.
    if (std::fabs(f) >= 65520.0f && std::isfinite(f)) return static_cast<int64_t>(i);
  }
  return -1;
}

void convert_to_f32(DType from, const void* src, float* dst, std::size_t n) {
  switch (from) {
    case DType::F32:
      std::memcpy(dst, src, n * 4);
      return;
    case DType::F16: {
      const auto* s = static_cast<const uint16_t*>(src);
      for (std::size_t i = 0; i < n; ++i) dst[i] = f16_to_f32(s[i]);
      return;
    }
    case DType::BF16: {
      const auto* s = static_cast<const uint16_t*>(src);
      for (std::size_t i = 0; i < n; ++i) dst[i] = bf16_to_f32(s[i]);
      return;
    }
  }
}

}  // namespace kvscope
