// ExpectedAttention's scores (backend/expected_attention.h) against a
// re-derivation written the way kvpress writes it: dense RoPE matrices
// R_p = diag(cos_p) + diag(sin_p) P averaged over the future positions,
// mu' = Rbar mu and Sigma' = Rbar Sigma Rbar^T by matrix products, the mean
// and covariance of the queries by two passes, not the running sums and
// pairwise rotations of the code under test.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "backend/expected_attention.h"

namespace kvscope {
namespace {

using Matrix = std::vector<std::vector<double>>;

Matrix zeros(int n) { return Matrix(n, std::vector<double>(n, 0.0)); }

Matrix multiply(const Matrix& a, const Matrix& b) {
  const int n = static_cast<int>(a.size());
  Matrix c = zeros(n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      for (int k = 0; k < n; ++k) c[i][j] += a[i][k] * b[k][j];
  return c;
}

Matrix transpose(const Matrix& a) {
  Matrix t = zeros(static_cast<int>(a.size()));
  for (std::size_t i = 0; i < a.size(); ++i)
    for (std::size_t j = 0; j < a.size(); ++j) t[j][i] = a[i][j];
  return t;
}

// The mean over p in [start, start + F) of kvpress's R_p for head_dim d,
// with inv_freq of d / 2 entries (all dims rotary).
Matrix mean_rope(const std::vector<float>& inv_freq, int start, int F) {
  const int half = static_cast<int>(inv_freq.size()), d = 2 * half;
  Matrix mean = zeros(d);
  for (int p = start; p < start + F; ++p) {
    std::vector<double> cos_p(d), sin_p(d);
    for (int i = 0; i < d; ++i) {
      const double angle = inv_freq[i % half] * static_cast<float>(p);
      cos_p[i] = std::cos(angle);
      sin_p[i] = std::sin(angle);
    }
    Matrix P = zeros(d);
    for (int i = 0; i < half; ++i) {
      P[half + i][i] = 1.0;
      P[i][half + i] = -1.0;
    }
    for (int i = 0; i < d; ++i)
      for (int j = 0; j < d; ++j) mean[i][j] += ((i == j ? cos_p[i] : 0.0) + sin_p[i] * P[i][j]) / F;
  }
  return mean;
}

struct Head {
  std::vector<std::vector<float>> queries;  // before RoPE, every row counted
};

// The scores the rule gives, derived densely.
std::vector<double> by_hand(const std::vector<Head>& heads, const std::vector<std::vector<float>>& keys,
                            const std::vector<std::vector<float>>& values, const std::vector<float>& inv_freq,
                            int future_start, int F, int sinks, bool covariance, bool value_norm) {
  const int d = static_cast<int>(keys[0].size()), len = static_cast<int>(keys.size());
  const Matrix R = mean_rope(inv_freq, future_start, F);
  std::vector<double> acc(len, 0.0);
  for (const Head& head : heads) {
    const double n = static_cast<double>(head.queries.size());
    std::vector<double> mu(d, 0.0);
    for (const auto& q : head.queries)
      for (int a = 0; a < d; ++a) mu[a] += q[a] / n;
    Matrix sigma = zeros(d);
    for (const auto& q : head.queries)
      for (int a = 0; a < d; ++a)
        for (int b = 0; b < d; ++b) sigma[a][b] += (q[a] - mu[a]) * (q[b] - mu[b]) / n;
    std::vector<double> mu_r(d, 0.0);
    for (int a = 0; a < d; ++a)
      for (int b = 0; b < d; ++b) mu_r[a] += R[a][b] * mu[b];
    const Matrix sigma_r = multiply(R, multiply(sigma, transpose(R)));
    std::vector<double> logit(len, 0.0);
    double total = 0.0;
    for (int j = sinks; j < len; ++j) {
      double lin = 0.0, quad = 0.0;
      for (int a = 0; a < d; ++a) {
        lin += keys[j][a] * mu_r[a];
        for (int b = 0; b < d; ++b) quad += keys[j][a] * sigma_r[a][b] * keys[j][b];
      }
      logit[j] = std::exp(lin / std::sqrt(static_cast<double>(d)) + (covariance ? quad / (2.0 * d) : 0.0));
      total += logit[j];
    }
    for (int j = sinks; j < len; ++j) acc[j] += logit[j] / total / static_cast<double>(heads.size());
  }
  double best = -1e300;
  for (int j = sinks; j < len; ++j) {
    if (value_norm) {
      double sq = 0.0;
      for (float v : values[j]) sq += double(v) * v;
      acc[j] *= std::sqrt(sq);
    }
    best = std::max(best, acc[j]);
  }
  for (int j = 0; j < sinks; ++j) acc[j] = best + 1.0;
  return acc;
}

class ExpectedAttention : public ::testing::TestWithParam<int> {};

TEST_P(ExpectedAttention, ScoresEqualTheDenseDerivation) {
  const int variant = GetParam();
  const int hd = 4, len = 6, sinks = 2, F = 7, future_start = 9, first_pos = 0;
  const std::vector<float> inv_freq = {1.0f, 0.1f};
  // Two query heads reading one segment; rows 0..4 at positions 0..4, of
  // which the first `sinks` are left out of the moments.
  const std::vector<std::vector<float>> q0 = {{0.9f, -0.3f, 0.2f, 0.5f},
                                              {0.1f, 0.4f, -0.7f, 0.3f},
                                              {0.6f, 0.2f, 0.1f, -0.4f},
                                              {-0.2f, 0.8f, 0.5f, 0.1f},
                                              {0.3f, -0.5f, 0.9f, 0.6f}};
  const std::vector<std::vector<float>> q1 = {{0.2f, 0.1f, 0.3f, -0.9f},
                                              {-0.6f, 0.7f, 0.2f, 0.2f},
                                              {0.5f, -0.1f, -0.8f, 0.4f},
                                              {0.4f, 0.3f, 0.6f, -0.2f},
                                              {-0.7f, 0.2f, 0.1f, 0.9f}};
  const std::vector<std::vector<float>> keys = {{1.2f, -0.4f, 0.3f, 0.8f}, {0.5f, 0.9f, -1.1f, 0.2f},
                                                {-0.7f, 0.3f, 0.6f, 1.4f}, {0.2f, -1.3f, 0.4f, -0.5f},
                                                {1.0f, 0.6f, 0.9f, -0.3f}, {-0.4f, -0.2f, -1.0f, 0.7f}};
  const std::vector<std::vector<float>> values = {{0.3f, 0.1f, -0.2f, 0.5f}, {1.0f, -0.5f, 0.2f, 0.1f},
                                                  {0.2f, 0.2f, 0.2f, 0.2f},  {-0.9f, 0.4f, 1.3f, 0.0f},
                                                  {0.5f, -0.6f, 0.1f, 0.8f}, {0.1f, 0.0f, -0.3f, 0.2f}};

  // Both heads' rows interleaved as a forward call lays them out: row i
  // holds head 0's hd floats, then head 1's.
  std::vector<float> rows;
  for (int i = 0; i < 5; ++i) {
    rows.insert(rows.end(), q0[i].begin(), q0[i].end());
    rows.insert(rows.end(), q1[i].begin(), q1[i].end());
  }
  QueryMoments m;
  m.ensure(1, 2, hd);
  // In two calls (a prompt of 3, then two single tokens), as a session adds them.
  for (int h = 0; h < 2; ++h) {
    m.add(0, h, rows.data(), 3, 2 * hd, first_pos, sinks);
    m.add(0, h, rows.data() + 3 * 2 * hd, 1, 2 * hd, 3, sinks);
    m.add(0, h, rows.data() + 4 * 2 * hd, 1, 2 * hd, 4, sinks);
  }
  EXPECT_EQ(m.count(0, 0), 3);
  EXPECT_EQ(m.count(0, 1), 3);

  std::vector<float> flat_k, flat_v;
  for (int j = 0; j < len; ++j) {
    flat_k.insert(flat_k.end(), keys[j].begin(), keys[j].end());
    flat_v.insert(flat_v.end(), values[j].begin(), values[j].end());
  }
  const ExpectedReader readers[2] = {{m.count(0, 0), m.sum(0, 0), m.outer(0, 0), &inv_freq},
                                     {m.count(0, 1), m.sum(0, 1), m.outer(0, 1), &inv_freq}};
  SlotStatRule rule;
  rule.source = StatSource::Expected;
  rule.span = F;
  rule.sinks = sinks;
  rule.variant = variant;
  std::vector<float> got(len);
  expected_attention_scores(flat_k.data(), flat_v.data(), len, hd, readers, future_start, rule, got.data());

  Head h0{{q0.begin() + sinks, q0.end()}}, h1{{q1.begin() + sinks, q1.end()}};
  const auto want = by_hand({h0, h1}, keys, values, inv_freq, future_start, F, sinks,
                            !(variant & kExpectedNoCovariance), !(variant & kExpectedNoValueNorm));
  for (int j = 0; j < len; ++j) EXPECT_NEAR(got[j], want[j], 1e-6 * std::fabs(want[j])) << "slot " << j;
  // The terms matter: the scores are not uniform, and the sinks lead.
  EXPECT_NE(got[2], got[3]);
  EXPECT_GT(got[0], *std::max_element(got.begin() + sinks, got.end()));
}

INSTANTIATE_TEST_SUITE_P(Variants, ExpectedAttention,
                         ::testing::Values(0, kExpectedNoCovariance, kExpectedNoValueNorm,
                                           kExpectedNoCovariance | kExpectedNoValueNorm),
                         [](const auto& info) {
                           const int v = info.param;
                           return std::string(v & kExpectedNoCovariance ? "Mean" : "MeanAndCovariance") +
                                  (v & kExpectedNoValueNorm ? "" : "TimesValueNorm");
                         });

// A head with no query past the sinks yet (or a policy switched to a
// moment ago) expects uniform attention: the scores are the value norms.
TEST(ExpectedAttentionMoments, NoQueriesYetMeansUniformAttention) {
  const std::vector<float> keys = {1, 2, 3, 4, -1, 0, 2, 1}, values = {3, 4, 0, 0, 1, 0, 0, 0};
  const std::vector<float> inv_freq = {1.0f};
  const ExpectedReader reader{0, nullptr, nullptr, &inv_freq};
  SlotStatRule rule;
  rule.source = StatSource::Expected;
  rule.span = 16;
  std::vector<float> got(4);
  expected_attention_scores(keys.data(), values.data(), 4, 2, {&reader, 1}, 4, rule, got.data());
  EXPECT_FLOAT_EQ(got[0], 5.0f / 4);
  EXPECT_FLOAT_EQ(got[1], 0.0f);
  EXPECT_FLOAT_EQ(got[2], 1.0f / 4);
  EXPECT_FLOAT_EQ(got[3], 0.0f);
}

}  // namespace
}  // namespace kvscope
