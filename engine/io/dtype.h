// Element types of stored tensors and the conversions between them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

namespace kvscope {

enum class DType { F32, F16, BF16 };

std::optional<DType> parse_safetensors_dtype(std::string_view s);  // "F32", "F16", "BF16"
const char* dtype_name(DType t);
std::size_t dtype_size(DType t);

// IEEE half and bfloat16 <-> float. bf16 rounds to nearest even, as torch does.
float f16_to_f32(uint16_t h);
uint16_t f32_to_f16(float f);
inline float bf16_to_f32(uint16_t b) {
  uint32_t u = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
uint16_t f32_to_bf16(float f);

// Converts n elements of type `from` at src to float.
void convert_to_f32(DType from, const void* src, float* dst, std::size_t n);

// The index of the first of n elements of type `from` at src that is finite
// but becomes infinite in IEEE half precision (|x| >= 65520 rounds past
// 65504), or -1 when every element fits: what a backend storing a float32
// or bfloat16 checkpoint in half precision must refuse.
int64_t first_beyond_half(DType from, const void* src, std::size_t n);

}  // namespace kvscope
