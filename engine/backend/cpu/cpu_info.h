// What the CPU backend runs on, for bug reports, benchmarks and the tests
// that compare machines: the processor, kvscope's own vector path
// (simd_path.h), the OpenBLAS kernels in use and the kernel sets this CPU
// could run instead (OPENBLAS_CORETYPE), and the pool's threads.
#pragma once

#include <istream>
#include <string>
#include <vector>

namespace kvscope {

struct CpuInfo {
  std::string model_name;   // /proc/cpuinfo's "model name", or "unknown"
  // Its vendor, family, model and stepping ("AuthenticAMD family 25 model
  // 1 stepping 1"), or "" where /proc/cpuinfo lacks them: a cloud VM's
  // model name is often only "AMD EPYC", and these tell a Zen 3 (AVX2)
  // from a Zen 4 (AVX-512) when a benchmark's numbers are compared.
  std::string identity;
  std::string simd_path;    // "baseline", "avx2" or "avx512": kvscope's own loops
  std::string cpu_simd;     // the widest path the CPU has (simd_path may be lowered by KVSCOPE_SIMD)
  std::string openblas_core;    // the kernel set OpenBLAS picked (or was told to by OPENBLAS_CORETYPE)
  std::string openblas_config;  // OpenBLAS's build line: version, DYNAMIC_ARCH, ...
  std::vector<std::string> openblas_core_types;  // OPENBLAS_CORETYPE values this CPU can run
  int threads = 1;          // the CPU backend's pool (KVSCOPE_THREADS)
};

CpuInfo cpu_info();

// The model name and identity read from /proc/cpuinfo's text (the first
// processor's block); a field that is absent is left as described above.
void read_cpuinfo(std::istream& text, CpuInfo& info);

// "AMD EPYC (AuthenticAMD family 25 model 1 stepping 1)", or the model
// name alone where the identity is unknown: what outputs record as the CPU.
std::string cpu_description(const CpuInfo& info);

// The OPENBLAS_CORETYPE values of a DYNAMIC_ARCH OpenBLAS whose kernels this
// CPU has the instructions for, oldest first: Prescott (SSE3), Nehalem
// (SSE4.2), Sandybridge (AVX), Haswell and Zen (AVX2 + FMA), SkylakeX
// (AVX-512 F/BW/DQ/VL/CD). Forcing a type the CPU lacks crashes OpenBLAS
// with an illegal instruction, so tests ask this list first.
std::vector<std::string> openblas_core_types_for_this_cpu();

}  // namespace kvscope
