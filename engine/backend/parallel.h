// The host's fork-join pool, used by the CPU backend. A decode step of a
// small model is a few hundred microseconds made of dozens of tiny pieces
// (a matrix-vector product per projection, the attention of one KV head),
// so the threads must be handed work in well under a microsecond: the
// workers spin for a while after each job and only then sleep. OpenBLAS
// runs single-threaded inside each piece (see cpu/cpu_ops.cpp): two pools
// spinning on the same cores would take turns instead of working.
#pragma once

#include <algorithm>
#include <cstdint>

namespace kvscope {

// Threads a parallel_for uses, the caller included: KVSCOPE_THREADS when set
// (1 turns the pool off; a value outside 1..64 throws kvscope::Error naming
// it), else the cores this process may run on, at most 64.
int pool_threads();
// What set pool_threads(), for the ones who print it: the name a front end
// gave (mark_pool_threads_source: "--threads"), else "KVSCOPE_THREADS" when
// set, else "the cores this process may use".
const char* pool_threads_source();
// Called by a front end that sets KVSCOPE_THREADS from its own flag.
void mark_pool_threads_source(const char* flag);

// Which of the pool's threads runs the calling code: 1 .. pool_threads() - 1
// for its workers, 0 for any other thread (a caller, whose tasks it runs
// itself). A task can keep scratch per thread rather than per task: only
// pool_threads() tasks of a call run at once.
int pool_thread_index();

// Runs task(i) for every i in [0, n) on the pool's threads and the caller,
// and returns when all have finished; the first exception a task throws is
// rethrown here. Tasks must not depend on running in any order. A call made
// while the pool is busy (from a task, or from a second thread) runs its
// tasks in the calling thread, in order.
void parallel_for_impl(int n, void (*task)(void* ctx, int i), void* ctx);

template <class F>
void parallel_for(int n, F&& f) {
  parallel_for_impl(n, [](void* ctx, int i) { (*static_cast<F*>(ctx))(i); }, &f);
}

// How many runs a pass over n items (segments, say) holding `elements` in
// all is worth: one per pool thread, as long as each run gets a few
// thousand elements (below that the hand-off costs more than it saves).
inline int runs_for(int n, int64_t elements) {
  const int64_t by_work = elements / 4096 + 1;
  return static_cast<int>(std::max<int64_t>(1, std::min<int64_t>({int64_t(pool_threads()), int64_t(n), by_work})));
}

// f(run, i) for every i in [0, n): `runs` tasks over consecutive runs of
// indices (run r starts at r * ceil(n / runs)), so f can use scratch of its
// run's own and results stay in index order within a run.
template <class F>
void parallel_runs(int n, int runs, F&& f) {
  const int per = (n + runs - 1) / runs;
  parallel_for(runs, [&](int r) {
    const int end = std::min(n, (r + 1) * per);
    for (int i = r * per; i < end; ++i) f(r, i);
  });
}

}  // namespace kvscope
