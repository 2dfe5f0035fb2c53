// Host-callable launchers of the CUDA backend's kernels. Each op is the
// device twin of one piece of the CPU reference (cpu_ops.cpp,
// cpu_backend.cpp, sampler.cpp) and names it, so a reviewer can read them
// side by side. Every launcher is asynchronous on `stream` and takes device
// pointers; tests call them directly with DeviceBuffers.
//
// Plain C++: no CUDA header is included, so this file can be used from code
// compiled by the host compiler alone (tests, the backend's host logic).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "backend/sampler.h"
#include "backend/slot_stats.h"
#include "io/dtype.h"

struct CUstream_st;    // cudaStream_t is CUstream_st*
struct cublasContext;  // cublasHandle_t is cublasContext*

namespace kvscope::cuda {

using Stream = ::CUstream_st*;
using BlasHandle = ::cublasContext*;

// Element type of weights and of the KV cache on the device.
enum class WType { F16, BF16 };
// BF16 checkpoints stay bf16; F16 and F32 ones become fp16.
WType weight_type_for(DType checkpoint);
const char* wtype_name(WType t);
// The host's model of a device store: float -> 16 bits (round to nearest
// even, as __float2half_rn / __float2bfloat16_rn) -> float.
uint16_t to_bits(WType t, float v);
float from_bits(WType t, uint16_t bits);
inline float round_to(WType t, float v) { return from_bits(t, to_bits(t, v)); }

// The KV cache's element type: the weights' (bf16 for BF16 checkpoints).
// Returning F16 here would give bf16 models 3 more significant bits in the
// cache (and fp16's range); every kernel reads the cache type from KvCache.
inline WType kv_type_for(WType weights) { return weights; }

inline int64_t round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

// ---- device memory ----------------------------------------------------------

// One cudaMalloc'd block, freed on destruction. Copies are synchronous.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  // Throws kvscope::Error("cuda", "memory", ...) naming `what` when the
  // device cannot provide `bytes`.
  explicit DeviceBuffer(std::size_t bytes, const char* what = "buffer");
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& o) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* get() const { return ptr_; }
  template <class T>
  T* as() const { return static_cast<T*>(ptr_); }
  std::size_t bytes() const { return bytes_; }
  void reset();  // frees

  void upload(const void* src, std::size_t bytes, std::size_t offset = 0);
  void download(void* dst, std::size_t bytes, std::size_t offset = 0) const;
  void zero();

  template <class T>
  static DeviceBuffer from(const std::vector<T>& v, const char* what = "buffer") {
    DeviceBuffer b(v.size() * sizeof(T) + (v.empty() ? 1 : 0), what);
    if (!v.empty()) b.upload(v.data(), v.size() * sizeof(T));
    return b;
  }
  template <class T>
  std::vector<T> to_vector(std::size_t count) const {
    std::vector<T> v(count);
    if (count) download(v.data(), count * sizeof(T));
    return v;
  }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

// A cuBLAS handle with its own workspace (so cuBLAS allocates nothing later).
class Blas {
 public:
  explicit Blas(Stream stream = nullptr);
  ~Blas();
  Blas(const Blas&) = delete;
  Blas& operator=(const Blas&) = delete;
  BlasHandle get() const { return handle_; }

 private:
  BlasHandle handle_ = nullptr;
  DeviceBuffer workspace_;
};

// Whether a usable GPU is visible; `why` says what is missing when not.
bool device_present(std::string* why);
std::string device_name();
void memory_info(std::size_t* free_bytes, std::size_t* total_bytes);
void synchronize(Stream stream);  // cudaStreamSynchronize (nullptr: the legacy default stream)
std::string format_gb(double bytes);

// ---- weights (CudaModel) ------------------------------------------------------

// dst[r * ld + c] = T(random_weight_value(seed, id, r * cols + c, scale, offset)):
// WeightTensor::to_f32 of a random tensor, then the fp16/bf16 store.
void fill_random(WType t, void* dst, int64_t rows, int64_t cols, int64_t ld, uint64_t seed, uint32_t id, float scale,
                 float offset, Stream stream);
// The same values kept in fp32 (norm weights, biases).
void fill_random_f32(float* dst, int64_t n, uint64_t seed, uint32_t id, float scale, float offset, Stream stream);
// Dense rows of `src_type` (on the device) -> rows of `t` with leading dimension ld.
void convert_rows(DType src_type, const void* src, int64_t rows, int64_t cols, WType t, void* dst, int64_t ld,
                  Stream stream);
void convert_to_f32(DType src_type, const void* src, int64_t n, float* dst, Stream stream);

// ---- the forward pass ---------------------------------------------------------

// x[i][:d] = tok_emb[tokens[i]] (+ pos_emb[pos0 + i]), as CpuBackend::forward_lanes's
// embedding loop (pos0 = first position + the config's position offset);
// ld and pos_ld are the tables' row strides.
void embed(WType t, const void* tok_emb, int64_t ld, const void* pos_emb, int64_t pos_ld, const int* tokens, int n,
           int d, int pos0, float* x, Stream stream);
// x[i] += pos_emb[pos0 + i] for n rows of d (OPT's positions, added after
// its narrower embedding is projected in).
void add_positions(WType t, const void* pos_emb, int64_t pos_ld, int n, int d, int pos0, float* x, Stream stream);

// cpu::layer_norm / cpu::rms_norm over n rows of d (double statistics).
void layer_norm(const float* x, int n, int d, const float* w, const float* b, double eps, float* y, Stream stream);
void rms_norm(const float* x, int n, int d, const float* w, double eps, float* y, Stream stream);
// In place, each head of columns [col0, col0 + heads hd) of n rows of
// `stride` floats: RMSNorm over its hd values with weight w (Qwen3's q/k norms).
void rms_norm_heads(float* x, int n, int stride, int col0, int heads, int hd, const float* w, double eps,
                    Stream stream);

// cpu::gelu_tanh, cpu::gelu_erf, cpu::silu, cpu::relu in place.
void gelu_tanh(float* x, int64_t n, Stream stream);
void gelu_erf(float* x, int64_t n, Stream stream);
void silu(float* x, int64_t n, Stream stream);
void relu(float* x, int64_t n, Stream stream);
// x clamped to [-c, c] in place (MPT's clip_qkv, as std::clamp on the CPU).
void clamp(float* x, int64_t n, float c, Stream stream);
// cpu::silu_mul on the fused gate|up projection: act[i][j] = silu(gu[i][j]) * gu[i][ff + j].
void silu_mul(const float* gate_up, int n, int ff, float* act, Stream stream);

// A linear layer on the device: y = x W^T + b, W [out][ld] in `type`, b fp32.
struct DeviceLinear {
  WType type = WType::F16;
  const void* w = nullptr;
  int64_t ld = 0;  // row stride in elements, a multiple of 8 (16-byte rows)
  int out = 0, in = 0;
  const float* b = nullptr;  // null: no bias
  bool empty() const { return w == nullptr; }
};
// Bytes of the scratch linear() needs for n rows of `in` inputs (n > 1).
std::size_t linear_scratch_bytes(int n, int in);
// cpu::linear: y[n][out] = x[n][in] W^T + b; with `accumulate`, y += that
// (the residual add). n == 1 runs the bandwidth-bound GEMV kernel with fp32
// x; n > 1 runs cuBLAS on x split into hi + lo 16-bit parts (so the
// activations keep ~fp32 precision) with fp32 accumulation.
void linear(const DeviceLinear& W, const float* x, int n, float* y, bool accumulate, void* scratch,
            std::size_t scratch_bytes, BlasHandle blas, Stream stream);

// Where each new token's key/query is rotated to (Backend::begin_forward's
// new_rope_pos()): Original -> first_pos + i; Compacted -> the segment's
// length before this call + i = seg_len[seg] - n + i.
struct RopeArgs {
  const float* inv_freq = nullptr;  // rope_inv_freq(cfg) on the device
  int half = 0;                      // inv_freq.size(); 0: no rotary embedding
  int n = 0;                         // tokens in this call
  int first_pos = 0;
  bool compacted = false;
  const int* seg_len = nullptr;  // [segments], after this call's append
};
// Rotates every query head in place: head h of token i at q[i * stride + h * hd],
// reading segment seg0 + h / group.
void rope_q(float* q, int stride, int n_heads, int hd, int group, int seg0, const RopeArgs& r, Stream stream);

// The device KV cache: K and V [segment][region][hd] in `type`, plus per-slot
// absolute positions and slot statistics [segment][cap]. Slot j of segment s
// holds its key and value in row start[s] + j of the segment's region
// (kv/row_moves.h: eviction moves the shorter side, so the start moves up
// when old slots go); positions and statistics sit at slot j.
struct KvCache {
  WType type = WType::F16;
  void* k = nullptr;
  void* v = nullptr;
  int* pos = nullptr;
  float* stats = nullptr;
  int cap = 0, hd = 0;
  int region = 0;              // rows per segment of K and V (>= cap)
  const int* start = nullptr;  // [segments] on the device: the first row of each segment's slots
};
// Appends this call's keys and values of one owning layer: kv head g of
// token i reads k at qkv[i * stride + k_col + g * hd] (v likewise), rotates
// the key in fp32 and stores both at slot seg_len[seg] - n + i of segment
// seg0 + g; that slot's position becomes first_pos + i and its statistic 0.
void append_kv(const float* qkv, int stride, int k_col, int v_col, int n_kv_heads, int seg0, const RopeArgs& r,
               const KvCache& kv, Stream stream);

// Optional slot statistics inside attention (slot_stats.h, CpuBackend::
// accumulate_stats / finish_stats).
struct StatArgs {
  SlotStatRule rule;                  // source None: off
  const float* row_weight = nullptr;  // [n] pow(decay, n - 1 - i), computed on the host like the CPU
  float readers = 1;                  // query heads (over all layers) reading each segment of this layer
  float* mean_acc = nullptr;          // Mean: [n_kv_heads][cap]
  float* max_acc = nullptr;           // Max: [n_kv_heads][n][cap]
  float* gumbel_rows = nullptr;       // GumbelSoftmax: scratch [n_heads][q_chunk][cap]
};

// One layer's attention (CpuBackend::attention): for head h, query i
// (slot len - n + i of segment seg0 + h / group): scores = scale * q.k over the
// segment, causal and sliding-window masks (-inf), softmax, out = P V.
struct AttentionArgs {
  const float* q = nullptr;
  int q_stride = 0;  // query i head h at q + i * q_stride + h * hd
  KvCache kv;
  const int* seg_len = nullptr;
  int seg0 = 0, group = 1, n_heads = 0;
  int n = 0;          // queries (this call's tokens)
  int first_pos = 0;  // absolute position of query 0
  int window = 0;     // sliding window; 0: none
  // ALiBi (MPT): score + slope[h] x (key - query) distance, over the text's
  // positions, or over the cache's slots when `alibi_slots` (compacted
  // positions: the evicted tokens' gaps closed), as CpuBackend::finish_row.
  const float* alibi_slopes = nullptr;
  bool alibi_slots = false;
  float scale = 1;
  int max_len = 0;  // the longest segment this layer reads (grid size)
  int layer = 0;    // for Keyformer's noise
  float* out = nullptr;
  int out_stride = 0;  // out of query i head h at out + i * out_stride + h * hd
  // AttentionRows layout (offset[h] = (n - capture_first) * sum of earlier heads' row lengths); null: no capture.
  float* capture_logits = nullptr;
  float* capture_probs = nullptr;
  int capture_first = 0;
  // Scratch: scores [n_heads][q_chunk][cap], partial [n_heads][q_chunk][pv_splits(cap)][hd].
  float* scores = nullptr;
  float* partial = nullptr;
  int q_chunk = 1;
  StatArgs stats;
};
int pv_splits(int cap);  // key blocks of the P.V kernel for a segment of cap slots
void attention(const AttentionArgs& a, Stream stream);

// Zeroes the statistic accumulators of one KV layer's segments.
void clear_stat_acc(const StatArgs& s, int n_kv_heads, int n, int cap, Stream stream);
// CpuBackend::finish_stats for the segments seg0..seg0+n_kv_heads-1, once the
// last layer reading them is done: S = carry * S + this call's contribution.
void finish_stats(const StatArgs& s, float carry, const int* seg_len, int seg0, int n_kv_heads, int n, int max_len,
                  float* stats, int cap, Stream stream);

// slot_stats.h's KeyNorm or KeyDiff scores of segments seg0..seg0+n_segments-1
// into kv.stats (CpuBackend::key_scores), from the keys now in the cache.
void key_scores(const KvCache& kv, StatSource source, const int* seg_len, int seg0, int n_segments, Stream stream);
// CriticalKV's value weights (Backend::value_weights) of slots
// [first, first + count) of segment seg into out[0, count): query heads
// q0 .. q0 + G - 1 read it, through the owning layer's output projection o.
void value_weights(const DeviceLinear& o, const KvCache& kv, int seg, int first, int count, int q0, int G, float* out,
                   Stream stream);
// CUR's or LagKV's scores (rule.source Cur or LagKv; backend/cache_scores.h)
// of the same segments, from the keys and values now in the cache.
void cache_scores(const KvCache& kv, const SlotStatRule& rule, const int* seg_len, int seg0, int n_segments,
                  Stream stream);

// retain() on the device, for several segments at once, one CompactJob per
// segment. Slot i (< kept) of the segment takes the slot map[i] of before
// (ascending, map[i] >= i; an identity map when map_offset is -1):
// positions and statistics for the slots from first_hole on; key and value
// rows for the slots in [kv_begin, kv_end), read from row src_start +
// map[i] and written to row dst_start + i (ascending when dst_start <=
// src_start, else descending, so that no row is overwritten before it is
// read). In Compacted mode (inv_freq set) the keys' rotary dims of the
// slots in [rotate_begin, rotate_end) move the same way and are re-rotated
// by (new slot - old slot), their rotation being their slot index (the
// range's slots outside [kv_begin, kv_end) already sit in their rows).
// kv/row_moves.h's place_rows() gives the ranges.
struct CompactJob {
  int segment = 0, kept = 0, map_offset = -1, first_hole = 0;
  int src_start = 0, dst_start = 0, kv_begin = 0, kv_end = 0, rotate_begin = 0, rotate_end = 0;
};
constexpr int kCompactJobInts = sizeof(CompactJob) / sizeof(int);  // its room in an int staging buffer
void compact(const KvCache& kv, const CompactJob* jobs, int n_jobs, const int* maps, const float* inv_freq,
             int rope_half, Stream stream);

// sample_token() on the device: token written to *token_out (device int);
// `scratch` holds vocab floats.
void sample(const float* logits, int vocab, const SamplingParams& p, uint64_t step, float* scratch, int* token_out,
            Stream stream);

}  // namespace kvscope::cuda
