// retain() on the device (CpuBackend::retain): each listed segment keeps the
// slots a map names, moved to the front in order, and in Compacted mode each
// moved key is re-rotated by (new slot - old slot).
//
// Moving rows in place in parallel would race (a slot can be written while
// another thread still reads it as a source). Instead each thread owns a
// column (one K dim, or a rotary pair of dims; one V dim; the positions;
// the statistics) of one segment and walks the slots in ascending order,
// exactly like the CPU's memcpy loop: slot i takes the row at map[i] >= i,
// which no earlier step has overwritten, and each source row is read once.
// Threads touch disjoint columns, so no barrier is needed. Loading a batch of
// kBatch sources before storing them keeps that order (a source of step
// i + b is never a target of steps i .. i + b - 1, since map[i + b] >= i + b)
// and puts kBatch loads in flight.
//
// In Compacted mode a key's rotation position always equals its slot
// (appends rotate to the slot they land in; retains re-rotate to the new
// slot), so the angle to rotate by is (i - map[i]), whatever retains were
// composed into the map since the last flush.
#include "backend/cuda/common.cuh"

namespace kvscope::cuda {
namespace {

constexpr int kThreads = 128;
constexpr int kBatch = 8;

// Moves one column (stride elements apart) of a segment.
template <class U>
__device__ void move_column(U* col, int64_t stride, const int* map, int first, int new_len) {
  for (int i = first; i < new_len; i += kBatch) {
    U v[kBatch];
#pragma unroll
    for (int b = 0; b < kBatch; ++b)
      if (i + b < new_len) v[b] = col[int64_t(map[i + b - first]) * stride];
#pragma unroll
    for (int b = 0; b < kBatch; ++b)
      if (i + b < new_len) col[int64_t(i + b) * stride] = v[b];
  }
}

// Moves the key pair (c, c + half) and rotates it by (new slot - old slot):
// rope_rotate(key, inv_freq, delta) of the CPU, on this pair.
template <class T>
__device__ void move_rotate_pair(T* K, int hd, int c, int half, const float* inv_freq, const int* map, int first,
                                 int new_len) {
  for (int i = first; i < new_len; i += kBatch) {
    float x1[kBatch], x2[kBatch];
#pragma unroll
    for (int b = 0; b < kBatch; ++b)
      if (i + b < new_len) {
        const int64_t src = int64_t(map[i + b - first]) * hd;
        x1[b] = to_f32(K[src + c]);
        x2[b] = to_f32(K[src + c + half]);
      }
#pragma unroll
    for (int b = 0; b < kBatch; ++b)
      if (i + b < new_len) {
        const float delta = static_cast<float>(i + b - map[i + b - first]);
        const float angle = __fmul_rn(delta, inv_freq[c]);
        const float co = cosf(angle), si = sinf(angle);
        const float r1 = __fsub_rn(__fmul_rn(x1[b], co), __fmul_rn(x2[b], si));
        const float r2 = __fadd_rn(__fmul_rn(x2[b], co), __fmul_rn(x1[b], si));
        const int64_t dst = int64_t(i + b) * hd;
        K[dst + c] = from_f32<T>(r1);
        K[dst + c + half] = from_f32<T>(r2);
      }
  }
}

// grid (jobs, column tiles). Columns of a segment: K (a rotary pair counts
// as one), V, positions, statistics.
template <class T>
__global__ void compact_kernel(KvCache kv, const int* jobs, const int* maps, const float* inv_freq, int half) {
  const int* job = jobs + 4 * blockIdx.x;
  const int seg = job[0], first = job[1], new_len = job[2];
  const int* map = maps + job[3];
  const int hd = kv.hd;
  const int k_items = hd - half;
  const int item = blockIdx.y * blockDim.x + threadIdx.x;
  if (item >= k_items + hd + 2) return;
  const int64_t seg_rows = int64_t(seg) * kv.cap;
  if (item < k_items) {
    T* K = static_cast<T*>(kv.k) + seg_rows * hd;
    if (item < half) move_rotate_pair(K, hd, item, half, inv_freq, map, first, new_len);
    else move_column(K + item + half, hd, map, first, new_len);  // dims 2*half .. hd-1
  } else if (item < k_items + hd) {
    T* V = static_cast<T*>(kv.v) + seg_rows * hd;
    move_column(V + (item - k_items), hd, map, first, new_len);
  } else if (item == k_items + hd) {
    move_column(kv.pos + seg_rows, 1, map, first, new_len);
  } else {
    move_column(kv.stats + seg_rows, 1, map, first, new_len);
  }
}

}  // namespace

void compact(const KvCache& kv, const int* jobs, int n_jobs, const int* maps, const float* inv_freq, int rope_half,
             Stream stream) {
  if (n_jobs == 0) return;
  const int half = inv_freq ? rope_half : 0;
  const int items = kv.hd - half + kv.hd + 2;
  const dim3 grid(n_jobs, (items + kThreads - 1) / kThreads);
  dispatch(kv.type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    compact_kernel<T><<<grid, kThreads, 0, stream>>>(kv, jobs, maps, inv_freq, half);
  });
  check_launch("compact_kernel");
}

}  // namespace kvscope::cuda
