#include "memory_bandwidth.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/simd_path.h"
#include "backend/parallel.h"
#include "common/error.h"
#include "io/host_memory.h"

namespace kvscope::cli {
namespace {

typedef float v8 __attribute__((vector_size(32)));

// Sums floats [b, e) with 32 independent lanes, touching every cache line
// once, as decode's matrix-vector products stream the weights. Compiled per
// instruction set (simd_path.h) so the loads, not the adds, are the limit.
[[gnu::always_inline]] inline float stream_sum_body(const float* p, std::size_t n) {
  v8 acc[4] = {};
  std::size_t i = 0;
  for (; i + 32 <= n; i += 32)
    for (int k = 0; k < 4; ++k) {
      v8 v;
      std::memcpy(&v, p + i + 8 * k, sizeof v);
      acc[k] += v;
    }
  float s = 0;
  for (int k = 0; k < 4; ++k)
    for (int t = 0; t < 8; ++t) s += acc[k][t];
  for (; i < n; ++i) s += p[i];
  return s;
}

KVSCOPE_SIMD_VARIANTS(float, stream_sum, (const float* p, std::size_t n), (p, n))

}  // namespace

void check_host_memory(const std::string& what, const ModelWeights& weights, const std::string& format) {
  const WeightFormat f = parse_weight_format(format);
  // f16: the fp32 copy of a matrix lives while it is converted.
  const double need = double(CpuModel::host_bytes(weights, f)) * (f == WeightFormat::F16 ? 1.5 : 1.0);
  const double avail = available_memory_bytes();
  if (need > 0.9 * avail)
    throw Error("bench", "--device cpu",
                what + " needs " + format_bytes(need) + " for its weights under --weights " + format +
                    "; this machine has " + format_bytes(avail) + " available" +
                    (f == WeightFormat::Stored ? "" : " (--weights stored keeps a GGUF file's blocks)"));
}

double host_read_bandwidth_gbs(int threads) {
  threads = std::max(1, threads);
  const std::size_t n = std::size_t(512) << 20 >> 2;  // 512 MiB of floats, far past any cache
  std::vector<float> buf(n, 1.0f);
  std::vector<float> sums(threads);
  auto sum = simd_pick(simd_path(), stream_sum_avx512, stream_sum_avx2, stream_sum_baseline);
  double best = 0;
  // The decode pool's threads (already running after the first pass), so
  // the timing holds the reads, not thread start-up.
  for (int pass = 0; pass < 6; ++pass) {
    const auto t0 = std::chrono::steady_clock::now();
    parallel_for(threads, [&](int t) {
      const std::size_t b = n * t / threads, e = n * (t + 1) / threads;
      sums[t] = sum(buf.data() + b, e - b);
    });
    const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (pass > 0) best = std::max(best, n * 4.0 / sec / 1e9);
  }
  volatile float sink = sums[0];
  (void)sink;
  return best;
}

}  // namespace kvscope::cli
