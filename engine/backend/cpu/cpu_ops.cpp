#include "backend/cpu/cpu_ops.h"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <mutex>
#include <stdexcept>

#include "backend/cpu/matvec.h"
#include "backend/parallel.h"
#include "common/error.h"
#include "io/dtype.h"

namespace kvscope::cpu {

bool Linear::reads_in_place(const WeightTensor& w, WeightFormat format) {
  if (format != WeightFormat::Stored || w.empty() || w.random || !w.data) return false;
  // BF16 rows are read 16 elements at a time (matvec_blocks.cpp): a width
  // that is not a multiple of 16 is widened to fp32 instead.
  if (w.blocks) return *w.blocks != GgmlType::BF16 || w.cols() % 16 == 0;
  // An fp32 matrix that something keeps alive (a file's mapping, or a
  // loader's own buffer) is read where it lies rather than copied: a copy of
  // a mapped one would double its resident memory (the mapping's pages the
  // copy touched stay resident too).
  return w.dtype == DType::F32 && w.keepalive && reinterpret_cast<std::uintptr_t>(w.data) % alignof(float) == 0;
}

Linear Linear::from(const WeightTensor& w, const WeightTensor& b, WeightFormat format, const std::string& name) {
  Linear L;
  if (w.empty()) return L;
  L.out = static_cast<int>(w.rows());
  L.in = static_cast<int>(w.cols());
  if (!b.empty()) L.b = b.to_f32();
  if (reads_in_place(w, format)) {
    L.stored = w;  // shares the mapping (or the reordered copy) it points into
    return L;
  }
  L.w = w.to_f32();
  if (format == WeightFormat::F16) {
    if (const int64_t bad = first_beyond_half(DType::F32, L.w.data(), L.w.size()); bad >= 0)
      throw Error::setting("weights", name + ": weight " + std::to_string(L.w[bad]) + " is beyond half precision's range (f16)");
    L.w16.resize(L.w.size());
    for (std::size_t i = 0; i < L.w.size(); ++i) L.w16[i] = f32_to_f16(L.w[i]);
    std::vector<float>().swap(L.w);
  }
  return L;
}

const float* Linear::fp32() const {
  if (!w.empty()) return w.data();
  if (!stored.empty() && !stored.blocks) return reinterpret_cast<const float*>(stored.data);
  return nullptr;
}

const uint16_t* Linear::halves() const {
  if (!w16.empty()) return w16.data();
  if (!stored.empty() && stored.blocks == GgmlType::F16) return reinterpret_cast<const uint16_t*>(stored.data);
  return nullptr;
}

void Linear::rows_to_f32(int r0, int r1, float* dst) const {
  const int64_t n = int64_t(r1 - r0) * in;
  if (const float* f = fp32()) {
    std::memcpy(dst, f + int64_t(r0) * in, sizeof(float) * std::size_t(n));
  } else if (const uint16_t* h = halves()) {
    widen_halves(h + int64_t(r0) * in, n, dst);
  } else {
    // Whole rows of blocks: the same values the whole matrix dequantizes to.
    dequantize_blocks(*stored.blocks, stored.data + std::size_t(r0) * stored.row_bytes(), n, dst);
  }
}

void Linear::columns_to_f32(int c0, int c1, float* dst) const {
  const int width = c1 - c0;
  if (const float* f = fp32()) {
    for (int o = 0; o < out; ++o)
      std::memcpy(dst + int64_t(o) * width, f + int64_t(o) * in + c0, sizeof(float) * width);
    return;
  }
  if (const uint16_t* h = halves()) {
    for (int o = 0; o < out; ++o) widen_halves(h + int64_t(o) * in + c0, width, dst + int64_t(o) * width);
    return;
  }
  // The whole blocks around [c0, c1) of each row, then the columns asked for.
  // (BF16 is read 16 elements at a time, its rows whole multiples of 16: Linear::from.)
  const GgmlType type = *stored.blocks;
  const int per = type == GgmlType::BF16 ? 16 : ggml_block_elements(type);
  const int bytes = type == GgmlType::BF16 ? 32 : ggml_block_bytes(type);
  const int b0 = c0 / per, b1 = (c1 + per - 1) / per;
  std::vector<float> blocks(std::size_t(b1 - b0) * per);
  for (int o = 0; o < out; ++o) {
    dequantize_blocks(type, stored.data + std::size_t(o) * stored.row_bytes() + std::size_t(b0) * bytes,
                      int64_t(b1 - b0) * per, blocks.data());
    std::memcpy(dst + int64_t(o) * width, blocks.data() + (c0 - b0 * per), sizeof(float) * width);
  }
}

namespace {

// Every kernel's full-width tile of output features.
constexpr int kTile = 64;

// A prompt's product calls sgemm on slices of its band: whole multiples of
// 64 rows holding at most this many weights where a row is narrower than
// 2048, else 64 rows (SmolLM2's 576 inputs: 192 rows, 432 KiB of fp32). A
// stored or half matrix is widened to fp32 one slice at a time, so its copy
// stays that small: a band's worth at once (2 MB a thread, three threads on
// two cores) was 5.4 MB of a SmolLM2 Q4_1 run's 23.5 MB heap peak
// (heaptrack). An fp32 matrix, read in place, is cut into the same slices,
// so all forms call OpenBLAS with the same shapes and give the same bits:
// OpenBLAS picks its kernel, and with it the order of the additions, by
// the shape (small prompts take its small-matrix kernels; MatvecBlocks
// tests it). Prefill, SmolLM2 on a Zen 4, 2 threads, three interleaved
// runs, whole bands against slices (tokens/s): F32 256 tokens 550-584
// against 560-570, Q4_1 572-599 against 557-565; peak of a Q4_1 generate
// 125.2 -> 120.6 MB. (Slices of 64K weights read 413-553 at F32.)
constexpr int64_t kWidenedWeights = 128 * 1024;

// The features of one OpenBLAS call of a prompt's product: whole multiples
// of 64 holding about kWidenedWeights weights.
int slice_width(const Linear& W) { return std::max(kTile, int(kWidenedWeights / std::max(W.in, 1)) / kTile * kTile); }

// Features [s0, s1) of x W^T, without the bias, in one OpenBLAS call into y
// (row stride ldy): an fp32 matrix read in place, any other widened into
// `widened` first, exactly as on load (the copy costs little next to the
// product).
void slice_product(const float* x, int n, const Linear& W, int s0, int s1, float* y, int64_t ldy,
                   std::vector<float>& widened) {
  const float* w;
  if (const float* in_place = W.fp32()) {
    w = in_place + int64_t(s0) * W.in;
  } else {
    widened.resize(size_t(s1 - s0) * W.in);
    W.rows_to_f32(s0, s1, widened.data());
    w = widened.data();
  }
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, s1 - s0, W.in, 1.0f, x, W.in, w, W.in, 0.0f, y, ldy);
}

// y[i][j - c0] += b[j] for features [c0, c1), y's rows ldy apart.
void add_bias(const Linear& W, int n, int c0, int c1, float* y, int64_t ldy) {
  if (W.b.empty()) return;
  for (int i = 0; i < n; ++i)
    for (int j = c0; j < c1; ++j) y[int64_t(i) * ldy + (j - c0)] += W.b[j];
}

// The output features [r0, r1) of y = x W^T (+ b): one or two rows through
// kvscope's matvec, more in one OpenBLAS call a slice.
void linear_rows(const float* x, int n, const Linear& W, float* y, int r0, int r1) {
  if (n <= kMatvecMaxRows) {
    if (const float* f = W.fp32()) matvec_rows(x, n, W.in, f, r0, r1, y, W.out);
    else if (const uint16_t* h = W.halves()) matvec_rows_f16(x, n, W.in, h, r0, r1, y, W.out);
    else matvec_rows_blocks(*W.stored.blocks, x, n, W.in, W.stored.data, r0, r1, y, W.out);
  } else {
    const int slice = slice_width(W);
    thread_local std::vector<float> widened;
    for (int s0 = r0; s0 < r1; s0 += slice)
      slice_product(x, n, W, s0, std::min(r1, s0 + slice), y + s0, W.out, widened);
    // Returned, not kept for the next prompt: decode never widens, and a
    // thread's slice held through decode was 0.5 MB of resident memory.
    std::vector<float>().swap(widened);
  }
  add_bias(W, n, r0, r1, y + r0, W.out);
}

// A prompt's gated features [r0, r1): each slice's gate product into y,
// its up product beside it, then the activation, so the up product is
// held one slice at a time. The same calls, and bias additions, as
// linear_rows makes for each matrix.
void gated_rows(const float* x, int n, const Linear& gate, const Linear& up, Activation act, float* y, int r0, int r1) {
  const int slice = slice_width(gate);
  thread_local std::vector<float> widened, up_slice;
  for (int s0 = r0; s0 < r1; s0 += slice) {
    const int s1 = std::min(r1, s0 + slice), w = s1 - s0;
    slice_product(x, n, gate, s0, s1, y + s0, gate.out, widened);
    add_bias(gate, n, s0, s1, y + s0, gate.out);
    up_slice.resize(size_t(n) * w);
    slice_product(x, n, up, s0, s1, up_slice.data(), w, widened);
    add_bias(up, n, s0, s1, up_slice.data(), w);
    for (int i = 0; i < n; ++i)
      gated_activation(act, y + int64_t(i) * gate.out + s0, up_slice.data() + size_t(i) * w, w);
  }
  std::vector<float>().swap(widened);
  std::vector<float>().swap(up_slice);
}

// Bands are whole multiples of 64 features (every kernel's full-width
// tile). A band should be large: each OpenBLAS call restarts its kernel
// (measured on a Zen 3: a 50304 x 768 matrix-vector product in bands of 64
// features took 12% longer than in one call, in bands of 384 4% longer), so
// a matrix product (prefill), which packs its input once per call, takes
// bands of about this many weights (features x inputs). A matrix-vector
// product (decode) takes bands of about kVectorBandBytes of its weights as
// stored: each band starts its streams from memory cold (matvec_loops.inc
// asks for lines two rows ahead, none before the band's first rows), so a
// band of blocks holds as many bytes as an fp32 one, not as many weights.
// (Measured on a Zen 4, an 8B Q4_K_M decode on 2 threads: 268-299 ms a
// token in bands of 128K weights, 72 KB of Q4_K; 247-261 ms in bands of
// 512K or 2M weights.) A small product still gets at least kMinBands bands,
// so that a few threads share it. Decode and prefill speed on the bundled
// model and pythia-160m's shape were within noise of the old
// one-band-per-thread cut (bench/README.md).
constexpr int64_t kVectorBandBytes = 512 * 1024;
constexpr int64_t kMatrixBandWeights = 512 * 1024;
constexpr int kMinBands = 4;

// Below this many multiply-adds a product is not worth handing out; it
// still runs band by band, so its bits do not depend on the choice.
constexpr int64_t kParallelMacs = 8192;

int round_up_to_tile(int64_t v) { return static_cast<int>((v + kTile - 1) / kTile * kTile); }

// The bytes of one row of W as a decode product reads them.
int64_t row_bytes(const Linear& W) {
  if (W.fp32()) return int64_t(W.in) * 4;
  if (W.halves()) return int64_t(W.in) * 2;
  return int64_t(W.stored.row_bytes());
}

}  // namespace

LinearBands linear_bands(const Linear& W, int n) {
  LinearBands b;
  b.out = W.out;
  const int64_t in = std::max(W.in, 1);
  const int per_band = n <= kMatvecMaxRows ? round_up_to_tile(kVectorBandBytes / std::max<int64_t>(row_bytes(W), 1))
                                           : round_up_to_tile(kMatrixBandWeights / in);
  b.width = std::max(kTile, std::min(per_band, round_up_to_tile(W.out / kMinBands)));
  b.count = std::max(1, (W.out + b.width - 1) / b.width);
  return b;
}

void linear_band(const float* x, int n, const Linear& W, float* y, const LinearBands& bands, int b) {
  linear_rows(x, n, W, y, bands.begin(b), bands.end(b));
}

void use_single_threaded_blas() {
  static std::once_flag once;
  std::call_once(once, [] { openblas_set_num_threads(1); });
}

void linear(const float* x, int n, const Linear& W, float* y) {
  use_single_threaded_blas();
  const LinearBands bands = linear_bands(W, n);
  if (bands.count == 1 || int64_t(n) * W.out * W.in < kParallelMacs) {
    for (int b = 0; b < bands.count; ++b) linear_band(x, n, W, y, bands, b);
    return;
  }
  parallel_for(bands.count, [&](int b) { linear_band(x, n, W, y, bands, b); });
}

void gated_linear(const float* x, int n, const Linear& gate, const Linear& up, Activation act, float* y) {
  use_single_threaded_blas();
  if (gate.in != up.in || gate.out != up.out)
    throw std::logic_error("gated_linear: gate " + std::to_string(gate.out) + " x " + std::to_string(gate.in) +
                           " and up " + std::to_string(up.out) + " x " + std::to_string(up.in) + " differ");
  if (n > kMatvecMaxRows) {
    // Both matrices are cut into the same bands and slices (by the shape).
    const LinearBands bands = linear_bands(gate, n);
    if (bands.count == 1 || int64_t(n) * gate.out * gate.in < kParallelMacs) {
      for (int b = 0; b < bands.count; ++b) gated_rows(x, n, gate, up, act, y, bands.begin(b), bands.end(b));
      return;
    }
    parallel_for(bands.count, [&](int b) { gated_rows(x, n, gate, up, act, y, bands.begin(b), bands.end(b)); });
    return;
  }
  // A decode step's rows: the up product whole (two rows of it at most).
  thread_local std::vector<float> up_rows;
  up_rows.resize(size_t(n) * up.out);
  linear(x, n, up, up_rows.data());
  linear(x, n, gate, y);
  gated_activation(act, y, up_rows.data(), int64_t(n) * gate.out);
}

void layer_norm(const float* x, int n, int d, const float* w, const float* b, double eps, float* y) {
  for (int i = 0; i < n; ++i) {
    const float* r = x + static_cast<int64_t>(i) * d;
    float* o = y + static_cast<int64_t>(i) * d;
    double mean = 0;
    for (int j = 0; j < d; ++j) mean += r[j];
    mean /= d;
    double var = 0;
    for (int j = 0; j < d; ++j) var += (r[j] - mean) * (r[j] - mean);
    var /= d;
    const float inv = static_cast<float>(1.0 / std::sqrt(var + eps));
    const float m = static_cast<float>(mean);
    for (int j = 0; j < d; ++j) o[j] = (r[j] - m) * inv * w[j] + (b ? b[j] : 0.0f);
  }
}

void rms_norm(const float* x, int n, int d, const float* w, double eps, float* y) {
  for (int i = 0; i < n; ++i) {
    const float* r = x + static_cast<int64_t>(i) * d;
    float* o = y + static_cast<int64_t>(i) * d;
    double ss = 0;
    for (int j = 0; j < d; ++j) ss += static_cast<double>(r[j]) * r[j];
    const float inv = static_cast<float>(1.0 / std::sqrt(ss / d + eps));
    for (int j = 0; j < d; ++j) o[j] = w[j] * (r[j] * inv);
  }
}

void gelu_tanh(float* x, int64_t n) {
  const float k = std::sqrt(2.0f / static_cast<float>(M_PI));
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i];
    x[i] = 0.5f * v * (1.0f + std::tanh(k * (v + 0.044715f * v * v * v)));
  }
}

void gelu_erf(float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] = 0.5f * x[i] * (1.0f + std::erf(x[i] * static_cast<float>(M_SQRT1_2)));
}

void relu(float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

void silu(float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] = x[i] / (1.0f + std::exp(-x[i]));
}

void silu_mul(float* gate, const float* up, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float g = gate[i];
    gate[i] = g / (1.0f + std::exp(-g)) * up[i];
  }
}

void gated_activation(Activation act, float* gate, const float* up, int64_t n) {
  if (act == Activation::Silu) {
    silu_mul(gate, up, n);
    return;
  }
  // Gemma's GeGLU: act(gate) * up.
  if (act == Activation::GeluTanh) gelu_tanh(gate, n);
  else gelu_erf(gate, n);
  for (int64_t i = 0; i < n; ++i) gate[i] *= up[i];
}

}  // namespace kvscope::cpu
