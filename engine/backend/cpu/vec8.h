// Eight floats as one GCC vector, for kvscope's own fixed-lane loops: a ymm
// register in the AVX2 and AVX-512 copies, two xmm registers in the
// baseline one (backend/cpu/simd_path.h). Loads and stores go through
// memcpy, so rows need not be 32-byte aligned. For files compiled without
// FMA contraction, where each lane's operations are plain IEEE ones.
#pragma once

#include <cstring>

namespace kvscope::cpu {

typedef float v8 __attribute__((vector_size(32)));

[[gnu::always_inline]] inline v8 load8(const float* p) {
  v8 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

[[gnu::always_inline]] inline void store8(float* p, v8 v) { std::memcpy(p, &v, sizeof v); }

}  // namespace kvscope::cpu
