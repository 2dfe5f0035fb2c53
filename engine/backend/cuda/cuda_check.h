// Checked CUDA and cuBLAS calls: a failure throws kvscope::Error naming the
// call and the driver's error string ("cuda: cudaMemcpyAsync: an illegal
// memory access was encountered"). Internal to the CUDA backend.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

namespace kvscope::cuda {

[[noreturn]] void fail_cuda(cudaError_t e, const char* call);
[[noreturn]] void fail_cublas(cublasStatus_t s, const char* call);

inline void check(cudaError_t e, const char* call) {
  if (e != cudaSuccess) fail_cuda(e, call);
}
inline void check(cublasStatus_t s, const char* call) {
  if (s != CUBLAS_STATUS_SUCCESS) fail_cublas(s, call);
}
// After a kernel launch: configuration errors show up here at once; faults
// inside the kernel show up at the next checked call that waits for it.
void check_launch(const char* kernel);

}  // namespace kvscope::cuda

#define KVSCOPE_CUDA(call) ::kvscope::cuda::check((call), #call)
