// Token embedding (+ learned absolute positions): CpuBackend::forward_lanes's
// embedding loop, reading the 16-bit tables. OPT's narrower embedding is
// gathered alone, projected in, and then gets its positions (add_positions).
#include "backend/cuda/common.cuh"

namespace kvscope::cuda {
namespace {

template <class T>
__global__ void embed_kernel(const T* tok_emb, int64_t ld, const T* pos_emb, int64_t pos_ld, const int* tokens, int d,
                             int pos0, float* x) {
  const int i = blockIdx.x;
  const int64_t tok = tokens[i];
  float* xi = x + int64_t(i) * d;
  for (int c = threadIdx.x; c < d; c += blockDim.x) {
    float v = to_f32(tok_emb[tok * ld + c]);
    if (pos_emb) v = v + to_f32(pos_emb[int64_t(pos0 + i) * pos_ld + c]);  // x += wpe[pos]
    xi[c] = v;
  }
}

template <class T>
__global__ void add_positions_kernel(const T* pos_emb, int64_t pos_ld, int d, int pos0, float* x) {
  const int i = blockIdx.x;
  float* xi = x + int64_t(i) * d;
  for (int c = threadIdx.x; c < d; c += blockDim.x) xi[c] = xi[c] + to_f32(pos_emb[int64_t(pos0 + i) * pos_ld + c]);
}

}  // namespace

void embed(WType t, const void* tok_emb, int64_t ld, const void* pos_emb, int64_t pos_ld, const int* tokens, int n,
           int d, int pos0, float* x, Stream stream) {
  if (n == 0) return;
  dispatch(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    embed_kernel<T><<<n, 256, 0, stream>>>(static_cast<const T*>(tok_emb), ld, static_cast<const T*>(pos_emb), pos_ld,
                                           tokens, d, pos0, x);
  });
  check_launch("embed_kernel");
}

void add_positions(WType t, const void* pos_emb, int64_t pos_ld, int n, int d, int pos0, float* x, Stream stream) {
  if (n == 0) return;
  dispatch(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    add_positions_kernel<T><<<n, 256, 0, stream>>>(static_cast<const T*>(pos_emb), pos_ld, d, pos0, x);
  });
  check_launch("add_positions_kernel");
}

}  // namespace kvscope::cuda
