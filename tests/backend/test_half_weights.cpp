// --weights f16 on the CPU backend: the linear layers' matrices stored in
// IEEE half and widened exactly, so a model run with half weights is, bit
// for bit, the fp32 run of the same model with those matrices rounded to
// half (prompt and decode, every architecture's layout); and within the
// rounding of half weights of transformers' fp32 logits.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "common/error.h"
#include "golden.h"
#include "io/dtype.h"
#include "model/loader.h"
#include "float_rows.h"

namespace kvscope {
namespace {

using testing_rows::same_bits;

WeightTensor rounded_to_half(const WeightTensor& t) {
  if (t.empty()) return t;
  std::vector<float> v = t.to_f32();
  for (float& x : v) x = f16_to_f32(f32_to_f16(x));
  return WeightTensor::owned_f32(std::move(v), t.shape);
}

// The matrices --weights f16 stores in half, rounded in fp32 storage; the
// embedding, norms and biases untouched (a tied head is rounded as the
// head only).
ModelWeights with_matrices_rounded(ModelWeights w) {
  for (auto& L : w.layers)
    for (WeightTensor* t : {&L.wq, &L.wk, &L.wv, &L.wo, &L.w_up, &L.w_gate, &L.w_down}) *t = rounded_to_half(*t);
  w.lm_head = rounded_to_half(w.lm_head);
  return w;
}

class HalfWeights : public ::testing::TestWithParam<std::string> {};

TEST_P(HalfWeights, EqualTheFp32RunOnTheRoundedMatricesBitForBit) {
  const auto m = load_model_files(test::model_dir(GetParam()));
  const auto g = test::Golden::load(GetParam());
  BackendOptions half, full;
  half.max_tokens = full.max_tokens = static_cast<int>(g.prompt.size()) + 8;
  half.weights = WeightFormat::F16;
  auto a = make_backend(Device::Cpu, m.config, m.weights, half);
  auto b = make_backend(Device::Cpu, m.config, with_matrices_rounded(m.weights), full);
  ForwardOptions fo;
  fo.all_logits = true;
  for (int l = 0; l < m.config.n_layers; ++l) fo.capture_layers.push_back(l);
  ForwardOutput oa, ob;
  a->forward(g.prompt, fo, oa);  // the prompt: sgemm on the widened band
  b->forward(g.prompt, fo, ob);
  EXPECT_TRUE(same_bits(oa.logits, ob.logits)) << "prompt logits";
  fo.all_logits = false;
  for (int s = 0; s < 8; ++s) {  // decode: the half matrix-vector product
    const int tok[1] = {g.greedy[s]};
    a->forward(tok, fo, oa);
    b->forward(tok, fo, ob);
    ASSERT_TRUE(same_bits(oa.logits, ob.logits)) << "decode step " << s;
    ASSERT_EQ(oa.attention.size(), ob.attention.size());
    for (std::size_t i = 0; i < oa.attention.size(); ++i) EXPECT_TRUE(same_bits(oa.attention[i].probs, ob.attention[i].probs));
  }
}

TEST_P(HalfWeights, StayWithinHalfRoundingOfTransformers) {
  const auto m = load_model_files(test::model_dir(GetParam()));
  const auto g = test::Golden::load(GetParam());
  BackendOptions bo;
  bo.max_tokens = static_cast<int>(g.prompt.size());
  bo.weights = WeightFormat::F16;
  auto be = make_backend(Device::Cpu, m.config, m.weights, bo);
  ForwardOptions fo;
  fo.all_logits = true;
  ForwardOutput out;
  be->forward(g.prompt, fo, out);
  const auto want = g.logits.as_f32();
  const double rel = test::max_rel_error(out.logits, std::span<const float>(want.data(), out.logits.size()));
  // Half keeps 11 significant bits: a few parts in a thousand after a few
  // layers of tiny random models, far above fp32's 1e-4 bound and far below
  // a different model.
  EXPECT_LT(rel, 2e-2) << "logits differ from HF by " << rel;
  // (An fp16 checkpoint's matrices are halves already: nothing to round.)
  if (m.config.dtype == DType::F32) EXPECT_GT(rel, 1e-5) << "no sign of half rounding at all";
}

INSTANTIATE_TEST_SUITE_P(Models, HalfWeights,
                         ::testing::Values("llama_gqa", "gpt2", "gpt_neox_parallel", "qwen2_fp16_sharded", "qwen3_bf16",
                                           "llama_mlkv", "gemma3", "gptj_fp16", "opt", "opt_postnorm_proj_bf16", "phi3",
                                           "mpt"));

TEST(HalfWeightsErrors, AWeightBeyondHalfRangeIsRefusedByName) {
  auto m = load_model_files(test::model_dir("llama_gqa"));
  std::vector<float> q = m.weights.layers[1].wq.to_f32();
  q[5] = 1e6f;
  m.weights.layers[1].wq = WeightTensor::owned_f32(std::move(q), m.weights.layers[1].wq.shape);
  BackendOptions bo;
  bo.max_tokens = 8;
  bo.weights = WeightFormat::F16;
  try {
    make_backend(Device::Cpu, m.config, m.weights, bo);
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("weights: layer 1 q: weight 1000000"), std::string::npos) << e.what();
  }
  EXPECT_EQ(parse_weight_format("f16"), WeightFormat::F16);
  EXPECT_THROW(parse_weight_format("bf16"), Error);
}

}  // namespace
}  // namespace kvscope
