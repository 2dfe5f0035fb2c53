// Which vector instructions kvscope's own loops run with: the Keyformer
// score row, the batched Philox draws and the recorder's scatter are
// compiled three times (baseline x86-64, AVX2, and x86-64-v4 with AVX-512)
// and one copy is picked at run time. Every copy gives the same bits (the
// loops sum in fixed lanes and leave nothing to the compiler's FMA
// contraction: where a product is fused, every copy fuses it explicitly;
// the tests compare them on every path the CPU has), so the path only
// changes speed.
// KVSCOPE_SIMD=baseline|avx2|avx512 lowers the choice, for tests and for
// comparing speed; it never raises it above what the CPU has.
#pragma once

#include <vector>

namespace kvscope {

enum class SimdPath { baseline = 0, avx2 = 1, avx512 = 2 };

// The widest path this CPU (and its operating system) supports.
SimdPath cpu_simd_path();
// The path in use: the CPU's, or KVSCOPE_SIMD's when that is narrower.
// An unknown or unsupported KVSCOPE_SIMD value is reported once on stderr.
SimdPath simd_path();
// Whether the CPU converts halves in hardware (F16C) and fuses a multiply
// and an add (FMA): every AVX2 CPU known has both. The matrix-vector
// products check it before taking their AVX2 copy.
bool cpu_has_f16c_and_fma();
// The copy of a matrix-vector product to run for path p: p itself, or the
// baseline copy for an AVX2 path on a CPU without F16C and FMA.
SimdPath matvec_simd_path(SimdPath p);
// Every path this CPU can run, narrowest first.
std::vector<SimdPath> supported_simd_paths();
const char* simd_path_name(SimdPath p);

// Picks the copy of a function compiled for path p.
template <class F>
F simd_pick(SimdPath p, F avx512, F avx2, F baseline) {
  return p == SimdPath::avx512 ? avx512 : p == SimdPath::avx2 ? avx2 : baseline;
}

}  // namespace kvscope

// KVSCOPE_SIMD_VARIANTS(ret, name, params, args) defines name_avx512,
// name_avx2 and name_baseline, each `ret name_X params { return name_body
// args; }` compiled for its instruction set; name_body must be an
// always-inline function, so each copy gets its own vectorised code. On
// compilers or CPUs without function targets, the three are the same code.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(KVSCOPE_NO_SIMD_VARIANTS)
#define KVSCOPE_TARGET_AVX512 __attribute__((target("arch=x86-64-v4")))
#define KVSCOPE_TARGET_AVX2 __attribute__((target("avx2")))
// The AVX2 copies of the matrix-vector products, which also read halves
// with F16C and fuse their products with FMA: chosen only where
// cpu_has_f16c_and_fma() (every AVX2 CPU made so far has both).
#define KVSCOPE_TARGET_F16C __attribute__((target("avx2,f16c,fma")))
#else
#define KVSCOPE_TARGET_AVX512
#define KVSCOPE_TARGET_AVX2
#define KVSCOPE_TARGET_F16C
#endif

#define KVSCOPE_SIMD_VARIANTS(ret, name, params, args)                            \
  [[maybe_unused]] KVSCOPE_TARGET_AVX512 ret name##_avx512 params { return name##_body args; } \
  [[maybe_unused]] KVSCOPE_TARGET_AVX2 ret name##_avx2 params { return name##_body args; }     \
  [[maybe_unused]] ret name##_baseline params { return name##_body args; }
