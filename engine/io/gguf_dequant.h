// GGUF tensor data -> float32, bit for bit as gguf-py's reference
// dequantization (gguf/quants.py) computes it, so kvscope's weights equal the
// ones transformers loads from the same file.
#pragma once

#include <cstddef>
#include <cstdint>

#include "io/gguf.h"

namespace kvscope {

// Dequantizes `n` elements (a whole number of blocks of `type`) from `src`
// into `dst`. Float types are converted exactly.
void dequantize_ggml(GgmlType type, const std::byte* src, int64_t n, float* dst);

}  // namespace kvscope
