// kvscope-cli cpu [--json] [--openblas-core-types]: what the CPU backend
// runs on (processor, kvscope's vector path, OpenBLAS's kernels and
// threads), for bug reports and benchmark notes; --openblas-core-types
// lists, one per line, the OPENBLAS_CORETYPE values this CPU can run (the
// test script runs the suite under each).
#include <cstdio>

#include <nlohmann/json.hpp>

#include "backend/cpu/cpu_info.h"
#include "backend/parallel.h"
#include "cli_common.h"
#include "io/json_file.h"

namespace kvscope::cli {
namespace {

struct CpuArgs {
  bool json = false;
  bool core_types = false;
};

void run_cpu(const CpuArgs& a) {
  const CpuInfo c = cpu_info();
  if (a.core_types) {
    for (const auto& t : c.openblas_core_types) std::printf("%s\n", t.c_str());
    return;
  }
  if (a.json) {
    const nlohmann::json j = {{"model_name", c.model_name},
                              {"identity", c.identity},
                              {"simd_path", c.simd_path},
                              {"cpu_simd_path", c.cpu_simd},
                              {"openblas_core", c.openblas_core},
                              {"openblas_config", c.openblas_config},
                              {"openblas_core_types", c.openblas_core_types},
                              {"threads", c.threads},
                              {"threads_source", pool_threads_source()}};
    std::printf("%s\n", json_text(j).c_str());
    return;
  }
  std::string types;
  for (const auto& t : c.openblas_core_types) types += (types.empty() ? "" : " ") + t;
  std::printf("cpu              %s\n", cpu_description(c).c_str());
  std::printf("kvscope vectors  %s (the CPU has %s; KVSCOPE_SIMD lowers it)\n", c.simd_path.c_str(), c.cpu_simd.c_str());
  std::printf("openblas         %s kernels (%s)\n", c.openblas_core.c_str(), c.openblas_config.c_str());
  std::printf("openblas types   %s (OPENBLAS_CORETYPE values this CPU can run)\n", types.c_str());
  std::printf("threads          %d (%s)\n", c.threads, pool_threads_source());
}

}  // namespace

void register_cpu(CLI::App& app) {
  auto a = std::make_shared<CpuArgs>();
  auto* cmd = app.add_subcommand("cpu", "What the CPU backend runs on: vector path, OpenBLAS kernels, threads");
  cmd->add_flag("--json", a->json, "Print JSON");
  cmd->add_flag("--openblas-core-types", a->core_types,
                "Only list the OPENBLAS_CORETYPE values this CPU can run, one per line");
  cmd->callback([a] { run_cpu(*a); });
}

}  // namespace kvscope::cli
