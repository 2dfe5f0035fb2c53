// cuda_measure_bandwidth_gbs(): the roofline `kvscope-cli bench` judges
// decode speed against. A device-to-device copy reads and writes every
// byte, so one copy of N bytes moves 2N.
#include <algorithm>

#include "backend/cuda/cuda_backend.h"
#include "backend/cuda/cuda_check.h"
#include "backend/cuda/cuda_ops.h"

namespace kvscope {

double cuda_measure_bandwidth_gbs() {
  std::size_t free_b = 0, total_b = 0;
  cuda::memory_info(&free_b, &total_b);
  // ~1 GiB copied, less on a small or busy device (two buffers must fit).
  std::size_t bytes = std::size_t(1) << 30;
  while (bytes > (std::size_t(16) << 20) && 2 * bytes > free_b / 2) bytes /= 2;
  cuda::DeviceBuffer src(bytes, "bandwidth test"), dst(bytes, "bandwidth test");
  KVSCOPE_CUDA(cudaMemset(src.get(), 1, bytes));
  cudaStream_t stream = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  KVSCOPE_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  struct Cleanup {
    cudaStream_t& s;
    cudaEvent_t& a;
    cudaEvent_t& b;
    ~Cleanup() {
      if (a) (void)cudaEventDestroy(a);
      if (b) (void)cudaEventDestroy(b);
      if (s) (void)cudaStreamDestroy(s);
    }
  } cleanup{stream, start, stop};
  KVSCOPE_CUDA(cudaEventCreate(&start));
  KVSCOPE_CUDA(cudaEventCreate(&stop));
  KVSCOPE_CUDA(cudaMemcpyAsync(dst.get(), src.get(), bytes, cudaMemcpyDeviceToDevice, stream));  // warm-up
  float best_ms = 0;
  for (int run = 0; run < 5; ++run) {
    KVSCOPE_CUDA(cudaEventRecord(start, stream));
    KVSCOPE_CUDA(cudaMemcpyAsync(dst.get(), src.get(), bytes, cudaMemcpyDeviceToDevice, stream));
    KVSCOPE_CUDA(cudaEventRecord(stop, stream));
    KVSCOPE_CUDA(cudaEventSynchronize(stop));
    float ms = 0;
    KVSCOPE_CUDA(cudaEventElapsedTime(&ms, start, stop));
    if (run == 0 || ms < best_ms) best_ms = ms;
  }
  return best_ms > 0 ? 2.0 * double(bytes) / (best_ms * 1e-3) / 1e9 : 0.0;
}

}  // namespace kvscope
