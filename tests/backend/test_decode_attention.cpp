// A decode step's attention passes (backend/cpu/decode_attention.h): the
// same bits on every instruction set the CPU has, a query head alone or
// in a group with others, and the values of the dot products and weighted
// sums to float rounding.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "backend/cpu/decode_attention.h"
#include "float_rows.h"

namespace kvscope::cpu {
namespace {

using testing_rows::randoms;
using testing_rows::same_bits;

// Head sizes with every tail class of the 16-lane scores and the 8-wide
// value pass (64: SmolLM2 and Llama; 72, 96, 112: other real models; 256:
// Gemma; 100: a 64-wide slab, an 8-wide one and a scalar tail), and cache
// lengths around the value pass's blocks of 64 rows.
const int kHeadDims[] = {1, 7, 8, 15, 16, 17, 64, 72, 96, 100, 112, 256};
const int kLengths[] = {1, 3, 4, 5, 63, 64, 65, 130, 1000};

struct Case {
  int hd, len, G;
  std::vector<float> K, V, q, p;
};

Case make_case(int hd, int len, int G, uint32_t seed) {
  Case c{hd, len, G, randoms(size_t(len) * hd, seed), randoms(size_t(len) * hd, seed + 1),
         randoms(size_t(G) * hd, seed + 2), randoms(size_t(G) * len, seed + 3)};
  return c;
}

std::vector<float> scores_of(SimdPath path, const Case& c, float scale) {
  std::vector<float> s(size_t(c.G) * c.len);
  decode_scores(path, c.K.data(), c.len, c.hd, c.q.data(), c.hd, c.G, scale, s.data(), c.len);
  return s;
}

std::vector<float> values_of(SimdPath path, const Case& c) {
  std::vector<float> o(size_t(c.G) * c.hd);
  decode_values(path, c.V.data(), c.len, c.hd, c.p.data(), c.len, c.G, o.data(), c.hd);
  return o;
}

TEST(DecodeAttention, EveryInstructionSetGivesTheSameBits) {
  if (supported_simd_paths().size() < 2) GTEST_SKIP() << "this CPU runs one vector path only: nothing to compare";
  for (int hd : kHeadDims)
    for (int len : kLengths)
      for (int G : {1, 3, 5}) {
        SCOPED_TRACE("hd " + std::to_string(hd) + " len " + std::to_string(len) + " G " + std::to_string(G));
        const Case c = make_case(hd, len, G, uint32_t(hd * 1000 + len * 10 + G));
        std::vector<float> want_s, want_v;
        for (SimdPath p : supported_simd_paths()) {
          const auto s = scores_of(p, c, 0.125f);
          const auto v = values_of(p, c);
          if (want_s.empty()) {
            want_s = s;
            want_v = v;
          }
          EXPECT_TRUE(same_bits(s, want_s)) << simd_path_name(p);
          EXPECT_TRUE(same_bits(v, want_v)) << simd_path_name(p);
        }
      }
}

// A query head's results do not depend on the heads it shares a pass with.
TEST(DecodeAttention, AHeadGivesTheSameBitsAloneOrInAGroup) {
  for (int hd : {17, 64, 112})
    for (int G : {2, 3, 4, 5, 7, 9}) {
      SCOPED_TRACE("hd " + std::to_string(hd) + " G " + std::to_string(G));
      const Case c = make_case(hd, 200, G, uint32_t(hd + 31 * G));
      const auto s = scores_of(simd_path(), c, 0.3f);
      const auto v = values_of(simd_path(), c);
      for (int g = 0; g < G; ++g) {
        Case one{hd, c.len, 1, c.K, c.V, std::vector<float>(c.q.begin() + g * hd, c.q.begin() + (g + 1) * hd),
                 std::vector<float>(c.p.begin() + g * c.len, c.p.begin() + (g + 1) * c.len)};
        EXPECT_TRUE(same_bits(scores_of(simd_path(), one, 0.3f),
                              std::vector<float>(s.begin() + g * c.len, s.begin() + (g + 1) * c.len)))
            << "head " << g;
        EXPECT_TRUE(same_bits(values_of(simd_path(), one), std::vector<float>(v.begin() + g * hd, v.begin() + (g + 1) * hd)))
            << "head " << g;
      }
    }
}

// Against sums in double: within a few float roundings of each term's size.
TEST(DecodeAttention, ValuesMatchDoublePrecisionSums) {
  for (int hd : kHeadDims)
    for (int len : kLengths) {
      SCOPED_TRACE("hd " + std::to_string(hd) + " len " + std::to_string(len));
      const Case c = make_case(hd, len, 2, uint32_t(7 * hd + len));
      const float scale = 1.0f / std::sqrt(float(hd));
      const auto s = scores_of(simd_path(), c, scale);
      const auto v = values_of(simd_path(), c);
      for (int g = 0; g < c.G; ++g) {
        for (int j = 0; j < len; ++j) {
          double want = 0, mag = 0;
          for (int e = 0; e < hd; ++e) {
            const double t = double(c.q[g * hd + e]) * c.K[size_t(j) * hd + e];
            want += t;
            mag += std::fabs(t);
          }
          want *= scale;
          EXPECT_NEAR(s[size_t(g) * len + j], want, 1e-5 * (mag * scale + 1e-30)) << "score " << g << "," << j;
        }
        for (int e = 0; e < hd; ++e) {
          double want = 0, mag = 0;
          for (int j = 0; j < len; ++j) {
            const double t = double(c.p[size_t(g) * len + j]) * c.V[size_t(j) * hd + e];
            want += t;
            mag += std::fabs(t);
          }
          EXPECT_NEAR(v[size_t(g) * hd + e], want, 1e-5 * (mag + 1e-30)) << "value " << g << "," << e;
        }
      }
    }
}

// The documented summation order, written out: a score's 16 lanes and
// their tree, an output's sum in row order. Shapes reach the 64-wide
// slabs, the 8-wide ones, the scalar tail, sums carried across blocks of
// 64 rows, and more than four heads.
TEST(DecodeAttention, SumsInTheDocumentedOrder) {
  for (int hd : {40, 72, 100, 256})
    for (int len : {11, 130})
      for (int G : {1, 5}) {
        SCOPED_TRACE("hd " + std::to_string(hd) + " len " + std::to_string(len) + " G " + std::to_string(G));
        const Case c = make_case(hd, len, G, uint32_t(hd + 3 * len + G));
        const auto s = scores_of(simd_path(), c, 0.5f);
        const auto v = values_of(simd_path(), c);
        for (int g = 0; g < G; ++g) {
          for (int j = 0; j < len; ++j) {
            float lane[16] = {};
            for (int e = 0; e < hd; ++e)
              lane[e % 16] = lane[e % 16] + c.q[size_t(g) * hd + e] * c.K[size_t(j) * hd + e];
            float l[8];
            for (int t = 0; t < 8; ++t) l[t] = lane[t] + lane[t + 8];
            for (int t = 0; t < 4; ++t) l[t] += l[t + 4];
            l[0] += l[2];
            l[1] += l[3];
            const float want = 0.5f * (l[0] + l[1]);
            EXPECT_EQ(std::memcmp(&s[size_t(g) * len + j], &want, sizeof want), 0) << "head " << g << " row " << j;
          }
          for (int e = 0; e < hd; ++e) {
            float want = 0.0f;
            for (int j = 0; j < len; ++j) want = want + c.p[size_t(g) * len + j] * c.V[size_t(j) * hd + e];
            EXPECT_EQ(std::memcmp(&v[size_t(g) * hd + e], &want, sizeof want), 0) << "head " << g << " element " << e;
          }
        }
      }
}

}  // namespace
}  // namespace kvscope::cpu
