// ggml's tensor types: how a GGUF file stores a matrix (float, or blocks of
// quantized values with their scales). Shared by the GGUF reader, the
// weights that keep a file's blocks, and the CPU products that read them.
#pragma once

#include <cstdint>
#include <string>

namespace kvscope {

// ggml tensor types kvscope can read (numbering from ggml).
enum class GgmlType : uint32_t {
  F32 = 0,
  F16 = 1,
  Q4_0 = 2,
  Q4_1 = 3,
  Q5_0 = 6,
  Q5_1 = 7,
  Q8_0 = 8,
  Q4_K = 12,
  Q5_K = 13,
  Q6_K = 14,
  BF16 = 30,
};
// Name of any ggml type number ("Q2_K", "IQ4_NL", ...) for messages; "type N"
// for numbers ggml does not define.
std::string ggml_type_name(uint32_t type);
bool ggml_type_supported(uint32_t type);
// Elements per block and bytes per block of a supported type.
int ggml_block_elements(GgmlType t);
int ggml_block_bytes(GgmlType t);

}  // namespace kvscope
