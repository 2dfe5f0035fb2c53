#include "backend/parallel.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <pthread.h>
#include <sched.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "common/error.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define KVSCOPE_CPU_RELAX() _mm_pause()
#else
#define KVSCOPE_CPU_RELAX() std::atomic_signal_fence(std::memory_order_seq_cst)
#endif

namespace kvscope {
namespace {

// The job being run is one 64-bit word: epoch (24 bits) | task count (20) |
// next unclaimed task (20). A thread claims a task with a compare-exchange
// on the whole word, so a claim succeeds only while its job is the current
// one and unfinished; the job's function is read only after a successful
// claim, when the caller cannot have moved on to the next job yet (it waits
// for every claimed task).
constexpr int kIndexBits = 20;
constexpr uint64_t kIndexMask = (uint64_t(1) << kIndexBits) - 1;
constexpr int kMaxTasks = int(kIndexMask);

uint64_t pack(uint64_t epoch, uint64_t n, uint64_t next) {
  return (epoch << (2 * kIndexBits)) | (n << kIndexBits) | next;
}
uint64_t epoch_of(uint64_t w) { return w >> (2 * kIndexBits); }
int count_of(uint64_t w) { return static_cast<int>((w >> kIndexBits) & kIndexMask); }
int next_of(uint64_t w) { return static_cast<int>(w & kIndexMask); }

// How long an idle worker keeps spinning before it sleeps: longer than the
// serial stretches of a decode step, short enough that an idle program
// does not hold a core.
constexpr auto kSpinFor = std::chrono::microseconds(300);

thread_local bool t_in_pool = false;
thread_local int t_worker = 0;  // pool_thread_index()

class Pool {
 public:
  explicit Pool(int threads) {
#if defined(__GLIBC__)
    // The workers allocate from the one heap the callers use, not an arena
    // each: glibc gives back the top of a worker's arena only when more
    // than its trim threshold (raised as large blocks are freed, up to
    // 64 MB) is free there, and return_freed_heap() (malloc_trim) trims
    // the top of the main heap only, so a prompt's attention scores
    // allocated by a worker (then a row over the prompt per token, 3.6 MB
    // a task at 943 tokens) stayed resident after they were freed. The
    // workers allocate scratch once per call, not per task, so they
    // hardly contend for the one heap.
    mallopt(M_ARENA_MAX, 1);
#endif
    cpu_set_t allowed;
    CPU_ZERO(&allowed);
    const bool known = sched_getaffinity(0, sizeof(allowed), &allowed) == 0;
    const int caller_cpu = sched_getcpu();
    for (int i = 1; i < threads; ++i) {
      workers_.emplace_back([this, i] {
        t_worker = i;
        work();
      });
      // A new thread starts on its creator's core, and the scheduler can
      // take tens of milliseconds to move a spinning worker to an idle
      // one; until then the two take turns. Starting the workers away from
      // the caller's core avoids that; they may still move later.
      if (known && caller_cpu >= 0 && CPU_COUNT(&allowed) > 1) {
        cpu_set_t elsewhere = allowed;
        CPU_CLR(caller_cpu, &elsewhere);
        pthread_setaffinity_np(workers_.back().native_handle(), sizeof(elsewhere), &elsewhere);
      }
    }
  }
  ~Pool() {
    stop_.store(true);
    wake_.fetch_add(1);
    wake_.notify_all();
    for (auto& t : workers_) t.join();
  }
  int threads() const { return static_cast<int>(workers_.size()) + 1; }

  // Returns false (nothing run) when the pool is busy.
  bool run(int n, void (*task)(void*, int), void* ctx) {
    std::unique_lock<std::mutex> lock(busy_, std::try_to_lock);
    if (!lock.owns_lock()) return false;
    task_ = task;
    ctx_ = ctx;
    done_.store(0, std::memory_order_relaxed);
    error_ = nullptr;
    const uint64_t epoch = (epoch_of(job_.load(std::memory_order_relaxed)) + 1) & ((uint64_t(1) << 24) - 1);
    job_.store(pack(epoch, n, 0));
    if (sleepers_.load() > 0) {
      wake_.fetch_add(1);
      wake_.notify_all();
    }
    t_in_pool = true;
    while (claim_and_run(epoch)) {
    }
    // Tasks claimed by workers may still be running.
    for (int spins = 0; done_.load(std::memory_order_acquire) < n; ++spins) {
      if (spins < 4096) KVSCOPE_CPU_RELAX();
      else std::this_thread::yield();  // a worker was descheduled mid-task
    }
    t_in_pool = false;
    if (error_) std::rethrow_exception(error_);
    return true;
  }

 private:
  // Claims and runs one task of job `epoch`; false when none is left.
  bool claim_and_run(uint64_t epoch) {
    uint64_t w = job_.load(std::memory_order_acquire);
    for (;;) {
      if (epoch_of(w) != epoch || next_of(w) >= count_of(w)) return false;
      if (job_.compare_exchange_weak(w, w + 1, std::memory_order_acq_rel)) break;
    }
    const int i = next_of(w);
    try {
      task_(ctx_, i);
    } catch (...) {
      std::lock_guard<std::mutex> g(error_lock_);
      if (!error_) error_ = std::current_exception();
    }
    done_.fetch_add(1, std::memory_order_release);
    return true;
  }

  void work() {
    t_in_pool = true;
    // The epoch before the first job (workers are made with the pool): a
    // worker that starts after the first job was posted still joins it.
    // (Reading job_ here let a late start take that job as seen: the
    // caller ran the process's first call alone, ~40 ms of a 2-thread
    // prompt.)
    uint64_t seen = 0;
    while (!stop_.load(std::memory_order_relaxed)) {
      auto idle_since = std::chrono::steady_clock::now();
      uint64_t epoch = seen;
      for (int spins = 0;; ++spins) {
        epoch = epoch_of(job_.load(std::memory_order_acquire));
        if (epoch != seen || stop_.load(std::memory_order_relaxed)) break;
        KVSCOPE_CPU_RELAX();
        if ((spins & 255) != 255) continue;
        if (std::chrono::steady_clock::now() - idle_since < kSpinFor) {
          std::this_thread::yield();  // lets another program's thread run on a shared core
          continue;
        }
        sleepers_.fetch_add(1);
        const uint32_t w = wake_.load();
        if (epoch_of(job_.load()) == seen && !stop_.load()) wake_.wait(w);
        sleepers_.fetch_sub(1);
        idle_since = std::chrono::steady_clock::now();
      }
      seen = epoch;
      while (claim_and_run(epoch)) {
      }
    }
  }

  std::vector<std::thread> workers_;
  std::mutex busy_;
  std::atomic<uint64_t> job_{0};
  std::atomic<int> done_{0};
  std::atomic<int> sleepers_{0};
  std::atomic<uint32_t> wake_{0};
  std::atomic<bool> stop_{false};
  void (*task_)(void*, int) = nullptr;
  void* ctx_ = nullptr;
  std::mutex error_lock_;
  std::exception_ptr error_;
};

const char* g_threads_source = nullptr;

int configured_threads() {
  if (const char* env = std::getenv("KVSCOPE_THREADS")) {
    // A value that is not a thread count is refused, not replaced by the
    // default: a benchmark or a bisection run would measure something else.
    char* end = nullptr;
    const long v = std::strtol(env, &end, 10);
    if (end == env || *end != '\0' || v < 1 || v > 64)
      throw Error("KVSCOPE_THREADS", "", std::string("expected a thread count from 1 to 64, got '") + env + "'");
    return static_cast<int>(v);
  }
  // The cores this process may run on (a container's CPU set), not every
  // core the machine has: a worker without a core of its own only waits.
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof(allowed), &allowed) == 0 && CPU_COUNT(&allowed) > 0)
    return std::min(CPU_COUNT(&allowed), 64);
  return static_cast<int>(std::clamp<unsigned>(std::thread::hardware_concurrency(), 1, 64));
}

Pool& pool() {
  static Pool p(configured_threads());
  return p;
}

}  // namespace

int pool_threads() { return pool().threads(); }
const char* pool_threads_source() {
  if (g_threads_source) return g_threads_source;
  return std::getenv("KVSCOPE_THREADS") ? "KVSCOPE_THREADS" : "the cores this process may use";
}
void mark_pool_threads_source(const char* flag) { g_threads_source = flag; }
int pool_thread_index() { return t_worker; }

void parallel_for_impl(int n, void (*task)(void* ctx, int i), void* ctx) {
  if (n <= 0) return;
  if (n > 1 && n <= kMaxTasks && !t_in_pool && pool().threads() > 1 && pool().run(n, task, ctx)) return;
  for (int i = 0; i < n; ++i) task(ctx, i);
}

}  // namespace kvscope
