// cuBLAS is opened by the CUDA backend when it first needs it
// (backend/cuda/cublas_library.h), not linked: a CPU-only process must not
// carry libcublasLt's resident pages. These run without a GPU.
#ifdef KVSCOPE_HAVE_CUDA

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "backend/backend.h"
#include "backend/cuda/cublas_library.h"
#include "common/error.h"
#include "model/loader.h"
#include "test_util.h"

namespace kvscope {
namespace {

// A model loaded and run on the CPU, and the CUDA device asked for after,
// as the CLI and the window do; exits 0 when cuBLAS stayed unmapped.
// (Everything is destroyed before exit, so a leak checker has nothing to
// report and the exit code is this test's alone.)
[[noreturn]] void run_on_cpu_and_exit() {
  {
    const auto m = load_model_files(test::model_dir("llama_gqa"));
    BackendOptions bo;
    bo.max_tokens = 16;
    auto cpu = make_backend(Device::Cpu, m.config, m.weights, bo);
    const int tokens[] = {1, 2, 3, 4};
    ForwardOutput out;
    cpu->forward(tokens, ForwardOptions{}, out);
    (void)cuda_available(nullptr);
  }
  std::exit(cuda::cublas_is_mapped() ? 3 : 0);
}

// In a fresh process: the death test re-runs this binary for this test
// alone, so no other test has opened cuBLAS there.
TEST(CublasLibrary, ACpuRunDoesNotMapIt) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(run_on_cpu_and_exit(), testing::ExitedWithCode(0), "");
}

// Where the build's cuBLAS is installed (the build machine, a GPU machine),
// it opens, and every function the backend calls is found; the status
// strings need no device.
TEST(CublasLibrary, OpensWithEveryFunctionTheBackendCalls) {
  const cuda::CublasLibrary* api = nullptr;
  try {
    api = &cuda::cublas();
  } catch (const Error& e) {
    GTEST_SKIP() << "cuBLAS is not installed where this build looks: " << e.what();
  }
  EXPECT_TRUE(cuda::cublas_is_mapped());
  EXPECT_NE(api->cublasCreate, nullptr);
  EXPECT_NE(api->cublasDestroy, nullptr);
  EXPECT_NE(api->cublasSetStream, nullptr);
  EXPECT_NE(api->cublasGetStream, nullptr);
  EXPECT_NE(api->cublasSetWorkspace, nullptr);
  EXPECT_NE(api->cublasGemmEx, nullptr);
  ASSERT_NE(api->cublasGetStatusString, nullptr);
  // What an error message of the backend quotes (fail_cublas).
  const std::string ok = api->cublasGetStatusString(CUBLAS_STATUS_SUCCESS);
  const std::string bad = api->cublasGetStatusString(CUBLAS_STATUS_NOT_INITIALIZED);
  EXPECT_FALSE(ok.empty());
  EXPECT_FALSE(bad.empty());
  EXPECT_NE(ok, bad);
  EXPECT_EQ(&cuda::cublas(), api);  // opened once
}

}  // namespace
}  // namespace kvscope

#endif  // KVSCOPE_HAVE_CUDA
