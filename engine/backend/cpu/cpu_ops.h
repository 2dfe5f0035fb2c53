// The CPU reference's building blocks: plain fp32 loops a reader can check
// against the Hugging Face code line by line, and OpenBLAS for the products.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "backend/cpu/simd_path.h"
#include "backend/weight_format.h"
#include "model/config.h"
#include "model/weights.h"

namespace kvscope::cpu {

// A linear layer: y = x W^T + b, W stored [out, in] in one of three ways:
// fp32; IEEE half (--weights f16: half the bytes a decode step reads; each
// product computed in fp32 on the widened weights, so it equals the fp32
// product of the weights rounded to half); or a GGUF file's own rows
// (--weights stored: blocks of a quantized type, F16 or BF16, read in place
// from the mapping and dequantized inside the products exactly as on load,
// so every result equals the fp32 one of the dequantized matrix; an F32
// matrix is read in place too). The bias stays fp32.
struct Linear {
  std::vector<float> w;       // fp32 weights, or empty
  std::vector<uint16_t> w16;  // half weights, or empty
  WeightTensor stored;        // a matrix in its file's rows (blocks set, or fp32 in the mapping), or empty
  std::vector<float> b;       // empty: no bias
  int out = 0, in = 0;
  bool empty() const { return w.empty() && w16.empty() && stored.empty(); }
  // fp32 weights: the layer's own, or an F32 matrix's in its file.
  const float* fp32() const;
  // Half weights to widen: --weights f16's, or a GGUF F16 matrix's in place.
  const uint16_t* halves() const;
  bool half() const { return halves() != nullptr; }
  // Rows [r0, r1) as fp32, into dst ([r1 - r0][in]): the values every
  // product of this layer multiplies with.
  void rows_to_f32(int r0, int r1, float* dst) const;
  // Columns [c0, c1) of every row as fp32, into dst ([out][c1 - c0]): for
  // a GGUF matrix only the blocks that hold them are dequantized.
  void columns_to_f32(int c0, int c1, float* dst) const;
  // Whether from() keeps `w` where it lies (in `stored`) under `format`.
  static bool reads_in_place(const WeightTensor& w, WeightFormat format);
  // `format`: f32 widens every matrix; f16 rounds to half (a weight beyond
  // half's range throws kvscope::Error naming `name`); stored keeps what
  // reads_in_place() says where it lies and widens any other matrix to fp32.
  static Linear from(const WeightTensor& w, const WeightTensor& b, WeightFormat format = WeightFormat::F32,
                     const std::string& name = "");
};

// OpenBLAS's own threads off: the backend's pool (parallel.h) splits the
// work, and OpenBLAS runs inside each part. Called once by linear() and
// the backend; idempotent.
void use_single_threaded_blas();

// How linear() cuts a product into OpenBLAS calls: bands of a fixed number
// of output features, from the shape alone. OpenBLAS's kernels (Haswell and
// Zen ones among them) may sum a feature's dot product in another order
// depending on where it falls in the matrix they are given, so the cut must
// never depend on the thread count: the pool only decides who runs which
// band, and 1 or 64 threads give the same bits.
struct LinearBands {
  int count = 0;  // bands; the last one may be narrower
  int width = 0;  // features per band
  int out = 0;
  int begin(int b) const { return b * width; }
  int end(int b) const { return b + 1 == count ? out : (b + 1) * width; }
};
LinearBands linear_bands(const Linear& W, int n);

// y[n][out] = x[n][in] W^T (+ b), band by band (linear_bands) across the
// pool's threads: one or two rows through kvscope's matvec (cpu/matvec.h:
// each row's bits the same alone or paired), more through OpenBLAS sgemm.
void linear(const float* x, int n, const Linear& W, float* y);
// Band b of linear() on the calling thread, computed exactly as linear()
// computes it.
void linear_band(const float* x, int n, const Linear& W, float* y, const LinearBands& bands, int b);
// A gated MLP's hidden rows, y[n][out] = act(x gate^T + b) * (x up^T + b)
// (gated_activation): each product computed exactly as linear() computes
// it, so the bits are linear()'s. A prompt's up product is held one slice
// of features at a time beside the gate's rows (an n x out buffer less:
// 6 KB a token for SmolLM2, 56 KB for a Llama-3-8B shape).
void gated_linear(const float* x, int n, const Linear& gate, const Linear& up, Activation act, float* y);
void layer_norm(const float* x, int n, int d, const float* w, const float* b, double eps, float* y);
void rms_norm(const float* x, int n, int d, const float* w, double eps, float* y);
void gelu_tanh(float* x, int64_t n);
void gelu_erf(float* x, int64_t n);
void silu(float* x, int64_t n);
void relu(float* x, int64_t n);  // OPT: max(x, 0)
// SwiGLU gate: gate[i] = silu(gate[i]) * up[i].
void silu_mul(float* gate, const float* up, int64_t n);
// A gated MLP's activation, element by element: silu_mul for SiLU, else
// Gemma's GeGLU, gate[i] = gelu(gate[i]) * up[i]: the tanh form for
// GeluTanh, the erf form for any other (the gated models kvscope reads use
// SiLU, GeluTanh or GeluErf).
void gated_activation(Activation act, float* gate, const float* up, int64_t n);
// In-place softmax of one row; entries equal to -inf become exactly 0 (and
// entries below e^-87 of the row's largest, subnormal in float, 0 too).
// kvscope's own exponential, the same bits on every SIMD path
// (cpu/softmax_row.cpp); `path` picks one, for the tests.
void softmax_row(float* x, int n);
void softmax_row(SimdPath path, float* x, int n);

}  // namespace kvscope::cpu
