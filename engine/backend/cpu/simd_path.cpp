#include "backend/cpu/simd_path.h"

#include <cstdio>
#include <cstdlib>
#include <string>

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#endif

namespace kvscope {

SimdPath cpu_simd_path() {
#if defined(__x86_64__) && defined(__GNUC__)
  static const SimdPath path = [] {
    __builtin_cpu_init();
    // libgcc checks that the operating system saves the wide registers too.
#if defined(__clang__)
    // Clang has no "x86-64-v4" name here: the level's AVX-512 subsets.
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl"))
      return SimdPath::avx512;
#else
    if (__builtin_cpu_supports("x86-64-v4")) return SimdPath::avx512;
#endif
    if (__builtin_cpu_supports("avx2")) return SimdPath::avx2;
    return SimdPath::baseline;
  }();
  return path;
#else
  return SimdPath::baseline;
#endif
}

SimdPath matvec_simd_path(SimdPath p) {
  return p == SimdPath::avx2 && !cpu_has_f16c_and_fma() ? SimdPath::baseline : p;
}

bool cpu_has_f16c_and_fma() {
#if defined(__x86_64__) && defined(__GNUC__)
  // CPUID leaf 1, ECX bits 29 (F16C) and 12 (FMA), read the same way with
  // both compilers (clang's __builtin_cpu_supports has no name for F16C).
  static const bool has = [] {
    unsigned a = 0, b = 0, c = 0, d = 0;
    const unsigned both = (1u << 29) | (1u << 12);
    return __get_cpuid(1, &a, &b, &c, &d) && (c & both) == both;
  }();
  return has;
#else
  return false;
#endif
}

const char* simd_path_name(SimdPath p) {
  switch (p) {
    case SimdPath::avx512: return "avx512";
    case SimdPath::avx2: return "avx2";
    case SimdPath::baseline: break;
  }
  return "baseline";
}

std::vector<SimdPath> supported_simd_paths() {
  std::vector<SimdPath> paths;
  for (SimdPath p : {SimdPath::baseline, SimdPath::avx2, SimdPath::avx512})
    if (static_cast<int>(p) <= static_cast<int>(cpu_simd_path())) paths.push_back(p);
  return paths;
}

SimdPath simd_path() {
  static const SimdPath path = [] {
    const SimdPath cpu = cpu_simd_path();
    const char* env = std::getenv("KVSCOPE_SIMD");
    if (!env || !*env) return cpu;
    for (SimdPath p : {SimdPath::baseline, SimdPath::avx2, SimdPath::avx512}) {
      if (std::string(env) != simd_path_name(p)) continue;
      if (static_cast<int>(p) <= static_cast<int>(cpu)) return p;
      std::fprintf(stderr, "kvscope: KVSCOPE_SIMD=%s: this CPU has only %s; using %s\n", env, simd_path_name(cpu),
                   simd_path_name(cpu));
      return cpu;
    }
    std::fprintf(stderr, "kvscope: KVSCOPE_SIMD=%s: expected baseline, avx2 or avx512; using %s\n", env,
                 simd_path_name(cpu));
    return cpu;
  }();
  return path;
}

}  // namespace kvscope
