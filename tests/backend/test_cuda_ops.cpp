// The CUDA ops one by one against the CPU reference, on random inputs of
// several shapes, the way ggml's test-backend-ops checks a backend. Inputs
// are rounded to fp16/bf16 on the host first where the device stores them
// so, so each comparison measures the op itself. Tolerances (and why):
//   random fill, conversions, embedding, V rows, positions: bit-identical.
//   norms, activations: within a few fp32 ulps (same operation order; only
//     the double reduction order and tanhf/erff/expf ulps differ).
//   linear: NMSE < 1e-10 for the GEMV (fp32 activations), < 1e-9 for the
//     cuBLAS path (activations split hi+lo keep ~2^-17 relative precision).
//   RoPE: 2e-6 of the largest value in fp32; keys within one 16-bit ulp.
//   attention: logits within 2e-6 of the largest |logit|, probabilities
//     within 2e-6, outputs NMSE < 1e-10; masks exactly where the CPU has them.
#ifdef KVSCOPE_HAVE_CUDA

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>

#include "backend/cpu/cpu_ops.h"
#include "io/dtype.h"
#include "kv/row_moves.h"
#include "model/rope.h"
#include "model/weights.h"
#include "test_cuda_util.h"

namespace kvscope {
namespace {

using cuda::DeviceBuffer;
using cuda::WType;

const WType kTypes[] = {WType::F16, WType::BF16};

float max_abs(std::span<const float> v) {
  float m = 0;
  for (float x : v)
    if (std::isfinite(x)) m = std::max(m, std::abs(x));
  return m;
}

// The backend's K/V layout (cuda_ops.h, KvCache): segment s in a region of
// `region` rows from row start[s]. Starts that differ per segment and rows
// outside every segment holding NaN make a kernel that addresses rows by
// cap instead of region, or forgets the start, fail its comparison.
constexpr int kRegionSlack = 40;
std::vector<int> test_starts(int S) {
  std::vector<int> st(S);
  for (int s = 0; s < S; ++s) st[s] = (13 * s + 5) % (kRegionSlack + 1);
  return st;
}
// [segment][cap][hd] rows placed in their regions.
std::vector<float> in_regions(const std::vector<float>& rows, int S, int cap, int hd, const std::vector<int>& start) {
  const int region = cap + kRegionSlack;
  std::vector<float> out(std::size_t(S) * region * hd, std::numeric_limits<float>::quiet_NaN());
  for (int s = 0; s < S; ++s)
    std::copy(rows.begin() + std::size_t(s) * cap * hd, rows.begin() + std::size_t(s + 1) * cap * hd,
              out.begin() + (std::size_t(s) * region + start[s]) * hd);
  return out;
}

// ---- weights ------------------------------------------------------------------

TEST(CudaOps, RandomFillIsBitIdenticalToWeightTensorToF32) {
  KVSCOPE_REQUIRE_CUDA();
  struct Case {
    int64_t rows, cols;
    uint64_t seed;
    uint32_t id;
    float scale, offset;
  };
  const Case cases[] = {{1, 1, 0, 0, 0.02f, 0.f},       {3, 5, 7, 1, 0.0346f, 0.f}, {17, 33, 1, 5, 0.5f, 0.f},
                        {64, 4096, 123456789, 77, 0.0346f, 0.f}, {2, 300, 9, 3, 0.f, 1.f},  {5, 8, 0xffffffffffull, 2, 3.f, -1.f}};
  for (WType t : kTypes) {
    for (const Case& c : cases) {
      const int64_t ld = cuda::round_up(c.cols, 8);
      const WeightTensor w = WeightTensor::random_uniform({c.rows, c.cols}, c.seed, c.id, c.scale, c.offset);
      const std::vector<float> want = w.to_f32();
      DeviceBuffer d(std::size_t(c.rows * ld) * 2);
      d.zero();
      cuda::fill_random(t, d.get(), c.rows, c.cols, ld, c.seed, c.id, c.scale, c.offset, nullptr);
      const auto got = d.to_vector<uint16_t>(std::size_t(c.rows * ld));
      int bad = 0;
      for (int64_t r = 0; r < c.rows; ++r)
        for (int64_t k = 0; k < ld; ++k) {
          const uint16_t expect = k < c.cols ? cuda::to_bits(t, want[r * c.cols + k]) : uint16_t(0);
          bad += got[r * ld + k] != expect;
        }
      EXPECT_EQ(bad, 0) << cuda::wtype_name(t) << " " << c.rows << "x" << c.cols << " id " << c.id;

      DeviceBuffer f(std::size_t(c.rows * c.cols) * 4);
      cuda::fill_random_f32(f.as<float>(), c.rows * c.cols, c.seed, c.id, c.scale, c.offset, nullptr);
      const auto gf = f.to_vector<float>(std::size_t(c.rows * c.cols));
      EXPECT_EQ(std::memcmp(gf.data(), want.data(), want.size() * 4), 0) << "fp32 fill, id " << c.id;
    }
  }
}

TEST(CudaOps, ConvertRowsMatchesHostConversions) {
  KVSCOPE_REQUIRE_CUDA();
  // Values across the ranges that matter: normal, tiny (fp16 subnormals), large.
  std::vector<float> v = test::random_floats(3 * 37, 1, -4.f, 4.f);
  v[0] = 1e-6f;
  v[1] = -3e-8f;
  v[2] = 60000.f;
  v[3] = 0.f;
  v[4] = 1.00048828125f;  // an fp16 tie: rounds to even
  const int64_t rows = 3, cols = 37, ld = 40;
  for (DType src : {DType::F32, DType::F16, DType::BF16}) {
    // The source bytes as a checkpoint would hold them.
    std::vector<uint8_t> bytes(v.size() * dtype_size(src));
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (src == DType::F32) std::memcpy(&bytes[i * 4], &v[i], 4);
      else {
        const uint16_t b = src == DType::F16 ? f32_to_f16(v[i]) : f32_to_bf16(v[i]);
        std::memcpy(&bytes[i * 2], &b, 2);
      }
    }
    std::vector<float> as_f32(v.size());
    convert_to_f32(src, bytes.data(), as_f32.data(), v.size());
    DeviceBuffer s = DeviceBuffer::from(bytes);
    for (WType t : kTypes) {
      DeviceBuffer d(std::size_t(rows * ld) * 2);
      cuda::convert_rows(src, s.get(), rows, cols, t, d.get(), ld, nullptr);
      const auto got = d.to_vector<uint16_t>(std::size_t(rows * ld));
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c)
          ASSERT_EQ(got[r * ld + c], cuda::to_bits(t, as_f32[r * cols + c]))
              << dtype_name(src) << " -> " << cuda::wtype_name(t) << " at " << r << "," << c;
    }
    DeviceBuffer f(v.size() * 4);
    cuda::convert_to_f32(src, s.get(), int64_t(v.size()), f.as<float>(), nullptr);
    const auto gf = f.to_vector<float>(v.size());
    EXPECT_EQ(std::memcmp(gf.data(), as_f32.data(), v.size() * 4), 0) << dtype_name(src);
  }
}

// ---- embedding, norms, activations ----------------------------------------------

TEST(CudaOps, EmbeddingWithAndWithoutLearnedPositions) {
  KVSCOPE_REQUIRE_CUDA();
  for (WType t : kTypes) {
    const int V = 50, P = 20, d = 45, n = 7, pos0 = 5;
    const int64_t ld = cuda::round_up(d, 8);
    std::vector<float> tok(V * ld, 0.f), pos(P * ld, 0.f);
    const auto rt = test::random_floats(V * d, 2), rp = test::random_floats(P * d, 3);
    for (int r = 0; r < V; ++r)
      for (int c = 0; c < d; ++c) tok[r * ld + c] = rt[r * d + c];
    for (int r = 0; r < P; ++r)
      for (int c = 0; c < d; ++c) pos[r * ld + c] = rp[r * d + c];
    DeviceBuffer dt = DeviceBuffer::from(test::to_device_bits(t, tok));
    DeviceBuffer dp = DeviceBuffer::from(test::to_device_bits(t, pos));
    const std::vector<int> ids = {0, 49, 3, 3, 17, 25, 1};
    DeviceBuffer di = DeviceBuffer::from(ids);
    DeviceBuffer x(std::size_t(n) * d * 4);
    for (bool learned : {false, true}) {
      cuda::embed(t, dt.get(), ld, learned ? dp.get() : nullptr, ld, di.as<int>(), n, d, pos0, x.as<float>(), nullptr);
      const auto got = x.to_vector<float>(std::size_t(n) * d);
      for (int i = 0; i < n; ++i)
        for (int c = 0; c < d; ++c) {
          float want = cuda::round_to(t, tok[ids[i] * ld + c]);
          if (learned) want += cuda::round_to(t, pos[(pos0 + i) * ld + c]);
          ASSERT_EQ(got[i * d + c], want) << "token " << i << " dim " << c;
        }
    }
    // OPT's narrower embedding: the positions are added after the projection,
    // onto what is there (add_positions), the same sum.
    cuda::embed(t, dt.get(), ld, nullptr, 0, di.as<int>(), n, d, 0, x.as<float>(), nullptr);
    cuda::add_positions(t, dp.get(), ld, n, d, pos0, x.as<float>(), nullptr);
    const auto got = x.to_vector<float>(std::size_t(n) * d);
    for (int i = 0; i < n; ++i)
      for (int c = 0; c < d; ++c)
        ASSERT_EQ(got[i * d + c], cuda::round_to(t, tok[ids[i] * ld + c]) + cuda::round_to(t, pos[(pos0 + i) * ld + c]))
            << "token " << i << " dim " << c;
  }
}

TEST(CudaOps, LayerNormAndRmsNormMatchCpu) {
  KVSCOPE_REQUIRE_CUDA();
  for (int d : {1, 48, 769, 4096}) {
    for (int n : {1, 3}) {
      auto x = test::random_floats(std::size_t(n) * d, 10 + d, -3.f, 5.f);
      const auto w = test::random_floats(d, 11 + d, 0.5f, 1.5f);
      const auto b = test::random_floats(d, 12 + d);
      DeviceBuffer dx = DeviceBuffer::from(x), dw = DeviceBuffer::from(w), db = DeviceBuffer::from(b);
      DeviceBuffer dy(std::size_t(n) * d * 4);
      std::vector<float> want(std::size_t(n) * d);
      for (int variant = 0; variant < 3; ++variant) {
        const double eps = 1e-5;
        if (variant == 0) {
          cpu::layer_norm(x.data(), n, d, w.data(), b.data(), eps, want.data());
          cuda::layer_norm(dx.as<float>(), n, d, dw.as<float>(), db.as<float>(), eps, dy.as<float>(), nullptr);
        } else if (variant == 1) {
          cpu::layer_norm(x.data(), n, d, w.data(), nullptr, eps, want.data());
          cuda::layer_norm(dx.as<float>(), n, d, dw.as<float>(), nullptr, eps, dy.as<float>(), nullptr);
        } else {
          cpu::rms_norm(x.data(), n, d, w.data(), 1e-6, want.data());
          cuda::rms_norm(dx.as<float>(), n, d, dw.as<float>(), 1e-6, dy.as<float>(), nullptr);
        }
        const auto got = dy.to_vector<float>(std::size_t(n) * d);
        EXPECT_LE(test::max_abs_error(got, want), 1e-6 * std::max(1.0f, max_abs(want)))
            << "variant " << variant << " d " << d << " n " << n;
      }
    }
  }
}

TEST(CudaOps, ActivationsMatchCpu) {
  KVSCOPE_REQUIRE_CUDA();
  const int n = 3, ff = 1001;
  const auto x = test::random_floats(std::size_t(n) * ff * 2, 21, -9.f, 9.f);
  auto check = [&](const char* what, const std::vector<float>& got, const std::vector<float>& want) {
    double worst = 0;
    for (std::size_t i = 0; i < want.size(); ++i)
      worst = std::max(worst, std::abs(double(got[i]) - want[i]) / std::max(1.0, std::abs(double(want[i]))));
    EXPECT_LT(worst, 2e-6) << what;  // a few fp32 ulps (tanhf / erff / expf)
  };
  const int64_t m = int64_t(n) * ff;
  for (int which = 0; which < 3; ++which) {
    std::vector<float> want(x.begin(), x.begin() + m);
    DeviceBuffer d = DeviceBuffer::from(want);
    if (which == 0) {
      cpu::gelu_tanh(want.data(), m);
      cuda::gelu_tanh(d.as<float>(), m, nullptr);
    } else if (which == 1) {
      cpu::gelu_erf(want.data(), m);
      cuda::gelu_erf(d.as<float>(), m, nullptr);
    } else {
      cpu::silu(want.data(), m);
      cuda::silu(d.as<float>(), m, nullptr);
    }
    check(which == 0 ? "gelu_tanh" : which == 1 ? "gelu_erf" : "silu", d.to_vector<float>(std::size_t(m)), want);
  }
  // SwiGLU on the fused [gate | up] rows.
  std::vector<float> gate(m), up(m);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < ff; ++j) {
      gate[i * ff + j] = x[(i * 2) * ff + j];
      up[i * ff + j] = x[(i * 2 + 1) * ff + j];
    }
  cpu::silu_mul(gate.data(), up.data(), m);
  DeviceBuffer gu = DeviceBuffer::from(x), act(std::size_t(m) * 4);
  cuda::silu_mul(gu.as<float>(), n, ff, act.as<float>(), nullptr);
  check("silu_mul", act.to_vector<float>(std::size_t(m)), gate);
}

// ---- linear ---------------------------------------------------------------------

TEST(CudaOps, LinearMatchesCpuForGemvAndGemm) {
  KVSCOPE_REQUIRE_CUDA();
  struct Case {
    int n, in, out;
  };
  const Case cases[] = {{1, 48, 144}, {1, 771, 33}, {1, 4096, 11}, {1, 8, 1},   {1, 13, 5},     {2, 48, 96},
                        {5, 771, 257}, {33, 1024, 300}, {64, 13, 7}, {3, 4096, 64}, {1, 11008, 40}};
  cuda::Blas blas;
  for (WType t : kTypes) {
    for (const Case& c : cases) {
      for (int variant = 0; variant < 4; ++variant) {
        const bool bias = variant & 1, accumulate = variant & 2;
        const int64_t ld = cuda::round_up(c.in, 8);
        const auto wf = test::rounded(t, test::random_floats(std::size_t(c.out) * c.in, c.in * 7 + c.out, -0.5f, 0.5f));
        std::vector<float> wpad(std::size_t(c.out) * ld, 0.f);
        for (int r = 0; r < c.out; ++r)
          for (int k = 0; k < c.in; ++k) wpad[r * ld + k] = wf[std::size_t(r) * c.in + k];
        const auto b = test::random_floats(c.out, 5 + c.out);
        const auto x = test::random_floats(std::size_t(c.n) * c.in + 1, 9 + c.n, -2.f, 2.f);
        const auto y0 = test::random_floats(std::size_t(c.n) * c.out, 13, -1.f, 1.f);
        cpu::Linear L;
        L.w = wf;
        L.out = c.out;
        L.in = c.in;
        if (bias) L.b = b;
        std::vector<float> want(std::size_t(c.n) * c.out);
        cpu::linear(x.data(), c.n, L, want.data());
        if (accumulate)
          for (std::size_t i = 0; i < want.size(); ++i) want[i] = y0[i] + want[i];

        DeviceBuffer dw = DeviceBuffer::from(test::to_device_bits(t, wpad));
        DeviceBuffer db = DeviceBuffer::from(b), dx = DeviceBuffer::from(x), dy = DeviceBuffer::from(y0);
        cuda::DeviceLinear W{t, dw.get(), ld, c.out, c.in, bias ? db.as<float>() : nullptr};
        DeviceBuffer scratch(cuda::linear_scratch_bytes(c.n, c.in));
        const cuda::BlasHandle h = blas.get();
        cuda::linear(W, dx.as<float>(), c.n, dy.as<float>(), accumulate, scratch.get(), scratch.bytes(), h, nullptr);
        const auto got = dy.to_vector<float>(want.size());
        const double e = test::nmse(got, want);
        EXPECT_LT(e, c.n == 1 ? 1e-10 : 1e-9) << cuda::wtype_name(t) << " n " << c.n << " in " << c.in << " out "
                                              << c.out << " bias " << bias << " acc " << accumulate;
        if (c.n == 1) {  // a misaligned x takes the scalar path: same answer
          DeviceBuffer dy2 = DeviceBuffer::from(y0);
          cuda::linear(W, dx.as<float>() + 1, 1, dy2.as<float>(), accumulate, nullptr, 0, h, nullptr);
          std::vector<float> want2(c.out);
          cpu::linear(x.data() + 1, 1, L, want2.data());
          if (accumulate)
            for (int i = 0; i < c.out; ++i) want2[i] = y0[i] + want2[i];
          EXPECT_LT(test::nmse(dy2.to_vector<float>(c.out), want2), 1e-10) << "misaligned x, in " << c.in;
        }
      }
    }
  }
}

// ---- RoPE and the KV append -----------------------------------------------------

struct RopeCase {
  int hd, rotary, n_heads, n_kv, n;
  bool compacted;
};

TEST(CudaOps, RopeAndKvAppendMatchCpu) {
  KVSCOPE_REQUIRE_CUDA();
  const RopeCase cases[] = {{64, 64, 4, 2, 5, false}, {80, 80, 2, 1, 1, true},  {128, 128, 8, 2, 9, true},
                            {12, 12, 4, 1, 3, false}, {64, 16, 4, 4, 4, false}, {128, 32, 2, 2, 2, true},
                            {48, 0, 2, 2, 3, false}};
  for (WType t : kTypes) {
    for (const RopeCase& c : cases) {
      ModelConfig cfg;
      cfg.rope = c.rotary ? RopeStyle::Half : RopeStyle::None;
      cfg.rotary_dims = c.rotary;
      cfg.rope_theta = 10000.0;
      const std::vector<float> inv = rope_inv_freq(cfg);
      const int half = int(inv.size());
      const int cap = 600, S = c.n_kv, group = c.n_heads / c.n_kv;
      const int q_dim = c.n_heads * c.hd, kv_dim = c.n_kv * c.hd, stride = q_dim + 2 * kv_dim;
      const int first_pos = 517;
      // Segment lengths after the append differ per segment (kv-head eviction).
      std::vector<int> lens(S);
      for (int s = 0; s < S; ++s) lens[s] = c.n + 3 * s + (s % 2 ? 40 : 0);
      const auto qkv = test::random_floats(std::size_t(c.n) * stride, c.hd + c.n, -2.f, 2.f);
      DeviceBuffer dqkv = DeviceBuffer::from(qkv), dinv = DeviceBuffer::from(inv.empty() ? std::vector<float>{0} : inv);
      DeviceBuffer dlens = DeviceBuffer::from(lens);
      const int region = cap + kRegionSlack;
      const std::vector<int> starts_host = test_starts(S);
      DeviceBuffer k(std::size_t(S) * region * c.hd * 2), v(std::size_t(S) * region * c.hd * 2);
      DeviceBuffer pos(std::size_t(S) * cap * 4), st(std::size_t(S) * cap * 4);
      pos.zero();
      {
        const std::vector<float> ones(std::size_t(S) * cap, 1.f);
        st.upload(ones.data(), ones.size() * 4);
      }
      DeviceBuffer starts = DeviceBuffer::from(starts_host);
      cuda::KvCache kv{t, k.get(), v.get(), pos.as<int>(), st.as<float>(), cap, c.hd, region, starts.as<int>()};
      cuda::RopeArgs r{dinv.as<float>(), half, c.n, first_pos, c.compacted, dlens.as<int>()};
      cuda::append_kv(dqkv.as<float>(), stride, q_dim, q_dim + kv_dim, c.n_kv, 0, r, kv, nullptr);
      cuda::rope_q(dqkv.as<float>(), stride, c.n_heads, c.hd, group, 0, r, nullptr);

      auto rope_pos = [&](int seg, int i) { return c.compacted ? lens[seg] - c.n + i : first_pos + i; };
      // Queries, in place.
      std::vector<float> want_q = qkv;
      for (int i = 0; i < c.n; ++i)
        for (int h = 0; h < c.n_heads; ++h)
          if (half) rope_rotate(&want_q[std::size_t(i) * stride + h * c.hd], inv, float(rope_pos(h / group, i)));
      const auto got_q = dqkv.to_vector<float>(qkv.size());
      EXPECT_LE(test::max_abs_error(got_q, want_q), 2e-6 * max_abs(want_q)) << "q, hd " << c.hd;
      // Keys and values in the cache.
      const auto gk = k.to_vector<uint16_t>(std::size_t(S) * region * c.hd);
      const auto gv = v.to_vector<uint16_t>(std::size_t(S) * region * c.hd);
      const auto gp = pos.to_vector<int>(std::size_t(S) * cap);
      const auto gs = st.to_vector<float>(std::size_t(S) * cap);
      for (int i = 0; i < c.n; ++i)
        for (int g = 0; g < c.n_kv; ++g) {
          std::vector<float> key(qkv.begin() + std::size_t(i) * stride + q_dim + g * c.hd,
                                 qkv.begin() + std::size_t(i) * stride + q_dim + (g + 1) * c.hd);
          if (half) rope_rotate(key.data(), inv, float(rope_pos(g, i)));
          const int slot = lens[g] - c.n + i;
          const std::size_t row = (std::size_t(g) * region + starts_host[g] + slot) * c.hd;
          for (int e = 0; e < c.hd; ++e) {
            const float got = cuda::from_bits(t, gk[row + e]);
            EXPECT_LE(std::abs(got - key[e]), test::ulp_rel(t) * std::abs(key[e]) + 1e-6)
                << "key dim " << e << " token " << i << " kv head " << g;
            const float want_v = qkv[std::size_t(i) * stride + q_dim + kv_dim + g * c.hd + e];
            EXPECT_EQ(gv[row + e], cuda::to_bits(t, want_v));
          }
          EXPECT_EQ(gp[std::size_t(g) * cap + slot], first_pos + i);
          EXPECT_EQ(gs[std::size_t(g) * cap + slot], 0.0f);
        }
    }
  }
}

// ---- attention --------------------------------------------------------------------

// CpuBackend::attention for one layer over given caches (float values of the
// 16-bit rows), written out plainly: the oracle of the attention kernels.
struct AttnRef {
  std::vector<float> out, logits, probs;  // AttentionRows layout for logits/probs
};

AttnRef attention_reference(const std::vector<float>& q, int q_stride, const std::vector<float>& K,
                            const std::vector<float>& V, const std::vector<int>& pos, const std::vector<int>& lens,
                            int cap, int hd, int H, int group, int n, int first_pos, int window, float scale) {
  AttnRef r;
  r.out.assign(std::size_t(n) * H * hd, 0.f);
  for (int h = 0; h < H; ++h) {
    const int seg = h / group, len = lens[seg], base = len - n;
    for (int i = 0; i < n; ++i) {
      std::vector<float> row(len);
      for (int j = 0; j < len; ++j) {
        double acc = 0;
        for (int e = 0; e < hd; ++e)
          acc += double(q[std::size_t(i) * q_stride + h * hd + e]) * K[(std::size_t(seg) * cap + j) * hd + e];
        row[j] = float(acc) * scale;
        if (j > base + i) row[j] = -std::numeric_limits<float>::infinity();
        if (window > 0 && first_pos + i - pos[std::size_t(seg) * cap + j] >= window)
          row[j] = -std::numeric_limits<float>::infinity();
      }
      r.logits.insert(r.logits.end(), row.begin(), row.end());
      cpu::softmax_row(row.data(), len);
      r.probs.insert(r.probs.end(), row.begin(), row.end());
      for (int e = 0; e < hd; ++e) {
        double acc = 0;
        for (int j = 0; j < len; ++j) acc += double(row[j]) * V[(std::size_t(seg) * cap + j) * hd + e];
        r.out[std::size_t(i) * H * hd + h * hd + e] = float(acc);
      }
    }
  }
  return r;
}

struct AttnCase {
  int hd, H, n_kv, n, cached, q_chunk, window;
};

TEST(CudaOps, AttentionMatchesCpuReference) {
  KVSCOPE_REQUIRE_CUDA();
  const AttnCase cases[] = {
      {64, 4, 2, 1, 300, 1, 0},     // decode, GQA 2:1, two P.V blocks
      {128, 8, 2, 1, 1000, 1, 0},   // decode, long: four P.V blocks
      {80, 2, 1, 17, 23, 64, 0},    // prefill onto a non-empty cache
      {128, 4, 4, 17, 5, 5, 0},     // prefill in query chunks of 5
      {12, 4, 1, 40, 0, 40, 0},     // the golden models' head_dim, MQA, fresh cache
      {64, 4, 2, 9, 30, 4, 16},     // sliding window masks old slots
      {256, 2, 2, 3, 70, 2, 0},     // the largest head_dim
      {64, 4, 2, 600, 0, 128, 0},   // long prefill, fresh cache: whole tiles and P.V blocks masked (skipped)
      {128, 2, 1, 300, 200, 300, 0},  // long prefill onto a cache, one chunk
  };
  for (WType t : kTypes) {
    for (const AttnCase& c : cases) {
      const int S = c.n_kv, group = c.H / c.n_kv;
      // Per-segment lengths differ (kv-head eviction); the queries sit at the end.
      std::vector<int> lens(S);
      for (int s = 0; s < S; ++s) lens[s] = c.n + std::max(0, c.cached - 7 * s);
      int max_len = 0;
      for (int l : lens) max_len = std::max(max_len, l);
      const int cap = max_len + 5;
      const int first_pos = 2 * c.cached + 3;
      std::vector<int> pos(std::size_t(S) * cap, 0);
      for (int s = 0; s < S; ++s) {
        const int base = lens[s] - c.n;
        for (int j = 0; j < base; ++j) pos[std::size_t(s) * cap + j] = (2 * j * first_pos) / std::max(1, 2 * base);
        for (int i = 0; i < c.n; ++i) pos[std::size_t(s) * cap + base + i] = first_pos + i;
      }
      const auto K = test::rounded(t, test::random_floats(std::size_t(S) * cap * c.hd, c.hd + 1, -1.f, 1.f));
      const auto V = test::rounded(t, test::random_floats(std::size_t(S) * cap * c.hd, c.hd + 2, -1.f, 1.f));
      const int q_stride = c.H * c.hd + 3;  // q rows with a gap, as in the fused qkv buffer
      const auto q = test::random_floats(std::size_t(c.n) * q_stride, c.hd + 3, -1.5f, 1.5f);
      const float scale = 1.0f / std::sqrt(float(c.hd));
      const AttnRef ref =
          attention_reference(q, q_stride, K, V, pos, lens, cap, c.hd, c.H, group, c.n, first_pos, c.window, scale);

      const std::vector<int> starts_host = test_starts(S);
      DeviceBuffer dk = DeviceBuffer::from(test::to_device_bits(t, in_regions(K, S, cap, c.hd, starts_host)));
      DeviceBuffer dv = DeviceBuffer::from(test::to_device_bits(t, in_regions(V, S, cap, c.hd, starts_host)));
      DeviceBuffer dpos = DeviceBuffer::from(pos), dlens = DeviceBuffer::from(lens), dq = DeviceBuffer::from(q);
      DeviceBuffer dstats(std::size_t(S) * cap * 4);
      DeviceBuffer dout(std::size_t(c.n) * c.H * c.hd * 4);
      DeviceBuffer cl(ref.logits.size() * 4), cp(ref.probs.size() * 4);
      DeviceBuffer scores(std::size_t(c.H) * c.q_chunk * cap * 4);
      DeviceBuffer partial(std::size_t(c.H) * c.q_chunk * cuda::pv_splits(cap) * c.hd * 4);
      cuda::AttentionArgs a;
      a.q = dq.as<float>();
      a.q_stride = q_stride;
      DeviceBuffer starts = DeviceBuffer::from(starts_host);
      a.kv = cuda::KvCache{t,   dk.get(), dv.get(), dpos.as<int>(), dstats.as<float>(), cap, c.hd, cap + kRegionSlack,
                           starts.as<int>()};
      a.seg_len = dlens.as<int>();
      a.seg0 = 0;
      a.group = group;
      a.n_heads = c.H;
      a.n = c.n;
      a.first_pos = first_pos;
      a.window = c.window;
      a.scale = scale;
      a.max_len = max_len;
      a.out = dout.as<float>();
      a.out_stride = c.H * c.hd;
      a.capture_logits = cl.as<float>();
      a.capture_probs = cp.as<float>();
      a.scores = scores.as<float>();
      a.partial = partial.as<float>();
      a.q_chunk = c.q_chunk;
      cuda::attention(a, nullptr);
      const auto out = dout.to_vector<float>(ref.out.size());
      const auto lg = cl.to_vector<float>(ref.logits.size());
      const auto pr = cp.to_vector<float>(ref.probs.size());
      const std::string what = std::string(cuda::wtype_name(t)) + " hd " + std::to_string(c.hd) + " n " +
                               std::to_string(c.n) + " cached " + std::to_string(c.cached);
      int mask_mismatch = 0;
      double lerr = 0, perr = 0;
      for (std::size_t i = 0; i < ref.logits.size(); ++i) {
        const bool masked = std::isinf(ref.logits[i]);
        if (masked != (std::isinf(lg[i]) && lg[i] < 0) || (masked && pr[i] != 0.0f)) ++mask_mismatch;
        if (!masked) lerr = std::max(lerr, double(std::abs(lg[i] - ref.logits[i])));
        perr = std::max(perr, double(std::abs(pr[i] - ref.probs[i])));
      }
      EXPECT_EQ(mask_mismatch, 0) << what;
      EXPECT_LE(lerr, 2e-6 * std::max(1.0f, max_abs(ref.logits))) << what;
      EXPECT_LE(perr, 2e-6) << what;
      EXPECT_LT(test::nmse(out, ref.out), 1e-10) << what;

      // Only the last query's rows captured: heads' rows back to back.
      a.capture_first = c.n - 1;
      DeviceBuffer cl1(ref.logits.size() * 4), cp1(ref.probs.size() * 4);
      a.capture_logits = cl1.as<float>();
      a.capture_probs = cp1.as<float>();
      cuda::attention(a, nullptr);
      const auto lg1 = cl1.to_vector<float>(ref.logits.size());
      const auto pr1 = cp1.to_vector<float>(ref.probs.size());
      std::size_t ref_off = 0, off = 0;
      int last_mismatch = 0;
      for (int h = 0; h < c.H; ++h) {
        const int len = lens[h / group];
        const std::size_t ref_row = ref_off + std::size_t(c.n - 1) * len;
        for (int j = 0; j < len; ++j) {
          last_mismatch += lg1[off + j] != lg[ref_row + j];
          last_mismatch += pr1[off + j] != pr[ref_row + j];
        }
        ref_off += std::size_t(c.n) * len;
        off += len;
      }
      EXPECT_EQ(last_mismatch, 0) << what << ": last query's rows differ from the full capture's";
    }
  }
}

// ---- retain on the device -----------------------------------------------------------

// One segment's eviction for the compaction test: the kept slots (empty:
// none evicted), where its rows start, how many slots it held, and the
// length the placement must leave room for.
struct CompactCase {
  std::vector<int> keep;
  int start = 0, old_len = 0, len_after = 0;
  int expect_dst = 0;  // which of place_rows' three choices this case is meant to take
};

TEST(CudaOps, CompactMovesRowsAndRerotatesKeys) {
  KVSCOPE_REQUIRE_CUDA();
  const int hd = 64, cap = 300, region = 360;
  std::vector<CompactCase> cases(8);
  for (int j = 0; j < 200; ++j)  // one slot past the middle: the tail moves down
    if (j != 150) cases[0].keep.push_back(j);
  cases[0].old_len = cases[0].len_after = 200;
  for (int j = 0; j < 250; j += 3) cases[1].keep.push_back(j);  // every third: down from slot 1
  cases[1].old_len = 250;
  cases[1].len_after = int(cases[1].keep.size()) + 1;
  cases[2] = {{}, 200, 100, 250, 0};  // nothing evicted, but 150 appends do not fit: back to row 0
  for (int j = 0; j < 200; ++j)  // the window's eviction (two sinks): the sinks move up
    if (j != 2) cases[3].keep.push_back(j);
  cases[3].start = 20;
  cases[3].old_len = cases[3].len_after = 200;
  cases[3].expect_dst = 21;
  for (int j = 0; j < 100; ++j)  // neither side has room for the appends: back to row 0
    if (j != 50) cases[4].keep.push_back(j);
  cases[4].start = 200;
  cases[4].old_len = 100;
  cases[4].len_after = 250;
  cases[5] = {{}, 7, 90, 90, 7};  // untouched
  for (int j = 0; j < 200; ++j)  // twenty sinks move up: several batches of the descending walk
    if (j != 20) cases[6].keep.push_back(j);
  cases[6].old_len = cases[6].len_after = 200;
  cases[6].expect_dst = 1;
  for (int j = 0; j < 150; ++j)  // back to row 0 onto rows it reads from: the ascending walk overlapping
    if (j != 10) cases[7].keep.push_back(j);
  cases[7].start = 100;
  cases[7].old_len = 150;
  cases[7].len_after = 280;
  const int S = int(cases.size());

  // The jobs, as CudaBackend::push_state builds them.
  std::vector<cuda::CompactJob> jobs;
  std::vector<int> maps;
  std::vector<std::vector<int>> map(S);  // [segment][new slot]: old slot
  std::vector<int> dst_start(S);
  for (int s = 0; s < S; ++s) {
    const CompactCase& c = cases[s];
    RowMoves moves;
    if (c.keep.empty()) {
      moves.kept = moves.first_hole = c.old_len;
      map[s].resize(c.old_len);
      std::iota(map[s].begin(), map[s].end(), 0);
    } else {
      moves = plan_row_moves(c.keep, c.old_len);
      map[s] = c.keep;
    }
    const RowPlacement place = place_rows(moves, c.start, region, c.len_after);
    ASSERT_EQ(place.dst_start, c.expect_dst) << "segment " << s << " took another placement than meant";
    dst_start[s] = place.dst_start;
    if (place.rows_moved() == 0 && moves.first_hole == moves.kept) continue;
    jobs.push_back({s, moves.kept, c.keep.empty() ? -1 : int(maps.size()), moves.first_hole, c.start,
                    place.dst_start, place.move_begin, place.move_end, place.rotate_begin, place.rotate_end});
    maps.insert(maps.end(), c.keep.begin(), c.keep.end());
  }
  ASSERT_EQ(jobs.size(), 7u);

  for (WType t : kTypes) {
    for (bool compacted : {false, true}) {
      ModelConfig cfg;
      cfg.rotary_dims = 32;  // partial rotary: pairs and plain dims both move
      const std::vector<float> inv = rope_inv_freq(cfg);
      const auto K = test::rounded(t, test::random_floats(std::size_t(S) * region * hd, 31, -1.f, 1.f));
      const auto V = test::rounded(t, test::random_floats(std::size_t(S) * region * hd, 32, -1.f, 1.f));
      std::vector<int> pos(std::size_t(S) * cap);
      std::iota(pos.begin(), pos.end(), 1000);
      const auto stats = test::random_floats(std::size_t(S) * cap, 33, 0.f, 1.f);
      std::vector<int> starts(S);
      for (int s = 0; s < S; ++s) starts[s] = cases[s].start;
      DeviceBuffer dk = DeviceBuffer::from(test::to_device_bits(t, K)), dv = DeviceBuffer::from(test::to_device_bits(t, V));
      DeviceBuffer dp = DeviceBuffer::from(pos), ds = DeviceBuffer::from(stats), dstart = DeviceBuffer::from(starts);
      DeviceBuffer dj = DeviceBuffer::from(jobs), dm = DeviceBuffer::from(maps.empty() ? std::vector<int>{0} : maps);
      DeviceBuffer dinv = DeviceBuffer::from(inv);
      cuda::KvCache kv{t, dk.get(), dv.get(), dp.as<int>(), ds.as<float>(), cap, hd, region, dstart.as<int>()};
      cuda::compact(kv, dj.as<cuda::CompactJob>(), int(jobs.size()), dm.as<int>(),
                    compacted ? dinv.as<float>() : nullptr, int(inv.size()), nullptr);
      const auto gk = dk.to_vector<uint16_t>(K.size());
      const auto gv = dv.to_vector<uint16_t>(V.size());
      const auto gp = dp.to_vector<int>(pos.size());
      const auto gs = ds.to_vector<float>(stats.size());
      for (int s = 0; s < S; ++s) {
        const std::size_t seg_rows = std::size_t(s) * region, seg_slots = std::size_t(s) * cap;
        for (int i = 0; i < int(map[s].size()); ++i) {
          const int src = map[s][i];
          const std::size_t from = seg_rows + cases[s].start + src, to = seg_rows + dst_start[s] + i;
          std::vector<float> key(K.begin() + from * hd, K.begin() + (from + 1) * hd);
          if (compacted && i != src) rope_rotate(key.data(), inv, float(i - src));
          for (int e = 0; e < hd; ++e) {
            const float got = cuda::from_bits(t, gk[to * hd + e]);
            if (compacted && e < 2 * int(inv.size()))
              ASSERT_LE(std::abs(got - key[e]), test::ulp_rel(t) * std::abs(key[e]) + 1e-6) << "seg " << s << " slot " << i;
            else
              ASSERT_EQ(gk[to * hd + e], cuda::to_bits(t, key[e])) << "seg " << s << " slot " << i << " dim " << e;
            ASSERT_EQ(gv[to * hd + e], cuda::to_bits(t, V[from * hd + e])) << "seg " << s << " slot " << i;
          }
          ASSERT_EQ(gp[seg_slots + i], pos[seg_slots + src]) << "seg " << s << " slot " << i;
          ASSERT_EQ(gs[seg_slots + i], stats[seg_slots + src]) << "seg " << s << " slot " << i;
        }
      }
    }
  }
}

}  // namespace
}  // namespace kvscope

#endif  // KVSCOPE_HAVE_CUDA
