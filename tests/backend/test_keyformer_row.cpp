// The vectorised pieces behind Keyformer's scores on the CPU: the
// branch-free log/exp (common/float_math.h) against double precision, the
// batched Philox against Random123's, and the whole score row against the
// scalar definition (keyformer_noise, then a softmax in double).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <vector>

#include "backend/cpu/keyformer_row.h"
#include "backend/cpu/philox_batch.h"
#include "backend/cpu/simd_path.h"
#include "common/float_math.h"

namespace kvscope {
namespace {

// Distance in units in the last place between a float and the exact value.
double ulps(float got, double exact) {
  const float ef = static_cast<float>(exact);
  const double ulp = std::nextafter(std::fabs(ef), std::numeric_limits<float>::infinity()) - std::fabs(ef);
  return std::fabs(double(got) - exact) / ulp;
}

uint32_t bits(float x) {
  uint32_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}

TEST(FloatMath, LogIsWithinTwoUlpOverThePositiveNormals) {
  // Every 97th float from the smallest normal up to 1e30, and all floats
  // around 1, where ln x is near 0 and relative error shows most.
  double worst = 0;
  float worst_x = 0;
  auto check = [&](float x) {
    const double e = ulps(fm::log_pos(x), std::log(double(x)));
    if (e > worst) worst = e, worst_x = x;
  };
  for (uint32_t b = bits(std::numeric_limits<float>::min()); b < bits(1e30f); b += 97) {
    float x;
    std::memcpy(&x, &b, sizeof x);
    check(x);
  }
  for (uint32_t b = bits(0.99f); b < bits(1.01f); ++b) {
    float x;
    std::memcpy(&x, &b, sizeof x);
    check(x);
  }
  std::printf("log_pos: worst %.2f ulp at x = %.9g\n", worst, worst_x);
  EXPECT_LE(worst, 2.0) << "at x = " << worst_x;
  EXPECT_EQ(fm::log_pos(1.0f), 0.0f);
}

TEST(FloatMath, ExpIsWithinTwoUlpOnTheSoftmaxRange) {
  double worst = 0;
  float worst_z = 0;
  for (uint32_t b = 0; b <= bits(87.0f); b += 61) {  // z = -x for x in [0, 87]
    float x;
    std::memcpy(&x, &b, sizeof x);
    const float z = -x;
    const double e = ulps(fm::exp_nonpos(z), std::exp(double(z)));
    if (e > worst) worst = e, worst_z = z;
  }
  std::printf("exp_nonpos: worst %.2f ulp at z = %.9g\n", worst, worst_z);
  EXPECT_LE(worst, 2.0) << "at z = " << worst_z;
  EXPECT_EQ(fm::exp_nonpos(0.0f), 1.0f);
  EXPECT_EQ(fm::exp_nonpos(-std::numeric_limits<float>::infinity()), 0.0f);
  EXPECT_EQ(fm::exp_nonpos(-100.0f), 0.0f);
}

TEST(KeyformerRow, NoiseIsFiniteAtTheEndsOfTheUniformRange) {
  // A Philox word of all ones once gave u = 1 (the 24-bit midpoint rounded
  // up), then -log(-log u) = +inf and a NaN score for the rest of the run.
  for (uint32_t w : {0x00000000u, 0x000001ffu, 0xffffff6fu, 0xffffffffu}) {
    const float u = uniform_open01(w);
    EXPECT_GT(u, 0.0f) << std::hex << w;
    EXPECT_LT(u, 1.0f) << std::hex << w;
    r123::Philox4x32::ctr_type r = {{w, w, w, w}};
    for (NoiseKind kind : {NoiseKind::Gumbel, NoiseKind::Gaussian}) {
      const float g = keyformer_noise_from(kind, r, 0);
      EXPECT_TRUE(std::isfinite(g)) << std::hex << w;
    }
  }
  // The Gumbel noise's range: -log(-log u) for the smallest and largest u.
  EXPECT_NEAR(keyformer_noise_from(NoiseKind::Gumbel, {{0u, 0u, 0u, 0u}}, 0), -std::log(-std::log(std::ldexp(1.0, -24))), 1e-5);
  EXPECT_NEAR(keyformer_noise_from(NoiseKind::Gumbel, {{~0u, ~0u, ~0u, ~0u}}, 0),
              -std::log(-std::log1p(-std::ldexp(1.0, -24))), 1e-4);
}

TEST(KeyformerRow, BatchedPhiloxMatchesRandom123) {
  std::vector<uint32_t> c1;
  for (uint32_t i = 0; i < 1000; ++i) c1.push_back(i * 2654435761u);
  const int n = static_cast<int>(c1.size());
  std::vector<uint32_t> w[4];
  for (auto& v : w) v.resize(n);
  const uint64_t seed = 0x0123456789abcdefull;
  cpu::philox4_batch(seed, 17, c1.data(), 99, 0xdeadbeef, n, w[0].data(), w[1].data(), w[2].data(), w[3].data());
  for (int i = 0; i < n; ++i) {
    const auto r = philox4(seed, 17, c1[i], 99, 0xdeadbeef);
    for (int k = 0; k < 4; ++k) ASSERT_EQ(w[k][i], r.v[k]) << "counter " << i << " word " << k;
  }
}

TEST(KeyformerRow, BatchedPhiloxWordZeroMatchesRandom123) {
  // The random policy's draws: the third counter word varies (positions).
  std::vector<int32_t> c2;
  for (int32_t i = 0; i < 1000; ++i) c2.push_back(i * 7 + (i % 3));
  c2.push_back(0x7fffffff);
  const int n = static_cast<int>(c2.size());
  std::vector<uint32_t> w0(n);
  const uint64_t seed = 0xfedcba9876543210ull;
  cpu::philox4_word0_batch(seed, 42, 5, c2.data(), 0x52414e44u, n, w0.data());
  for (int i = 0; i < n; ++i)
    ASSERT_EQ(w0[i], philox4(seed, 42, 5, static_cast<uint32_t>(c2[i]), 0x52414e44u).v[0]) << "counter " << i;
}

// softmax((x + noise) / tau) from keyformer_noise() one slot at a time.
std::vector<double> reference_row(const SlotStatRule& rule, uint32_t qpos, uint32_t layer, uint32_t head,
                                  const std::vector<int>& pos, const std::vector<float>& x) {
  std::vector<double> z(x.size());
  double mx = -INFINITY;
  for (std::size_t j = 0; j < x.size(); ++j) {
    const float noise = keyformer_noise(rule.noise, rule.seed, qpos, layer, head, static_cast<uint32_t>(pos[j]));
    z[j] = (x[j] + noise) / rule.tau;  // float arithmetic, as the backends do it
    z[j] = static_cast<float>(z[j]);
    mx = std::max(mx, z[j]);
  }
  double sum = 0;
  for (double& v : z) sum += (v = std::isinf(v) ? 0.0 : std::exp(v - mx));
  for (double& v : z) v /= sum;
  return z;
}

TEST(KeyformerRow, EqualsTheScalarDefinitionForEveryNoiseKind) {
  // Positions with gaps (an evicted cache): a few (every block of the span
  // drawn) and many (only the distinct blocks drawn); a masked slot; rows
  // longer and shorter than a vector.
  for (int stride : {3, 7})
  for (int len : {1, 3, 8, 37, 300}) {
    std::vector<int> pos;
    std::vector<float> x;
    for (int j = 0; j < len; ++j) {
      pos.push_back(j * stride + (j % 5 == 0 ? 1 : 0));
      x.push_back(std::sin(0.7f * j) * 4.0f);
    }
    if (len > 2) x[1] = -std::numeric_limits<float>::infinity();
    for (NoiseKind kind : {NoiseKind::Gumbel, NoiseKind::Gaussian, NoiseKind::Constant, NoiseKind::None}) {
      SlotStatRule rule;
      rule.source = StatSource::GumbelSoftmax;
      rule.noise = kind;
      rule.tau = 0.7f;
      rule.seed = 42;
      std::vector<float> out(len);
      cpu::KeyformerRowScratch scratch;
      cpu::keyformer_score_row(rule, 400, 2, 5, pos.data(), x.data(), len, out.data(), scratch);
      const auto ref = reference_row(rule, 400, 2, 5, pos, x);
      for (int j = 0; j < len; ++j)
        ASSERT_NEAR(out[j], ref[j], 1e-6 + 4e-6 * ref[j]) << "stride " << stride << " len " << len << " slot " << j << " noise "
                                                          << static_cast<int>(kind);
      if (len > 2) EXPECT_EQ(out[1], 0.0f);
    }
  }
}

TEST(KeyformerRow, EveryVectorPathGivesTheSameBits) {
  // The baseline, AVX2 and AVX-512 copies of the row and of the batched
  // draws (simd_path.h), each that this CPU can run, against the baseline.
  const auto paths = supported_simd_paths();
  std::printf("vector paths on this CPU:");
  for (SimdPath p : paths) std::printf(" %s", simd_path_name(p));
  std::printf("\n");
  for (int len : {1, 15, 16, 17, 300, 1000}) {
    std::vector<int> pos;
    std::vector<float> x;
    for (int j = 0; j < len; ++j) {
      pos.push_back(j * 3 + (j % 7 == 0 ? 2 : 0));
      x.push_back(std::cos(0.37f * j) * 6.0f - 1.0f);
    }
    for (NoiseKind kind : {NoiseKind::Gumbel, NoiseKind::Gaussian, NoiseKind::None}) {
      SlotStatRule rule;
      rule.source = StatSource::GumbelSoftmax;
      rule.noise = kind;
      rule.tau = 1.3f;
      rule.seed = 7;
      cpu::KeyformerRowScratch base_scratch;
      const float base_inv = cpu::keyformer_exp_row(SimdPath::baseline, rule, 999, 1, 3, pos.data(), x.data(), len, base_scratch);
      for (SimdPath p : paths) {
        cpu::KeyformerRowScratch scratch;
        const float inv = cpu::keyformer_exp_row(p, rule, 999, 1, 3, pos.data(), x.data(), len, scratch);
        ASSERT_EQ(bits(inv), bits(base_inv)) << simd_path_name(p) << " len " << len;
        for (int j = 0; j < len; ++j)
          ASSERT_EQ(bits(scratch.z[j]), bits(base_scratch.z[j])) << simd_path_name(p) << " len " << len << " slot " << j;
      }
    }
  }
  const int n = 333;
  std::vector<uint32_t> c1(n);
  std::vector<int32_t> c2(n);
  for (int i = 0; i < n; ++i) c1[i] = i * 40503u, c2[i] = i * 11;
  std::vector<uint32_t> base[4], got[4], base0(n), got0(n);
  for (auto* set : {base, got})
    for (int k = 0; k < 4; ++k) set[k].resize(n);
  cpu::philox4_batch(SimdPath::baseline, 3, 1, c1.data(), 2, 9, n, base[0].data(), base[1].data(), base[2].data(), base[3].data());
  cpu::philox4_word0_batch(SimdPath::baseline, 3, 1, 2, c2.data(), 9, n, base0.data());
  for (SimdPath p : paths) {
    cpu::philox4_batch(p, 3, 1, c1.data(), 2, 9, n, got[0].data(), got[1].data(), got[2].data(), got[3].data());
    cpu::philox4_word0_batch(p, 3, 1, 2, c2.data(), 9, n, got0.data());
    for (int k = 0; k < 4; ++k) EXPECT_EQ(got[k], base[k]) << simd_path_name(p) << " word " << k;
    EXPECT_EQ(got0, base0) << simd_path_name(p);
  }
}

}  // namespace
}  // namespace kvscope
