#include "backend/cpu/cpu_info.h"

#include <cblas.h>

#include <fstream>
#include <utility>

#include "backend/cpu/simd_path.h"
#include "backend/parallel.h"

namespace kvscope {

namespace {

// "key<tabs>: value" -> value, for the line that starts with key.
bool field_of(const std::string& line, const char* key, std::string& value) {
  const std::string k = key;
  if (line.compare(0, k.size(), k) != 0) return false;
  const auto colon = line.find(':');
  // The key must be the whole name before the colon ("model" is not "model name").
  if (colon == std::string::npos || line.find_first_not_of(" \t", k.size()) != colon) return false;
  const auto start = line.find_first_not_of(' ', colon + 1);
  value = start == std::string::npos ? "" : line.substr(start);
  return true;
}

}  // namespace

void read_cpuinfo(std::istream& text, CpuInfo& info) {
  std::string line, name, vendor, family, model, stepping;
  while (std::getline(text, line)) {
    if (line.empty()) {
      if (!name.empty() || !vendor.empty()) break;  // the first processor's block is enough
      continue;
    }
    const std::pair<const char*, std::string*> fields[] = {{"model name", &name},
                                                           {"vendor_id", &vendor},
                                                           {"cpu family", &family},
                                                           {"model", &model},
                                                           {"stepping", &stepping}};
    for (const auto& [key, value] : fields)
      if (field_of(line, key, *value)) break;
  }
  info.model_name = name.empty() ? "unknown" : name;
  info.identity.clear();
  if (vendor.empty() || family.empty() || model.empty()) return;
  info.identity = vendor + " family " + family + " model " + model;
  if (!stepping.empty()) info.identity += " stepping " + stepping;
}

std::string cpu_description(const CpuInfo& info) {
  return info.identity.empty() ? info.model_name : info.model_name + " (" + info.identity + ")";
}

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
  std::ifstream text("/proc/cpuinfo");
  read_cpuinfo(text, info);
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
