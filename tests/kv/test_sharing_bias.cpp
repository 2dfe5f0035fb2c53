// Sharing conversion of checkpoints whose K/V projections carry biases
// (docs/policies.md, "KV sharing": weights AND biases of the merged heads and
// layers are averaged uniformly): Qwen2 (GQA, fp16, qkv biases) and
// GPT-NeoX (MHA, attention_bias), against averages computed here by hand.
#include <gtest/gtest.h>

#include <cmath>

#include "backend/backend.h"
#include "kv/sharing.h"
#include "model/loader.h"
#include "test_util.h"

namespace kvscope {
namespace {

struct Kv {
  std::vector<float> wk, wv, bk, bv;
};

std::vector<Kv> kv_of(const ModelFiles& m) {
  std::vector<Kv> out;
  for (const auto& L : m.weights.layers)
    out.push_back({L.wk.empty() ? std::vector<float>{} : L.wk.to_f32(), L.wv.empty() ? std::vector<float>{} : L.wv.to_f32(),
                   L.bk.empty() ? std::vector<float>{} : L.bk.to_f32(), L.bv.empty() ? std::vector<float>{} : L.bv.to_f32()});
  return out;
}

void expect_runs(const ModelFiles& m) {
  BackendOptions bo;
  bo.max_tokens = 8;
  auto be = make_backend(Device::Cpu, m.config, m.weights, bo);
  ForwardOptions fo;
  ForwardOutput out;
  be->forward(std::vector<int>{1, 2, 3}, fo, out);
  for (float x : out.logits) ASSERT_TRUE(std::isfinite(x));
}

TEST(SharingBias, Qwen2GqaToMqaAveragesTheKvBiases) {
  auto m = load_model_files(test::model_dir("qwen2_fp16_sharded"));  // 4 query heads, 2 KV heads, head dim 12
  ASSERT_EQ(m.config.n_kv_heads, 2);
  const int hd = m.config.head_dim, d = m.config.hidden;
  ASSERT_EQ(hd, 12);
  const auto old = kv_of(m);
  ASSERT_EQ(old[0].bk.size(), size_t(2 * hd));  // the checkpoint has K/V biases
  ASSERT_EQ(old[0].bv.size(), size_t(2 * hd));
  bool biases_differ = false;  // otherwise any average would pass
  for (int r = 0; r < hd; ++r) biases_differ |= old[1].bk[r] != old[1].bk[hd + r];
  ASSERT_TRUE(biases_differ);
  convert_sharing(m.config, m.weights, SharingLayout::parse("mqa"));
  EXPECT_EQ(m.config.n_kv_heads, 1);
  const auto now = kv_of(m);
  for (int l = 0; l < 2; ++l) {
    ASSERT_EQ(now[l].bk.size(), size_t(hd));
    ASSERT_EQ(now[l].bv.size(), size_t(hd));
    for (int r = 0; r < hd; ++r) {
      EXPECT_NEAR(now[l].bk[r], (double(old[l].bk[r]) + old[l].bk[hd + r]) / 2, 1e-6) << "layer " << l << " row " << r;
      EXPECT_NEAR(now[l].bv[r], (double(old[l].bv[r]) + old[l].bv[hd + r]) / 2, 1e-6) << "layer " << l << " row " << r;
      for (int c = 0; c < d; ++c)
        EXPECT_NEAR(now[l].wk[r * d + c], (double(old[l].wk[r * d + c]) + old[l].wk[(hd + r) * d + c]) / 2, 1e-6);
    }
  }
  expect_runs(m);
}

TEST(SharingBias, Qwen2ToOneKvHeadForTheWholeModelAveragesLayersAndHeads) {
  auto m = load_model_files(test::model_dir("qwen2_fp16_sharded"));
  const int hd = m.config.head_dim;
  const auto old = kv_of(m);
  convert_sharing(m.config, m.weights, SharingLayout::parse("mlkv:1:1"));
  EXPECT_EQ(m.config.n_kv_layers, 1);
  EXPECT_EQ(m.config.n_kv_heads, 1);
  const auto now = kv_of(m);
  EXPECT_TRUE(now[1].bk.empty());  // layer 1 owns no KV any more
  EXPECT_TRUE(now[1].bv.empty());
  ASSERT_EQ(now[0].bk.size(), size_t(hd));
  for (int r = 0; r < hd; ++r) {
    // Two layers x two KV heads, each a quarter.
    const double bk = (double(old[0].bk[r]) + old[0].bk[hd + r] + old[1].bk[r] + old[1].bk[hd + r]) / 4;
    const double bv = (double(old[0].bv[r]) + old[0].bv[hd + r] + old[1].bv[r] + old[1].bv[hd + r]) / 4;
    EXPECT_NEAR(now[0].bk[r], bk, 1e-6) << r;
    EXPECT_NEAR(now[0].bv[r], bv, 1e-6) << r;
  }
  expect_runs(m);
}

TEST(SharingBias, GptNeoxMhaToGqaAndMlkvAverageTheKvBiases) {
  // 4 heads, 2 layers, fused query_key_value split by the loader.
  auto m = load_model_files(test::model_dir("gpt_neox_parallel"));
  ASSERT_EQ(m.config.n_heads, 4);
  ASSERT_EQ(m.config.n_kv_heads, 4);
  const int hd = m.config.head_dim;
  const auto old = kv_of(m);
  ASSERT_EQ(old[0].bk.size(), size_t(4 * hd));
  convert_sharing(m.config, m.weights, SharingLayout::parse("gqa:2"));
  auto now = kv_of(m);
  for (int l = 0; l < 2; ++l) {
    ASSERT_EQ(now[l].bk.size(), size_t(2 * hd));
    for (int j = 0; j < 2; ++j)
      for (int r = 0; r < hd; ++r) {
        // New KV head j merges old heads 2j and 2j + 1.
        const double bk = (double(old[l].bk[(2 * j) * hd + r]) + old[l].bk[(2 * j + 1) * hd + r]) / 2;
        const double bv = (double(old[l].bv[(2 * j) * hd + r]) + old[l].bv[(2 * j + 1) * hd + r]) / 2;
        EXPECT_NEAR(now[l].bk[j * hd + r], bk, 1e-6) << l << " " << j << " " << r;
        EXPECT_NEAR(now[l].bv[j * hd + r], bv, 1e-6) << l << " " << j << " " << r;
      }
  }
  expect_runs(m);

  // Layers merged, heads kept: each bias the mean of the two layers'.
  auto n = load_model_files(test::model_dir("gpt_neox_parallel"));
  convert_sharing(n.config, n.weights, SharingLayout::parse("mlkv:1"));
  EXPECT_EQ(n.config.n_kv_layers, 1);
  EXPECT_EQ(n.config.n_kv_heads, 4);
  now = kv_of(n);
  ASSERT_EQ(now[0].bk.size(), size_t(4 * hd));
  for (int i = 0; i < 4 * hd; ++i) {
    EXPECT_NEAR(now[0].bk[i], (double(old[0].bk[i]) + old[1].bk[i]) / 2, 1e-6) << i;
    EXPECT_NEAR(now[0].bv[i], (double(old[0].bv[i]) + old[1].bv[i]) / 2, 1e-6) << i;
  }
  expect_runs(n);
}

}  // namespace
}  // namespace kvscope
