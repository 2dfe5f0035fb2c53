// The host pool (backend/parallel.h): every task runs exactly once, errors
// reach the caller, calls from a task or from a second thread still run
// everything, and a linear layer is cut into fixed bands that the pool only
// hands out.
#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <thread>
#include <vector>

#include "backend/cpu/cpu_ops.h"
#include "backend/parallel.h"
#include "common/counter_random.h"

namespace kvscope {
namespace {

TEST(Parallel, EveryTaskRunsExactlyOnce) {
  std::printf("pool threads: %d\n", pool_threads());
  for (int n : {0, 1, 2, 3, 7, 64, 1000}) {
    for (int round = 0; round < 50; ++round) {
      std::vector<std::atomic<int>> runs(n);
      parallel_for(n, [&](int i) { runs[i].fetch_add(1); });
      for (int i = 0; i < n; ++i) ASSERT_EQ(runs[i].load(), 1) << "n " << n << " task " << i;
    }
  }
}

TEST(Parallel, ATaskErrorReachesTheCallerAndThePoolGoesOn) {
  std::atomic<int> ran{0};
  EXPECT_THROW(parallel_for(16,
                            [&](int i) {
                              ran.fetch_add(1);
                              if (i == 5) throw std::runtime_error("task 5");
                            }),
               std::runtime_error);
  EXPECT_EQ(ran.load(), 16);  // the others still ran: no task is left half-claimed
  std::atomic<int> after{0};
  parallel_for(8, [&](int) { after.fetch_add(1); });
  EXPECT_EQ(after.load(), 8);
}

TEST(Parallel, ACallFromATaskRunsItsTasksInOrder) {
  std::vector<std::vector<int>> seen(4);
  parallel_for(4, [&](int outer) { parallel_for(5, [&](int inner) { seen[outer].push_back(inner); }); });
  for (const auto& s : seen) EXPECT_EQ(s, (std::vector<int>{0, 1, 2, 3, 4}));
}

TEST(Parallel, TwoCallingThreadsBothGetEveryTaskRun) {
  // One of them finds the pool busy and runs its tasks itself.
  auto caller = [](std::atomic<long>* total) {
    for (int r = 0; r < 2000; ++r) parallel_for(6, [&](int i) { total->fetch_add(i + 1); });
  };
  std::atomic<long> a{0}, b{0};
  std::thread t1(caller, &a), t2(caller, &b);
  t1.join();
  t2.join();
  EXPECT_EQ(a.load(), 2000L * 21);
  EXPECT_EQ(b.load(), 2000L * 21);
}

// Scratch kept per pool thread (the CPU backend's attention) is safe only
// if no two tasks running at once have the same index.
TEST(Parallel, TasksRunningAtOnceHaveDifferentThreadIndexes) {
  EXPECT_EQ(pool_thread_index(), 0);  // a caller
  const int T = pool_threads();
  std::vector<std::atomic<int>> busy(T);
  std::atomic<int> clashes{0}, out_of_range{0};
  // Rounds: a pool made by the first call may start its workers late.
  for (int round = 0; round < 4; ++round)
    parallel_for(64, [&](int) {
      const int k = pool_thread_index();
      if (k < 0 || k >= T) {
        out_of_range.fetch_add(1);
        return;
      }
      if (busy[k].fetch_add(1) != 0) clashes.fetch_add(1);
      volatile double x = 0;
      for (int j = 0; j < 200000; ++j) x = x + j;  // ~0.2 ms: long enough to overlap
      busy[k].fetch_sub(1);
    });
  EXPECT_EQ(out_of_range.load(), 0);
  EXPECT_EQ(clashes.load(), 0);
  EXPECT_EQ(pool_thread_index(), 0);
}

TEST(Parallel, LinearBandsHaveAFixedWidthAndCoverEveryFeature) {
  // The cut comes from the shape alone: a fixed band width, so the thread
  // count cannot change which OpenBLAS call computes a feature.
  for (int out : {1, 63, 64, 65, 200, 768, 2048, 2049, 49152})
    for (int n : {1, 2, 17}) {
      cpu::Linear W;
      W.out = out;
      W.in = 8;
      const cpu::LinearBands b = cpu::linear_bands(W, n);
      ASSERT_GE(b.count, 1);
      EXPECT_EQ(b.begin(0), 0);
      EXPECT_EQ(b.end(b.count - 1), out);
      for (int i = 0; i < b.count; ++i) {
        EXPECT_EQ(b.begin(i), i * b.width) << out << " " << n;
        EXPECT_LT(b.begin(i), b.end(i)) << "empty band " << i << " of " << out;
        if (i + 1 < b.count) EXPECT_EQ(b.end(i) - b.begin(i), b.width);
      }
      EXPECT_EQ(b.width % 64, 0) << "bands start on the kernels' full-width tiles";
    }
}

TEST(Parallel, LinearOnThePoolEqualsItsBandsRunInOrder) {
  // Whichever thread runs a band, it is the same OpenBLAS call on the same
  // rows; the pool only changes who runs it.
  cpu::Linear W;
  W.out = 1000;  // not a multiple of the band width
  W.in = 96;
  W.w.resize(size_t(W.out) * W.in);
  W.b.resize(W.out);
  for (std::size_t i = 0; i < W.w.size(); ++i) W.w[i] = uniform01(philox4(7, i, 0, 0, 0).v[0]) - 0.5f;
  for (int j = 0; j < W.out; ++j) W.b[j] = uniform01(philox4(9, j, 0, 0, 0).v[0]) - 0.5f;
  for (int n : {1, 5, 300}) {
    std::vector<float> x(size_t(n) * W.in), y(size_t(n) * W.out), ref(size_t(n) * W.out);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = uniform01(philox4(8, i, 0, 0, 0).v[0]) - 0.5f;
    cpu::linear(x.data(), n, W, y.data());
    const cpu::LinearBands bands = cpu::linear_bands(W, n);
    for (int b = bands.count - 1; b >= 0; --b) cpu::linear_band(x.data(), n, W, ref.data(), bands, b);
    for (std::size_t i = 0; i < y.size(); ++i) ASSERT_EQ(y[i], ref[i]) << "n " << n << " element " << i;
    // And the product is the product: within float rounding of a double sum.
    for (int r = 0; r < n; r += 37)
      for (int o = 0; o < W.out; o += 13) {
        double want = W.b[o];
        for (int k = 0; k < W.in; ++k) want += double(x[size_t(r) * W.in + k]) * W.w[size_t(o) * W.in + k];
        ASSERT_NEAR(y[size_t(r) * W.out + o], want, 1e-5) << "n " << n << " row " << r << " feature " << o;
      }
  }
}

}  // namespace
}  // namespace kvscope
