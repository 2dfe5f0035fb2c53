#include "backend/cuda/cuda_model.h"

#include "backend/backend.h"

#include <algorithm>
#include <functional>
#include <string>

#include "backend/cuda/cuda_check.h"
#include "common/error.h"
#include "io/dtype.h"
#include "model/rope.h"

namespace kvscope {
namespace {

using cuda::DeviceBuffer;
using cuda::round_up;

constexpr std::size_t kAlign = 256;
constexpr std::size_t kStagingBytes = std::size_t(64) << 20;

// Two passes over the same description: the first only adds up offsets, the
// second (after the one allocation) fills the tensors.
class Uploader {
 public:
  Uploader(cuda::WType t, cudaStream_t stream) : type_(t), stream_(stream) {}

  bool planning() const { return base_ == nullptr; }
  std::size_t size() const { return size_; }
  std::size_t largest_host_tensor() const { return largest_; }
  void start_filling(char* base, void* staging, std::size_t staging_bytes) {
    base_ = base;
    staging_ = staging;
    staging_bytes_ = staging_bytes;
    size_ = 0;
  }

  // A region of `bytes`; returns its device address (null while planning).
  char* take(std::size_t bytes) {
    const std::size_t off = size_;
    size_ = round_up(int64_t(size_ + bytes), kAlign);
    return base_ ? base_ + off : nullptr;
  }

  // Matrices stacked row-wise into one [rows][ld] matrix of the weight type.
  cuda::DeviceLinear matrix(std::initializer_list<const WeightTensor*> parts,
                            std::initializer_list<const WeightTensor*> biases, const std::string& what) {
    int64_t rows = 0, cols = -1;
    for (const WeightTensor* p : parts) {
      if (p->empty()) continue;
      if (p->shape.size() != 2) throw Error("cuda", what, "expected a matrix, got " + p->shape_string());
      if (cols >= 0 && p->cols() != cols)
        throw Error("cuda", what, "stacked matrices disagree in columns (" + std::to_string(cols) + " vs " +
                                      std::to_string(p->cols()) + ")");
      cols = p->cols();
      rows += p->rows();
      note_host(*p);
    }
    cuda::DeviceLinear L;
    if (rows == 0) return L;
    L.type = type_;
    L.out = static_cast<int>(rows);
    L.in = static_cast<int>(cols);
    L.ld = round_up(cols, 8);
    char* w = take(std::size_t(rows) * L.ld * 2);
    L.w = w;
    bool any_bias = false;
    for (const WeightTensor* b : biases) any_bias |= !b->empty();
    float* bias = any_bias ? reinterpret_cast<float*>(take(std::size_t(rows) * 4)) : nullptr;
    L.b = bias;
    if (planning()) return L;
    int64_t r0 = 0;
    auto bi = biases.begin();
    for (const WeightTensor* p : parts) {
      const WeightTensor* b = bi != biases.end() ? *bi++ : nullptr;
      if (p->empty()) continue;
      fill_matrix(*p, w + std::size_t(r0) * L.ld * 2, L.ld, what);
      if (b && !b->empty()) {
        if (b->numel() != p->rows()) throw Error("cuda", what, "bias length disagrees with the matrix");
        fill_vector(*b, bias + r0);  // a missing bias stays zero (the arena is zeroed)
      }
      r0 += p->rows();
    }
    return L;
  }

  // An embedding table [rows][ld] of the weight type.
  const void* table(const WeightTensor& t, int64_t ld, const std::string& what) {
    if (t.empty()) return nullptr;
    note_host(t);
    char* d = take(std::size_t(t.rows()) * ld * 2);
    if (!planning()) fill_matrix(t, d, ld, what);
    return d;
  }

  // A vector kept in fp32.
  const float* vector(const WeightTensor& t) {
    if (t.empty()) return nullptr;
    note_host(t);
    auto* d = reinterpret_cast<float*>(take(std::size_t(t.numel()) * 4));
    if (!planning()) fill_vector(t, d);
    return d;
  }

  const float* floats(const std::vector<float>& v) {
    if (v.empty()) return nullptr;
    auto* d = reinterpret_cast<float*>(take(v.size() * 4));
    if (!planning())
      KVSCOPE_CUDA(cudaMemcpyAsync(d, v.data(), v.size() * 4, cudaMemcpyHostToDevice, stream_));
    return d;
  }

 private:
  void note_host(const WeightTensor& t) {
    if (!t.random) largest_ = std::max(largest_, std::size_t(t.numel()) * dtype_size(t.dtype));
  }

  // Host rows are copied through the staging buffer in chunks and converted
  // there. A float32 or bfloat16 value past fp16's range would become an
  // infinity on the device and NaN the logits: refused first, by name (as
  // the CPU's --weights f16 does).
  void fill_matrix(const WeightTensor& t, char* dst, int64_t ld, const std::string& what) {
    // A GGUF matrix kept in its file's blocks: dequantized on the host
    // (exactly as the CPU reads it), then converted as an fp32 one.
    if (t.blocks) return fill_matrix(WeightTensor::owned_f32(t.to_f32(), t.shape), dst, ld, what);
    const int64_t rows = t.rows(), cols = t.cols();
    if (!t.random && type_ == cuda::WType::F16) {
      const int64_t bad = first_beyond_half(t.dtype, t.data, std::size_t(rows * cols));
      if (bad >= 0) {
        float v = 0;
        convert_to_f32(t.dtype, t.data + std::size_t(bad) * dtype_size(t.dtype), &v, 1);
        throw Error::setting("device", what + ": weight " + std::to_string(v) + " (row " + std::to_string(bad / cols) + ", column " +
                        std::to_string(bad % cols) + ") is beyond half precision's range, in which the CUDA "
                        "backend keeps a " + dtype_name(t.dtype) + " checkpoint's matrices");
      }
    }
    if (t.random) {
      cuda::fill_random(type_, dst, rows, cols, ld, t.random_seed, t.random_id, t.random_scale, t.random_offset,
                        stream_);
      return;
    }
    const std::size_t row_bytes = std::size_t(cols) * dtype_size(t.dtype);
    const int64_t chunk = std::max<int64_t>(1, int64_t(staging_bytes_ / row_bytes));
    for (int64_t r = 0; r < rows; r += chunk) {
      const int64_t nr = std::min(chunk, rows - r);
      KVSCOPE_CUDA(cudaMemcpyAsync(staging_, t.data + std::size_t(r) * row_bytes, std::size_t(nr) * row_bytes,
                                   cudaMemcpyHostToDevice, stream_));
      cuda::convert_rows(t.dtype, staging_, nr, cols, type_, dst + std::size_t(r) * ld * 2, ld, stream_);
      KVSCOPE_CUDA(cudaStreamSynchronize(stream_));  // the staging buffer is reused next
    }
  }

  void fill_vector(const WeightTensor& t, float* dst) {
    if (t.blocks) return fill_vector(WeightTensor::owned_f32(t.to_f32(), t.shape), dst);
    const int64_t n = t.numel();
    if (t.random) {
      cuda::fill_random_f32(dst, n, t.random_seed, t.random_id, t.random_scale, t.random_offset, stream_);
      return;
    }
    const std::size_t es = dtype_size(t.dtype);
    const int64_t chunk = int64_t(staging_bytes_ / es);
    for (int64_t i = 0; i < n; i += chunk) {
      const int64_t m = std::min(chunk, n - i);
      KVSCOPE_CUDA(cudaMemcpyAsync(staging_, t.data + std::size_t(i) * es, std::size_t(m) * es,
                                   cudaMemcpyHostToDevice, stream_));
      cuda::convert_to_f32(t.dtype, staging_, m, dst + i, stream_);
      KVSCOPE_CUDA(cudaStreamSynchronize(stream_));
    }
  }

  cuda::WType type_;
  cudaStream_t stream_;
  char* base_ = nullptr;
  void* staging_ = nullptr;
  std::size_t staging_bytes_ = 0;
  std::size_t size_ = 0;
  std::size_t largest_ = 0;
};

bool tied(const ModelWeights& w) {
  return !w.lm_head.empty() && w.lm_head.shape == w.tok_emb.shape && w.lm_head.dtype == w.tok_emb.dtype &&
         w.lm_head.data == w.tok_emb.data && w.lm_head.random == w.tok_emb.random &&
         w.lm_head.random_id == w.tok_emb.random_id && w.lm_head.random_seed == w.tok_emb.random_seed;
}

// Lays out (planning) or uploads (filling) every tensor of the model.
void describe(CudaModel& m, const ModelWeights& w, Uploader& up) {
  const ModelConfig& c = m.cfg;
  m.emb_ld = round_up(c.embed_width(), 8);
  m.pos_ld = round_up(c.hidden, 8);
  m.tok_emb = up.table(w.tok_emb, m.emb_ld, "token embedding");
  m.pos_emb = c.learned_positions ? up.table(w.pos_emb, m.pos_ld, "position embedding") : nullptr;
  if (!w.project_in.empty()) {
    const WeightTensor none;
    m.project_in = up.matrix({&w.project_in}, {&none}, "project_in");
    m.project_out = up.matrix({&w.project_out}, {&none}, "project_out");
  }
  m.final_norm_w = up.vector(w.final_norm_w);
  m.final_norm_b = up.vector(w.final_norm_b);
  if (tied(w)) {
    m.lm_head = cuda::DeviceLinear{m.wtype,
                                   m.tok_emb,
                                   m.emb_ld,
                                   static_cast<int>(w.tok_emb.rows()),
                                   static_cast<int>(w.tok_emb.cols()),
                                   up.vector(w.lm_head_b)};
  } else {
    m.lm_head = up.matrix({&w.lm_head}, {&w.lm_head_b}, "lm_head");  // GPT-J's head has a bias
  }
  m.layers.assign(w.layers.size(), {});
  for (std::size_t l = 0; l < w.layers.size(); ++l) {
    const LayerWeights& L = w.layers[l];
    CudaModel::Layer& d = m.layers[l];
    d.attn_norm_w = up.vector(L.attn_norm_w);
    d.attn_norm_b = up.vector(L.attn_norm_b);
    d.mlp_norm_w = up.vector(L.mlp_norm_w);
    d.mlp_norm_b = up.vector(L.mlp_norm_b);
    d.owns_kv = !L.wk.empty();
    d.q_norm_w = up.vector(L.q_norm_w);
    d.k_norm_w = up.vector(L.k_norm_w);
    const std::string at = "layer " + std::to_string(l) + " ";
    d.qkv = up.matrix({&L.wq, &L.wk, &L.wv}, {&L.bq, &L.bk, &L.bv}, at + "q/k/v projection");
    d.o = up.matrix({&L.wo}, {&L.bo}, at + "o projection");
    if (c.gated_mlp) d.gate_up = up.matrix({&L.w_gate, &L.w_up}, {&L.b_gate, &L.b_up}, at + "gate/up projection");
    else d.gate_up = up.matrix({&L.w_up}, {&L.b_up}, at + "up projection");
    d.down = up.matrix({&L.w_down}, {&L.b_down}, at + "down projection");
  }
  m.inv_freq = up.floats(m.inv_freq_host);
  m.alibi_slopes = up.floats(c.alibi_slopes);
}

}  // namespace

std::shared_ptr<const CudaModel> CudaModel::create(const ModelConfig& cfg, const ModelWeights& w) {
  auto m = std::make_shared<CudaModel>();
  m->cfg = cfg;
  m->layout = KvLayout::from_config(cfg);
  m->wtype = cuda::weight_type_for(cfg.dtype);
  m->inv_freq_host = rope_inv_freq(cfg);
  if (cfg.head_dim > 256) throw Error("cuda", "head_dim", "the CUDA backend supports head_dim up to 256");
  // Gemma 3's head norms, output norms, GeGLU, embedding scale, per-layer
  // windows and RoPE bases have no kernels yet: refused here, by name,
  // rather than computed as another model.
  if (std::string why; !cuda_supports(cfg, &why)) throw Error("cuda", "model", why);
  if (int(w.layers.size()) != cfg.n_layers) throw Error("cuda", "layers", "weights and config disagree");
  KVSCOPE_CUDA(cudaGetDevice(&m->device));
  m->device_name = cuda::device_name();

  cudaStream_t stream = nullptr;
  KVSCOPE_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  struct StreamGuard {
    cudaStream_t s;
    ~StreamGuard() { (void)cudaStreamDestroy(s); }
  } guard{stream};

  Uploader up(m->wtype, stream);
  describe(*m, w, up);  // planning: sizes only
  const std::size_t staging = std::min(kStagingBytes, std::max<std::size_t>(up.largest_host_tensor(), 1));
  const std::size_t need = up.size() + staging;
  std::size_t free_b = 0, total_b = 0;
  cuda::memory_info(&free_b, &total_b);
  if (need > free_b)
    throw Error("cuda", "memory",
                "needs " + cuda::format_gb(double(need)) + " GB, " + cuda::format_gb(double(free_b)) +
                    " GB free (model weights in " + cuda::wtype_name(m->wtype) + ")");
  m->arena_ = DeviceBuffer(up.size(), "model weights");
  DeviceBuffer stage(staging, "weight upload staging");
  KVSCOPE_CUDA(cudaMemsetAsync(m->arena_.get(), 0, m->arena_.bytes(), stream));
  up.start_filling(static_cast<char*>(m->arena_.get()), stage.get(), stage.bytes());
  describe(*m, w, up);  // filling: the same layout, now with addresses
  KVSCOPE_CUDA(cudaStreamSynchronize(stream));
  m->weight_bytes = static_cast<int64_t>(m->arena_.bytes());
  return m;
}

}  // namespace kvscope
