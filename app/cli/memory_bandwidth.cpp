#include "memory_bandwidth.h"

#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

namespace kvscope::cli {

double host_read_bandwidth_gbs(int threads) {
  threads = std::max(1, threads);
  const std::size_t n = std::size_t(256) << 20 >> 2;  // 256 MiB of floats
  std::vector<float> buf(n, 1.0f);
  std::vector<double> sums(threads);
  double best = 0;
  for (int pass = 0; pass < 5; ++pass) {
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
      pool.emplace_back([&, t] {
        const std::size_t b = n * t / threads, e = n * (t + 1) / threads;
        // Eight independent accumulators let the loads stream without a
        // dependency chain; the sum is kept so the loop is not removed.
        float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
        std::size_t i = b;
        for (; i + 8 <= e; i += 8)
          for (int k = 0; k < 8; ++k) acc[k] += buf[i + k];
        double s = 0;
        for (float a : acc) s += a;
        sums[t] = s;
      });
    }
    for (auto& th : pool) th.join();
    const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    best = std::max(best, n * 4.0 / sec / 1e9);
  }
  volatile double sink = sums[0];
  (void)sink;
  return best;
}

}  // namespace kvscope::cli
