// The CPU reference against Hugging Face transformers, on tiny random
// checkpoints of every supported architecture variant: logits within 1e-4 of
// the largest |logit|, attention probabilities within 1e-5, and the 32-token
// greedy continuation identical (decoded one token at a time).
#include <gtest/gtest.h>

#include "backend/backend.h"
#include "golden.h"
#include "model/loader.h"

namespace kvscope {
namespace {

class GoldenCpu : public ::testing::TestWithParam<std::string> {};

TEST_P(GoldenCpu, PrefillLogitsAndAttentionMatchHuggingFace) {
  const auto g = test::Golden::load(GetParam());
  const auto m = load_model_files(test::model_dir(GetParam()));
  const int V = m.config.vocab_size, n = static_cast<int>(g.prompt.size());
  BackendOptions bo;
  bo.max_tokens = n + static_cast<int>(g.greedy.size());
  auto be = make_backend(Device::Cpu, m.config, m.weights, bo);
  ForwardOptions fo;
  fo.all_logits = true;
  for (int l = 0; l < m.config.n_layers; ++l) fo.capture_layers.push_back(l);
  ForwardOutput out;
  be->forward(g.prompt, fo, out);

  ASSERT_EQ(out.n_logits, n);
  const auto want = g.logits.as_f32();
  const std::span<const float> want_prompt(want.data(), size_t(n) * V);
  const double rel = test::max_rel_error(out.logits, want_prompt);
  EXPECT_LT(rel, 1e-4) << "logits differ from HF by " << rel << " of the largest |logit|";

  const auto attn = g.attn.as_f32();  // [L, H, n, n]
  const int H = m.config.n_heads;
  ASSERT_EQ(out.attention.size(), size_t(m.config.n_layers));
  double worst = 0;
  for (int l = 0; l < m.config.n_layers; ++l) {
    const auto& a = out.attention[l];
    ASSERT_EQ(a.layer, l);
    for (int h = 0; h < H; ++h) {
      ASSERT_EQ(a.row_len[h], n);
      for (int i = 0; i < n; ++i) {
        const float* row = a.prob_row(h, i);
        const float* lrow = a.logit_row(h, i);
        double sum = 0;
        for (int j = 0; j < n; ++j) {
          worst = std::max(worst, std::abs(double(row[j]) - attn[((size_t(l) * H + h) * n + i) * n + j]));
          sum += row[j];
          if (j > i) {
            EXPECT_EQ(row[j], 0.0f);
            EXPECT_TRUE(std::isinf(lrow[j]) && lrow[j] < 0);
          }
        }
        EXPECT_NEAR(sum, 1.0, 1e-5);
      }
    }
  }
  EXPECT_LT(worst, 1e-5) << "attention probabilities differ from HF by " << worst;
}

TEST_P(GoldenCpu, GreedyContinuationIsIdenticalAndDecodeLogitsMatch) {
  const auto g = test::Golden::load(GetParam());
  const auto m = load_model_files(test::model_dir(GetParam()));
  const int V = m.config.vocab_size, n = static_cast<int>(g.prompt.size());
  BackendOptions bo;
  bo.max_tokens = n + static_cast<int>(g.greedy.size());
  auto be = make_backend(Device::Cpu, m.config, m.weights, bo);
  ForwardOptions fo;
  ForwardOutput out;
  be->forward(g.prompt, fo, out);
  const auto want = g.logits.as_f32();
  std::vector<int> got;
  double worst = 0;
  for (std::size_t s = 0; s < g.greedy.size(); ++s) {
    const std::span<const float> row(want.data() + (size_t(n) + s - 1) * V, V);
    worst = std::max(worst, test::max_rel_error(std::span<const float>(out.logits.data(), V), row));
    int best = 0;
    for (int i = 1; i < V; ++i)
      if (out.logits[i] > out.logits[best]) best = i;
    got.push_back(best);
    const int tok[1] = {best};  // free-running greedy decoding
    be->forward(tok, fo, out);
  }
  EXPECT_EQ(got, g.greedy);
  EXPECT_LT(worst, 1e-4) << "decode-step logits differ from HF by " << worst;
}

INSTANTIATE_TEST_SUITE_P(AllArchitectures, GoldenCpu, ::testing::ValuesIn(test::golden_models()));

}  // namespace
}  // namespace kvscope
