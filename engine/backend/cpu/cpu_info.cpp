#include "backend/cpu/cpu_info.h"

#include <cblas.h>

#include <fstream>

#include "backend/cpu/simd_path.h"
#include "backend/parallel.h"

namespace kvscope {

namespace {

std::string model_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) != 0) continue;
    const auto colon = line.find(':');
    if (colon == std::string::npos) break;
    const auto start = line.find_first_not_of(' ', colon + 1);
    return start == std::string::npos ? "unknown" : line.substr(start);
  }
  return "unknown";
}

}  // namespace

std::vector<std::string> openblas_core_types_for_this_cpu() {
  std::vector<std::string> types;
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();
  // libgcc's checks include the operating system's support for AVX state.
#define KVSCOPE_HAS(f) (__builtin_cpu_supports(f) != 0)
  if (KVSCOPE_HAS("sse3")) types.push_back("Prescott");
  if (KVSCOPE_HAS("sse4.2") && KVSCOPE_HAS("popcnt")) types.push_back("Nehalem");
  if (KVSCOPE_HAS("avx")) types.push_back("Sandybridge");
  if (KVSCOPE_HAS("avx2") && KVSCOPE_HAS("fma")) {
    types.push_back("Haswell");
    types.push_back("Zen");
  }
  if (KVSCOPE_HAS("avx512f") && KVSCOPE_HAS("avx512bw") && KVSCOPE_HAS("avx512dq") && KVSCOPE_HAS("avx512vl") &&
      KVSCOPE_HAS("avx512cd"))
    types.push_back("SkylakeX");
#undef KVSCOPE_HAS
#endif
  return types;
}

CpuInfo cpu_info() {
  CpuInfo info;
  info.model_name = model_name();
  info.simd_path = simd_path_name(simd_path());
  info.cpu_simd = simd_path_name(cpu_simd_path());
  info.openblas_core = openblas_get_corename();
  info.openblas_config = openblas_get_config();
  // The config line ends with a space on some builds.
  while (!info.openblas_config.empty() && info.openblas_config.back() == ' ') info.openblas_config.pop_back();
  info.openblas_core_types = openblas_core_types_for_this_cpu();
  info.threads = pool_threads();
  return info;
}

}  // namespace kvscope
