// The host side of the CUDA runtime the backend uses: checked calls, device
// memory blocks, device queries, and the host's model of 16-bit stores.
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

#include "backend/cuda/cublas_library.h"
#include "backend/cuda/cuda_check.h"
#include "backend/cuda/cuda_ops.h"
#include "common/error.h"

namespace kvscope::cuda {
namespace {

// "cudaMemcpyAsync(dst, src, ...)" -> "cudaMemcpyAsync". An accessor
// called before the function is skipped: "cublas().cublasGemmEx(h, ...)"
// -> "cublasGemmEx".
std::string call_name(const char* call) {
  std::string_view s(call);
  auto p = s.find('(');
  while (p != std::string_view::npos && s.substr(p, 3) == "().") {
    s.remove_prefix(p + 3);
    p = s.find('(');
  }
  return std::string(p == std::string_view::npos ? s : s.substr(0, p));
}

}  // namespace

void fail_cuda(cudaError_t e, const char* call) {
  (void)cudaGetLastError();  // clears a non-sticky error so later calls do not report it again
  throw Error("cuda", call_name(call), cudaGetErrorString(e));
}

void fail_cublas(cublasStatus_t s, const char* call) {
  throw Error("cuda", call_name(call), cublas().cublasGetStatusString(s));
}

void check_launch(const char* kernel) {
  const cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) throw Error("cuda", std::string("launch of ") + kernel, cudaGetErrorString(e));
}

std::string format_gb(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", bytes / 1e9);
  return buf;
}

WType weight_type_for(DType checkpoint) { return checkpoint == DType::BF16 ? WType::BF16 : WType::F16; }

const char* wtype_name(WType t) { return t == WType::BF16 ? "bf16" : "fp16"; }

uint16_t to_bits(WType t, float v) { return t == WType::BF16 ? f32_to_bf16(v) : f32_to_f16(v); }

float from_bits(WType t, uint16_t bits) { return t == WType::BF16 ? bf16_to_f32(bits) : f16_to_f32(bits); }

DeviceBuffer::DeviceBuffer(std::size_t bytes, const char* what) {
  if (bytes == 0) return;
  const cudaError_t e = cudaMalloc(&ptr_, bytes);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    ptr_ = nullptr;
    std::size_t free_b = 0, total_b = 0;
    (void)cudaMemGetInfo(&free_b, &total_b);
    throw Error("cuda", "memory",
                std::string(what) + " needs " + format_gb(double(bytes)) + " GB, " + format_gb(double(free_b)) +
                    " GB free (" + cudaGetErrorString(e) + ")");
  }
  bytes_ = bytes;
}

DeviceBuffer::~DeviceBuffer() { reset(); }

DeviceBuffer::DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(o.ptr_), bytes_(o.bytes_) {
  o.ptr_ = nullptr;
  o.bytes_ = 0;
}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  if (this != &o) {
    reset();
    ptr_ = o.ptr_;
    bytes_ = o.bytes_;
    o.ptr_ = nullptr;
    o.bytes_ = 0;
  }
  return *this;
}

void DeviceBuffer::reset() {
  if (ptr_) (void)cudaFree(ptr_);  // a destructor must not throw; cudaFree only fails on a broken context
  ptr_ = nullptr;
  bytes_ = 0;
}

void DeviceBuffer::upload(const void* src, std::size_t bytes, std::size_t offset) {
  if (offset + bytes > bytes_) throw Error("cuda", "DeviceBuffer::upload", "copy past the end of the buffer");
  KVSCOPE_CUDA(cudaMemcpy(static_cast<char*>(ptr_) + offset, src, bytes, cudaMemcpyHostToDevice));
}

void DeviceBuffer::download(void* dst, std::size_t bytes, std::size_t offset) const {
  if (offset + bytes > bytes_) throw Error("cuda", "DeviceBuffer::download", "copy past the end of the buffer");
  KVSCOPE_CUDA(cudaMemcpy(dst, static_cast<const char*>(ptr_) + offset, bytes, cudaMemcpyDeviceToHost));
}

void DeviceBuffer::zero() {
  if (ptr_) KVSCOPE_CUDA(cudaMemset(ptr_, 0, bytes_));
}

Blas::Blas(Stream stream) {
  KVSCOPE_CUDA(cublas().cublasCreate(&handle_));
  try {
    KVSCOPE_CUDA(cublas().cublasSetStream(handle_, stream));
    workspace_ = DeviceBuffer(std::size_t(32) << 20, "cuBLAS workspace");
    KVSCOPE_CUDA(cublas().cublasSetWorkspace(handle_, workspace_.get(), workspace_.bytes()));
  } catch (...) {
    (void)cublas().cublasDestroy(handle_);
    throw;
  }
}

Blas::~Blas() {
  if (handle_) (void)cublas().cublasDestroy(handle_);
}

bool device_present(std::string* why) {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    if (why) {
      *why = std::string("cudaGetDeviceCount: ") + cudaGetErrorString(e);
      // What the runtime reports when no NVIDIA driver is installed at all.
      if (e == cudaErrorInsufficientDriver) *why += " (no NVIDIA driver, or one older than this CUDA build needs)";
    }
    return false;
  }
  if (count == 0) {
    if (why) *why = "cudaGetDeviceCount found no CUDA device";
    return false;
  }
  int dev = 0;
  cudaDeviceProp prop;
  if (cudaGetDevice(&dev) != cudaSuccess || cudaGetDeviceProperties(&prop, dev) != cudaSuccess) {
    (void)cudaGetLastError();
    if (why) *why = "cudaGetDeviceProperties failed";
    return false;
  }
  // The build carries sm_80 and sm_90 code (and compute_90 PTX).
  if (prop.major < 8) {
    if (why)
      *why = std::string(prop.name) + " has compute capability " + std::to_string(prop.major) + "." +
             std::to_string(prop.minor) + "; the CUDA backend needs 8.0 or newer";
    return false;
  }
  return true;
}

std::string device_name() {
  int dev = 0;
  KVSCOPE_CUDA(cudaGetDevice(&dev));
  cudaDeviceProp prop;
  KVSCOPE_CUDA(cudaGetDeviceProperties(&prop, dev));
  return prop.name;
}

void memory_info(std::size_t* free_bytes, std::size_t* total_bytes) {
  std::size_t f = 0, t = 0;
  KVSCOPE_CUDA(cudaMemGetInfo(&f, &t));
  if (free_bytes) *free_bytes = f;
  if (total_bytes) *total_bytes = t;
}

void synchronize(Stream stream) { KVSCOPE_CUDA(cudaStreamSynchronize(stream)); }

}  // namespace kvscope::cuda
