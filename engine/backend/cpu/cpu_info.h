// What the CPU backend runs on, for bug reports, benchmarks and the tests
// that compare machines: the processor, kvscope's own vector path
// (simd_path.h), the OpenBLAS kernels in use and the kernel sets this CPU
// could run instead (OPENBLAS_CORETYPE), and the pool's threads.
#pragma once

#include <string>
#include <vector>

namespace kvscope {

struct CpuInfo {
  std::string model_name;   // /proc/cpuinfo's "model name", or "unknown"
  std::string simd_path;    // "baseline", "avx2" or "avx512": kvscope's own loops
  std::string cpu_simd;     // the widest path the CPU has (simd_path may be lowered by KVSCOPE_SIMD)
  std::string openblas_core;    // the kernel set OpenBLAS picked (or was told to by OPENBLAS_CORETYPE)
  std::string openblas_config;  // OpenBLAS's build line: version, DYNAMIC_ARCH, ...
  std::vector<std::string> openblas_core_types;  // OPENBLAS_CORETYPE values this CPU can run
  int threads = 1;          // the CPU backend's pool (KVSCOPE_THREADS)
};

CpuInfo cpu_info();

// The OPENBLAS_CORETYPE values of a DYNAMIC_ARCH OpenBLAS whose kernels this
// CPU has the instructions for, oldest first: Prescott (SSE3), Nehalem
// (SSE4.2), Sandybridge (AVX), Haswell and Zen (AVX2 + FMA), SkylakeX
// (AVX-512 F/BW/DQ/VL/CD). Forcing a type the CPU lacks crashes OpenBLAS
// with an illegal instruction, so tests ask this list first.
std::vector<std::string> openblas_core_types_for_this_cpu();

}  // namespace kvscope
