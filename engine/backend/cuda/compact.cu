// retain() on the device (CpuBackend::do_retain): each listed segment keeps the
// slots a map names, in order, and in Compacted mode each moved key is
// re-rotated by (new slot - old slot). Which key and value rows move is the
// host's choice (kv/row_moves.h, place_rows): those after the first hole
// move down, or those before the last hole move up, or all go back to the
// region's first row; keys whose slot changed are re-rotated whether their
// row moves or not. Positions and statistics (a few bytes a slot) always
// move down, from the first hole.
//
// Moving rows in place in parallel would race (a slot can be written while
// another thread still reads it as a source). Instead each thread owns a
// column (one K dim, or a rotary pair of dims; one V dim; the positions;
// the statistics) of one segment and walks the slots in order, ascending
// when rows move down and descending when they move up, so that each source
// row is read before any step overwrites it. Threads touch disjoint
// columns, so no barrier is needed. Loading a batch of kBatch sources
// before storing them keeps that order. Moving down (dst <= src): the
// source of step i + b, row src + map[i + b] >= src + i + b, lies above the
// targets dst + i .. dst + i + b - 1 of the steps before it. Moving up (dst
// = src + gone or more): the source of step i - b, row src + map[i - b] <=
// src + i - b + gone <= dst + i - b, lies below the targets dst + i - b + 1
// .. dst + i of the steps before it.
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

// Where slot i of the segment was before: map[i], or i for an identity map.
struct SlotMap {
  const int* map;
  __device__ int operator()(int i) const { return map ? map[i] : i; }
};

// The slots a column walk visits, slot(0) first: begin, begin + 1, ...,
// end - 1 (ascending) or end - 1, end - 2, ..., begin (descending).
struct Walk {
  int begin, end;
  bool descending;
  __device__ int count() const { return end - begin; }
  __device__ int slot(int k) const { return descending ? end - 1 - k : begin + k; }
};

// Moves one column (stride elements apart) from row src + map[i] to row dst + i.
template <class U>
__device__ void move_column(U* col, int64_t stride, SlotMap map, Walk w, int64_t src, int64_t dst) {
  for (int k = 0; k < w.count(); k += kBatch) {
    U v[kBatch];
#pragma unroll
    for (int b = 0; b < kBatch; ++b)
      if (k + b < w.count()) v[b] = col[(src + map(w.slot(k + b))) * stride];
#pragma unroll
    for (int b = 0; b < kBatch; ++b)
      if (k + b < w.count()) col[(dst + w.slot(k + b)) * stride] = v[b];
  }
}

// Moves the key pair (c, c + half) and rotates it by (new slot - old slot):
// rope_rotate(key, inv_freq, delta) of the CPU, on this pair.
template <class T>
__device__ void move_rotate_pair(T* K, int hd, int c, int half, const float* inv_freq, SlotMap map, Walk w,
                                 int64_t src, int64_t dst) {
  for (int k = 0; k < w.count(); k += kBatch) {
    float x1[kBatch], x2[kBatch];
#pragma unroll
    for (int b = 0; b < kBatch; ++b)
      if (k + b < w.count()) {
        const int64_t from = (src + map(w.slot(k + b))) * hd;
        x1[b] = to_f32(K[from + c]);
        x2[b] = to_f32(K[from + c + half]);
      }
#pragma unroll
    for (int b = 0; b < kBatch; ++b)
      if (k + b < w.count()) {
        const int i = w.slot(k + b);
        const int64_t to = (dst + i) * hd;
        if (i == map(i)) {  // slot unchanged (a sink moving up): moved as it is, like the CPU's skip of delta 0
          K[to + c] = from_f32<T>(x1[b]);
          K[to + c + half] = from_f32<T>(x2[b]);
          continue;
        }
        const float delta = static_cast<float>(i - map(i));
        const float angle = __fmul_rn(delta, inv_freq[c]);
        const float co = cosf(angle), si = sinf(angle);
        const float r1 = __fsub_rn(__fmul_rn(x1[b], co), __fmul_rn(x2[b], si));
        const float r2 = __fadd_rn(__fmul_rn(x2[b], co), __fmul_rn(x1[b], si));
        K[to + c] = from_f32<T>(r1);
        K[to + c + half] = from_f32<T>(r2);
      }
  }
}

// grid (jobs, column tiles). Columns of a segment: K (a rotary pair counts
// as one), V, positions, statistics.
template <class T>
__global__ void compact_kernel(KvCache kv, const CompactJob* jobs, const int* maps, const float* inv_freq,
                               int half) {
  const CompactJob j = jobs[blockIdx.x];
  const SlotMap map{j.map_offset < 0 ? nullptr : maps + j.map_offset};
  const int hd = kv.hd;
  const int k_items = hd - half;
  const int item = blockIdx.y * blockDim.x + threadIdx.x;
  if (item >= k_items + hd + 2) return;
  if (item < k_items + hd) {
    // Key and value rows: rows of the region, from the chosen start.
    const Walk w{j.kv_begin, j.kv_end, j.dst_start > j.src_start};
    const int64_t seg_rows = int64_t(j.segment) * kv.region;
    const int64_t src = seg_rows + j.src_start, dst = seg_rows + j.dst_start;
    if (item < k_items) {
      T* K = static_cast<T*>(kv.k);
      if (item < half)
        move_rotate_pair(K, hd, item, half, inv_freq, map, Walk{j.rotate_begin, j.rotate_end, w.descending}, src, dst);
      else move_column(K + item + half, hd, map, w, src, dst);  // dims 2*half .. hd-1
    } else {
      move_column(static_cast<T*>(kv.v) + (item - k_items), hd, map, w, src, dst);
    }
    return;
  }
  // Positions and statistics: slot-indexed, always moving down.
  const Walk w{j.first_hole, j.kept, false};
  const int64_t slots = int64_t(j.segment) * kv.cap;
  if (item == k_items + hd) move_column(kv.pos, 1, map, w, slots, slots);
  else move_column(kv.stats, 1, map, w, slots, slots);
}

}  // namespace

void compact(const KvCache& kv, const CompactJob* jobs, int n_jobs, const int* maps, const float* inv_freq,
             int rope_half, Stream stream) {
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
