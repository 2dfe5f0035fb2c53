// cuBLAS, opened when the first cuBLAS handle is made instead of when the
// program starts. Linked the usual way, libcublas brings libcublasLt, whose
// relocated code and zeroed data put about 146 MB in the resident memory of
// every kvscope process, a CPU-only `tokenize` included (bench/NOTES.md).
// Internal to the CUDA backend; the cuBLAS calls it makes go through here.
#pragma once

#include <cublas_v2.h>

namespace kvscope::cuda {

// The cuBLAS functions the backend calls, under their own names, so a
// call reads cublas().cublasGemmEx(...) and a failed one is reported by that
// name. (cublas_v2.h's macros rename cublasCreate and its kind to the _v2
// symbols here as everywhere.)
struct CublasLibrary {
  decltype(&::cublasCreate) cublasCreate = nullptr;
  decltype(&::cublasDestroy) cublasDestroy = nullptr;
  decltype(&::cublasSetStream) cublasSetStream = nullptr;
  decltype(&::cublasGetStream) cublasGetStream = nullptr;
  decltype(&::cublasSetWorkspace) cublasSetWorkspace = nullptr;
  // (The C symbol; cublas_api.h adds a C++ overload with the older
  // cudaDataType compute type.)
  cublasStatus_t (*cublasGemmEx)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*,
                                 const void*, cudaDataType, int, const void*, cudaDataType, int, const void*, void*,
                                 cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t) = nullptr;
  decltype(&::cublasGetStatusString) cublasGetStatusString = nullptr;
};

// The library, opened once (thread-safe) on first use: the soname of the
// CUDA release this was built with (libcublas.so.13) by the dynamic
// loader's search (LD_LIBRARY_PATH, the executable's RUNPATH,
// ld.so.cache), else from the toolkit's library folder of the build.
// Throws kvscope::Error ("cuda: cuBLAS: cannot open libcublas.so.13: ...",
// or naming the missing function) when neither works; every later call
// throws the same.
const CublasLibrary& cublas();

// Whether cuBLAS is mapped into this process now (for tests: a CPU-only
// run must not map it).
bool cublas_is_mapped();

}  // namespace kvscope::cuda
