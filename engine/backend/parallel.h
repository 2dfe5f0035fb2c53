// The host's fork-join pool, used by the CPU backend. A decode step of a
// small model is a few hundred microseconds made of dozens of tiny pieces
// (a matrix-vector product per projection, the attention of one KV head),
// so the threads must be handed work in well under a microsecond: the
// workers spin for a while after each job and only then sleep. OpenBLAS
// runs single-threaded inside each piece (see cpu/cpu_ops.cpp): two pools
// spinning on the same cores would take turns instead of working.
#pragma once

#include <cstdint>

namespace kvscope {

// Threads a parallel_for uses, the caller included: KVSCOPE_THREADS when set
// (1 turns the pool off), else the cores this process may run on, at most 64.
int pool_threads();

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

}  // namespace kvscope
