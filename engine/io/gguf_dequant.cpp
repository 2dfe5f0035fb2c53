#include "io/gguf_dequant.h"

#include <cstring>

#include "io/dtype.h"

// Every formula below keeps gguf-py's order of float operations (a product
// rounded to float, then the sum): this file is built with
// -ffp-contract=off so no fused multiply-add changes a rounding.

namespace kvscope {

namespace {

uint16_t load_u16(const std::byte* p) {
  uint16_t v;
  std::memcpy(&v, p, 2);
  return v;
}
uint32_t load_u32(const std::byte* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
float load_f16(const std::byte* p) { return f16_to_f32(load_u16(p)); }
uint8_t byte_at(const std::byte* p, int i) { return static_cast<uint8_t>(p[i]); }

// The low nibble of byte i holds element i, the high nibble element i + 16.
uint8_t nibble32(const std::byte* qs, int e) { return e < 16 ? byte_at(qs, e) & 0x0F : byte_at(qs, e - 16) >> 4; }

void q4_0(const std::byte* b, float* y) {
  const float d = load_f16(b);
  for (int e = 0; e < 32; ++e) y[e] = d * static_cast<float>(static_cast<int>(nibble32(b + 2, e)) - 8);
}

void q4_1(const std::byte* b, float* y) {
  const float d = load_f16(b), m = load_f16(b + 2);
  for (int e = 0; e < 32; ++e) y[e] = d * static_cast<float>(nibble32(b + 4, e)) + m;
}

void q5_0(const std::byte* b, float* y) {
  const float d = load_f16(b);
  const uint32_t qh = load_u32(b + 2);
  for (int e = 0; e < 32; ++e) {
    const int q = nibble32(b + 6, e) | (((qh >> e) & 1u) << 4);
    y[e] = d * static_cast<float>(q - 16);
  }
}

void q5_1(const std::byte* b, float* y) {
  const float d = load_f16(b), m = load_f16(b + 2);
  const uint32_t qh = load_u32(b + 4);
  for (int e = 0; e < 32; ++e) {
    const int q = nibble32(b + 8, e) | (((qh >> e) & 1u) << 4);
    y[e] = d * static_cast<float>(q) + m;
  }
}

void q8_0(const std::byte* b, float* y) {
  const float d = load_f16(b);
  for (int e = 0; e < 32; ++e) y[e] = static_cast<float>(static_cast<int8_t>(byte_at(b + 2, e))) * d;
}

// The eight 6-bit scales and mins of Q4_K / Q5_K, packed in 12 bytes: bytes
// 0-3 hold scales 0-3 (low 6 bits) and the top bits of scales 4-7, bytes 4-7
// the same for the mins, bytes 8-11 the low nibbles of scales/mins 4-7.
void k_scales_mins(const std::byte* s, uint8_t sc[8], uint8_t mn[8]) {
  for (int j = 0; j < 4; ++j) {
    const uint8_t d = byte_at(s, j), m = byte_at(s, 4 + j), md = byte_at(s, 8 + j);
    sc[j] = d & 0x3F;
    mn[j] = m & 0x3F;
    sc[4 + j] = (md & 0x0F) | ((d >> 2) & 0x30);
    mn[4 + j] = (md >> 4) | ((m >> 2) & 0x30);
  }
}

// Q4_K / Q5_K low nibbles: 32-byte groups, each giving 64 elements (low
// nibbles first, then high).
uint8_t k_nibble(const std::byte* qs, int e) {
  const int group = e / 64, r = e % 64;
  const uint8_t v = byte_at(qs, group * 32 + r % 32);
  return r < 32 ? v & 0x0F : v >> 4;
}

void q4_k(const std::byte* b, float* y) {
  const float d = load_f16(b), dmin = load_f16(b + 2);
  uint8_t sc[8], mn[8];
  k_scales_mins(b + 4, sc, mn);
  const std::byte* qs = b + 16;
  for (int sub = 0; sub < 8; ++sub) {
    const float ds = d * static_cast<float>(sc[sub]);
    const float dm = dmin * static_cast<float>(mn[sub]);
    for (int i = 0; i < 32; ++i) {
      const int e = sub * 32 + i;
      y[e] = ds * static_cast<float>(k_nibble(qs, e)) - dm;
    }
  }
}

void q5_k(const std::byte* b, float* y) {
  const float d = load_f16(b), dmin = load_f16(b + 2);
  uint8_t sc[8], mn[8];
  k_scales_mins(b + 4, sc, mn);
  const std::byte* qh = b + 16;
  const std::byte* qs = b + 48;
  for (int sub = 0; sub < 8; ++sub) {
    const float ds = d * static_cast<float>(sc[sub]);
    const float dm = dmin * static_cast<float>(mn[sub]);
    for (int i = 0; i < 32; ++i) {
      const int e = sub * 32 + i;
      const int q = k_nibble(qs, e) | (((byte_at(qh, i) >> sub) & 1) << 4);  // bit `sub` of byte i
      y[e] = ds * static_cast<float>(q) - dm;
    }
  }
}

void q6_k(const std::byte* b, float* y) {
  const std::byte* ql = b;          // 128 bytes
  const std::byte* qh = b + 128;    // 64 bytes
  const std::byte* scales = b + 192;  // 16 int8
  const float d = load_f16(b + 208);
  for (int e = 0; e < 256; ++e) {
    const int half = e / 128, r = e % 128;
    const uint8_t lo_byte = byte_at(ql, half * 64 + r % 64);
    const int lo = r < 64 ? lo_byte & 0x0F : lo_byte >> 4;
    const int hi = (byte_at(qh, half * 32 + r % 32) >> (2 * (r / 32))) & 0x03;
    const float dl = d * static_cast<float>(static_cast<int8_t>(byte_at(scales, e / 16)));
    y[e] = dl * static_cast<float>((lo | (hi << 4)) - 32);
  }
}

}  // namespace

void dequantize_ggml(GgmlType type, const std::byte* src, int64_t n, float* dst) {
  switch (type) {
    case GgmlType::F32: std::memcpy(dst, src, static_cast<std::size_t>(n) * 4); return;
    case GgmlType::F16:
      for (int64_t i = 0; i < n; ++i) dst[i] = load_f16(src + 2 * i);
      return;
    case GgmlType::BF16:
      for (int64_t i = 0; i < n; ++i) dst[i] = bf16_to_f32(load_u16(src + 2 * i));
      return;
    default: break;
  }
  void (*block)(const std::byte*, float*) = nullptr;
  switch (type) {
    case GgmlType::Q4_0: block = q4_0; break;
    case GgmlType::Q4_1: block = q4_1; break;
    case GgmlType::Q5_0: block = q5_0; break;
    case GgmlType::Q5_1: block = q5_1; break;
    case GgmlType::Q8_0: block = q8_0; break;
    case GgmlType::Q4_K: block = q4_k; break;
    case GgmlType::Q5_K: block = q5_k; break;
    case GgmlType::Q6_K: block = q6_k; break;
    default: return;
  }
  const int be = ggml_block_elements(type), bb = ggml_block_bytes(type);
  for (int64_t i = 0; i < n / be; ++i) block(src + i * bb, dst + i * be);
}

}  // namespace kvscope
