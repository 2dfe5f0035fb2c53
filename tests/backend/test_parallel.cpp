// The host pool (backend/parallel.h): every task runs exactly once, errors
// reach the caller, calls from a task or from a second thread still run
// everything, and a linear layer cut into bands equals one uncut product.
#include <gtest/gtest.h>

#include <cblas.h>

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
  parallel_for(4, [&](int outer) {
    parallel_for(5, [&](int inner) { seen[outer].push_back(inner); });
  });
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

TEST(Parallel, SplitCoversTheRangeInAlignedParts) {
  for (int64_t total : {0, 1, 63, 64, 65, 200, 768, 2048, 2049})
    for (int parts : {1, 2, 3, 16}) {
      const Split s = split_evenly(total, 64, parts);
      ASSERT_GE(s.parts, 1);
      ASSERT_LE(s.parts, parts);
      EXPECT_EQ(s.begin(0), 0);
      EXPECT_EQ(s.end(s.parts - 1), total);
      for (int p = 0; p < s.parts; ++p) {
        EXPECT_EQ(s.begin(p) % 64, 0) << total << " " << parts;
        EXPECT_LT(s.begin(p), std::max<int64_t>(s.end(p), 1)) << "empty part " << p << " of " << total;
        if (p + 1 < s.parts) EXPECT_EQ(s.end(p), s.begin(p + 1));
      }
    }
}

TEST(Parallel, LinearInBandsEqualsOneUncutProduct) {
  // The bands are OpenBLAS calls on row ranges of W; each output feature
  // is the same dot product as in one call over all of W, to the bit.
  cpu::Linear W;
  W.out = 200;  // not a multiple of the 64-feature bands
  W.in = 96;
  W.w.resize(size_t(W.out) * W.in);
  for (std::size_t i = 0; i < W.w.size(); ++i) W.w[i] = uniform01(philox4(7, i, 0, 0, 0).v[0]) - 0.5f;
  for (int n : {1, 5}) {
    std::vector<float> x(size_t(n) * W.in), y(size_t(n) * W.out), ref(size_t(n) * W.out);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = uniform01(philox4(8, i, 0, 0, 0).v[0]) - 0.5f;
    cpu::linear(x.data(), n, W, y.data());
    if (n == 1)
      cblas_sgemv(CblasRowMajor, CblasNoTrans, W.out, W.in, 1.0f, W.w.data(), W.in, x.data(), 1, 0.0f, ref.data(), 1);
    else
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, W.out, W.in, 1.0f, x.data(), W.in, W.w.data(), W.in,
                  0.0f, ref.data(), W.out);
    for (std::size_t i = 0; i < y.size(); ++i) ASSERT_EQ(y[i], ref[i]) << "n " << n << " element " << i;
  }
}

}  // namespace
}  // namespace kvscope
