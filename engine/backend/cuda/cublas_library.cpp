#include "backend/cuda/cublas_library.h"

#include <dlfcn.h>

#include <fstream>
#include <string>

#include "common/error.h"

namespace kvscope::cuda {
namespace {

// Opened by soname first, so that LD_LIBRARY_PATH and the machine's own
// cuBLAS win (bench/gpu/on_device.sh relies on it); the build's copy after.
void* open_cublas(std::string& why) {
  const char* const candidates[] = {KVSCOPE_CUBLAS_SONAME, KVSCOPE_CUBLAS_BUILD_PATH};
  for (const char* name : candidates) {
    // RTLD_LOCAL: its symbols stay out of the global namespace; nothing
    // else in the process is linked against them.
    if (void* h = dlopen(name, RTLD_NOW | RTLD_LOCAL)) return h;
    const char* e = dlerror();
    if (!why.empty()) why += "; ";
    why += e ? e : name;
  }
  return nullptr;
}

template <class F>
void bind_symbol(void* handle, F& f, const char* symbol, std::string& missing) {
  f = reinterpret_cast<F>(dlsym(handle, symbol));
  if (!f) missing += std::string(missing.empty() ? "" : ", ") + symbol;
}

struct LoadedCublas {
  CublasLibrary api;
  std::string error;  // empty when every function was found
};

LoadedCublas load_cublas() {
  LoadedCublas l;
  std::string why;
  void* h = open_cublas(why);
  if (!h) {
    l.error = "cannot open " KVSCOPE_CUBLAS_SONAME " (needed for the CUDA backend's prompt products): " + why;
    return l;
  }
  std::string missing;
  bind_symbol(h, l.api.cublasCreate, "cublasCreate_v2", missing);
  bind_symbol(h, l.api.cublasDestroy, "cublasDestroy_v2", missing);
  bind_symbol(h, l.api.cublasSetStream, "cublasSetStream_v2", missing);
  bind_symbol(h, l.api.cublasGetStream, "cublasGetStream_v2", missing);
  bind_symbol(h, l.api.cublasSetWorkspace, "cublasSetWorkspace_v2", missing);
  bind_symbol(h, l.api.cublasGemmEx, "cublasGemmEx", missing);
  bind_symbol(h, l.api.cublasGetStatusString, "cublasGetStatusString", missing);
  if (!missing.empty()) l.error = std::string(KVSCOPE_CUBLAS_SONAME " lacks ") + missing;
  return l;  // the handle stays open for the process's life
}

}  // namespace

const CublasLibrary& cublas() {
  static const LoadedCublas loaded = load_cublas();  // thread-safe initialisation
  if (!loaded.error.empty()) throw Error("cuda", "cuBLAS", loaded.error);
  return loaded.api;
}

bool cublas_is_mapped() {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line))
    if (line.find("libcublas") != std::string::npos) return true;
  return false;
}

}  // namespace kvscope::cuda
