// Rotary embeddings of this call's queries and keys, and the KV append:
// CpuBackend::append_kv_and_rotate (copy k/v into the slot, rotate the key
// with rope_rotate) and its query rotation, with the same positions
// (Backend::new_rope_pos) and the same fp32 operations as model/rope.cpp.
#include "backend/cuda/common.cuh"

namespace kvscope::cuda {
namespace {

// rope_rotate for pair (k, k + half) at rotation position pos.
__device__ __forceinline__ void rotate_pair(float& x1, float& x2, const float* inv_freq, int k, float pos) {
  const float angle = __fmul_rn(pos, inv_freq[k]);
  const float c = cosf(angle), s = sinf(angle);
  const float a = x1, b = x2;
  x1 = __fsub_rn(__fmul_rn(a, c), __fmul_rn(b, s));
  x2 = __fadd_rn(__fmul_rn(b, c), __fmul_rn(a, s));
}

// new_rope_pos_[i][seg].
__device__ __forceinline__ int rope_position(const RopeArgs& r, int seg, int i) {
  return r.compacted ? r.seg_len[seg] - r.n + i : r.first_pos + i;
}

// grid (n, n_heads): one block per (token, query head).
__global__ void rope_q_kernel(float* q, int stride, int hd, int group, int seg0, RopeArgs r) {
  const int i = blockIdx.x, h = blockIdx.y;
  const float pos = static_cast<float>(rope_position(r, seg0 + h / group, i));
  float* x = q + int64_t(i) * stride + int64_t(h) * hd;
  for (int k = threadIdx.x; k < r.half; k += blockDim.x) rotate_pair(x[k], x[k + r.half], r.inv_freq, k, pos);
}

// grid (n, n_kv_heads): one block per (token, kv head).
template <class T>
__global__ void append_kv_kernel(const float* qkv, int stride, int k_col, int v_col, int seg0, RopeArgs r,
                                 KvCache kv) {
  const int i = blockIdx.x, g = blockIdx.y, hd = kv.hd;
  const int seg = seg0 + g;
  const int slot = r.seg_len[seg] - r.n + i;  // book_.len(seg) - n + i
  const float pos = static_cast<float>(rope_position(r, seg, i));
  const float* k = qkv + int64_t(i) * stride + k_col + int64_t(g) * hd;
  const float* v = qkv + int64_t(i) * stride + v_col + int64_t(g) * hd;
  const int64_t row = (kv_first_row(kv, seg) + slot) * hd;
  T* kd = static_cast<T*>(kv.k) + row;
  T* vd = static_cast<T*>(kv.v) + row;
  for (int d = threadIdx.x; d < hd; d += blockDim.x) {
    if (d < r.half) {  // the pair (d, d + half): rotated in fp32, then stored
      float x1 = k[d], x2 = k[d + r.half];
      rotate_pair(x1, x2, r.inv_freq, d, pos);
      kd[d] = from_f32<T>(x1);
      kd[d + r.half] = from_f32<T>(x2);
    } else if (d >= 2 * r.half) {  // past the rotary dims: copied
      kd[d] = from_f32<T>(k[d]);
    }
    vd[d] = from_f32<T>(v[d]);
  }
  if (threadIdx.x == 0) {
    kv.pos[int64_t(seg) * kv.cap + slot] = r.first_pos + i;
    kv.stats[int64_t(seg) * kv.cap + slot] = 0.0f;  // stats_[s].resize(len, 0)
  }
}

int threads_for(int work) { return work <= 32 ? 32 : (work <= 64 ? 64 : 128); }

}  // namespace

void rope_q(float* q, int stride, int n_heads, int hd, int group, int seg0, const RopeArgs& r, Stream stream) {
  if (r.n == 0 || r.half == 0) return;
  rope_q_kernel<<<dim3(r.n, n_heads), threads_for(r.half), 0, stream>>>(q, stride, hd, group, seg0, r);
  check_launch("rope_q_kernel");
}

void append_kv(const float* qkv, int stride, int k_col, int v_col, int n_kv_heads, int seg0, const RopeArgs& r,
               const KvCache& kv, Stream stream) {
  if (r.n == 0) return;
  dispatch(kv.type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    append_kv_kernel<T><<<dim3(r.n, n_kv_heads), threads_for(kv.hd), 0, stream>>>(qkv, stride, k_col, v_col, seg0, r,
                                                                                   kv);
  });
  check_launch("append_kv_kernel");
}

}  // namespace kvscope::cuda
