// forward_pair(): a policy run and its full-cache reference stepped together
// through the same matrix products give, bit for bit, what two forward()
// calls give: logits, attention captures, slot statistics and the sampled
// token, with one run evicting and accumulating a statistic and the other
// not, on every architecture's layout.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "common/error.h"
#include "golden.h"
#include "model/loader.h"
#include "float_rows.h"

namespace kvscope {
namespace {

using testing_rows::same_bits;

void expect_same_output(const ForwardOutput& a, const ForwardOutput& b) {
  EXPECT_EQ(a.n_logits, b.n_logits);
  EXPECT_TRUE(same_bits(a.logits, b.logits)) << "logits";
  ASSERT_EQ(a.attention.size(), b.attention.size());
  for (std::size_t i = 0; i < a.attention.size(); ++i) {
    EXPECT_EQ(a.attention[i].layer, b.attention[i].layer);
    EXPECT_EQ(a.attention[i].row_len, b.attention[i].row_len);
    EXPECT_TRUE(same_bits(a.attention[i].probs, b.attention[i].probs)) << "layer " << a.attention[i].layer;
  }
}

class ForwardPair : public ::testing::TestWithParam<std::string> {};

TEST_P(ForwardPair, EqualsTwoSeparateCallsBitForBit) {
  const auto m = load_model_files(test::model_dir(GetParam()));
  const auto g = test::Golden::load(GetParam());
  const int n = std::min<int>(12, static_cast<int>(g.prompt.size()));
  const std::vector<int> prompt(g.prompt.begin(), g.prompt.begin() + n);
  BackendOptions bo;
  bo.max_tokens = n + 10;
  // Paired: policy run p1 steps with reference f1; alone: p2 and f2.
  auto p1 = make_backend(Device::Cpu, m.config, m.weights, bo);
  auto f1 = p1->spawn(bo), p2 = p1->spawn(bo), f2 = p1->spawn(bo);

  ForwardOptions po;  // the policy run: H2O's statistic, captures of two layers
  po.stats.source = StatSource::Attention;
  po.capture_layers = {0, m.config.n_layers - 1};
  po.capture_last_query_only = true;
  po.capture_logits = false;
  int alongside_calls = 0;
  ForwardOptions fo;  // the reference: every layer captured, no statistic
  for (int l = 0; l < m.config.n_layers; ++l) fo.capture_layers.push_back(l);
  fo.capture_last_query_only = true;
  fo.capture_logits = false;

  ForwardOutput op1, of1, op2, of2;
  p1->forward(prompt, po, op1);  // prefill one by one (a prompt is not paired)
  f1->forward(prompt, fo, of1);
  p2->forward(prompt, po, op2);
  f2->forward(prompt, fo, of2);
  for (int step = 0; step < 8; ++step) {
    SCOPED_TRACE("step " + std::to_string(step));
    // Evict the policy run's second-oldest slot everywhere (both copies alike).
    if (step % 2 == 1)
      for (int s = 0; s < p1->kv().layout().n_segments(); ++s) {
        std::vector<int> keep;
        for (int j = 0; j < p1->kv().len(s); ++j)
          if (j != 1) keep.push_back(j);
        p1->retain(s, keep);
        p2->retain(s, keep);
      }
    const int tok[1] = {p2->sample(SamplingParams{}, step)};
    ForwardOptions po_step = po;
    po_step.alongside_head = [&] { ++alongside_calls; };
    p1->forward_pair(tok, po_step, op1, *f1, fo, of1);
    p2->forward(tok, po, op2);
    f2->forward(tok, fo, of2);
    expect_same_output(op1, op2);
    expect_same_output(of1, of2);
    for (int s = 0; s < p1->kv().layout().n_segments(); ++s) {
      EXPECT_TRUE(same_bits(p1->slot_stats(s), p2->slot_stats(s))) << "segment " << s;
      EXPECT_EQ(p1->kv().positions(s), p2->kv().positions(s));
      EXPECT_EQ(f1->kv().positions(s), f2->kv().positions(s));
    }
    EXPECT_EQ(p1->sample(SamplingParams{}, 99), p2->sample(SamplingParams{}, 99));
    EXPECT_EQ(f1->sample(SamplingParams{}, 99), f2->sample(SamplingParams{}, 99));
  }
  EXPECT_EQ(alongside_calls, 8);
  // The pairing was a real test: eviction made the two runs' logits differ.
  EXPECT_FALSE(same_bits(op1.logits, of1.logits));
}

// A step whose logits stay in the backend (logits_to_host false, as a
// generator asks: the CPU computes them straight into what sample() reads)
// samples exactly what the same step with its logits on the host gives,
// greedy and at a temperature, and hands back no logits.
TEST_P(ForwardPair, LogitsLeftForSamplingSampleAsTheLogitsOnTheHost) {
  const auto m = load_model_files(test::model_dir(GetParam()));
  const auto g = test::Golden::load(GetParam());
  const int n = std::min<int>(8, static_cast<int>(g.prompt.size()));
  const std::vector<int> prompt(g.prompt.begin(), g.prompt.begin() + n);
  BackendOptions bo;
  bo.max_tokens = n + 6;
  auto host = make_backend(Device::Cpu, m.config, m.weights, bo);
  auto kept = host->spawn(bo);
  ForwardOptions on_host, left;
  left.logits_to_host = false;
  ForwardOutput oh, ol;
  host->forward(prompt, on_host, oh);
  kept->forward(prompt, left, ol);
  for (int s = 0; s < 5; ++s) {
    EXPECT_EQ(ol.n_logits, 0);
    EXPECT_TRUE(ol.logits.empty());
    ASSERT_EQ(oh.n_logits, 1);
    const SamplingParams warm{0.8f, 0, 1.0f, 17};
    EXPECT_EQ(kept->sample(warm, uint64_t(s)), host->sample(warm, uint64_t(s))) << "step " << s;
    const int t = host->sample(SamplingParams{}, uint64_t(s));
    EXPECT_EQ(kept->sample(SamplingParams{}, uint64_t(s)), t) << "step " << s;
    const int tok[1] = {t};
    host->forward(tok, on_host, oh);
    kept->forward(tok, left, ol);
  }
}

INSTANTIATE_TEST_SUITE_P(Models, ForwardPair,
                         ::testing::Values("llama_gqa", "gpt2", "gpt_neox_parallel", "qwen2_fp16_sharded", "qwen3_bf16",
                                           "llama_mlkv", "gemma3", "gptj_fp16", "opt", "opt_postnorm_proj_bf16", "phi3",
                                           "mpt"));

TEST(ForwardPairErrors, AFailingRunLeavesBothUntouched) {
  const auto m = load_model_files(test::model_dir("llama_gqa"));
  BackendOptions small, big;
  small.max_tokens = 3;
  big.max_tokens = 16;
  auto a = make_backend(Device::Cpu, m.config, m.weights, big);
  auto b = a->spawn(small);
  ForwardOptions fo;
  ForwardOutput oa, ob;
  const std::vector<int> three = {1, 2, 3};
  a->forward(three, fo, oa);
  b->forward(three, fo, ob);  // b is full
  const int tok[1] = {4};
  EXPECT_THROW(a->forward_pair(tok, fo, oa, *b, fo, ob), Error);
  EXPECT_EQ(a->tokens_seen(), 3);
  EXPECT_EQ(b->tokens_seen(), 3);
  EXPECT_EQ(a->kv().len(0), 3);
}

TEST(ForwardPairErrors, RunsOfDifferentModelsStillGetTheirOwnResults) {
  // Not pairable (other weights): forward_pair falls back to one call each.
  const auto m1 = load_model_files(test::model_dir("llama_gqa"));
  const auto m2 = load_model_files(test::model_dir("mistral"));
  BackendOptions bo;
  bo.max_tokens = 8;
  auto a = make_backend(Device::Cpu, m1.config, m1.weights, bo);
  auto b = make_backend(Device::Cpu, m2.config, m2.weights, bo);
  auto a2 = a->spawn(bo);
  auto b2 = b->spawn(bo);
  ForwardOptions fo;
  ForwardOutput oa, ob, oa2, ob2;
  const int tok[1] = {5};
  a->forward_pair(tok, fo, oa, *b, fo, ob);
  a2->forward(tok, fo, oa2);
  b2->forward(tok, fo, ob2);
  EXPECT_TRUE(same_bits(oa.logits, oa2.logits));
  EXPECT_TRUE(same_bits(ob.logits, ob2.logits));
}

}  // namespace
}  // namespace kvscope
