// KV-sharing layouts: bytes per token for MHA -> GQA -> MQA -> MLKV
// (2 s m g d b), the MLKV owning layers, and the conversion by averaging.
#include <gtest/gtest.h>

#include "backend/backend.h"
#include "common/error.h"
#include "kv/kv_layout.h"
#include "kv/sharing.h"
#include "model/loader.h"
#include "model/shapes.h"
#include "test_util.h"

namespace kvscope {
namespace {

TEST(Sharing, BytesFollowTheMlkvTable) {
  // pythia-160m: 12 layers, 12 heads, head dim 64, fp16.
  ModelConfig c = shape_config("pythia-160m");
  auto bytes = [&](const std::string& layout) {
    ModelConfig t = c;
    const auto [m, g] = SharingLayout::parse(layout).resolve(t);
    t.n_kv_layers = m;
    t.n_kv_heads = g;
    return KvLayout::from_config(t).bytes(1000, 2);
  };
  EXPECT_EQ(bytes("mha"), 2LL * 1000 * 12 * 12 * 64 * 2);
  EXPECT_EQ(bytes("gqa:4"), 2LL * 1000 * 12 * 4 * 64 * 2);
  EXPECT_EQ(bytes("mqa"), 2LL * 1000 * 12 * 1 * 64 * 2);
  EXPECT_EQ(bytes("mlkv:6"), 2LL * 1000 * 6 * 12 * 64 * 2);
  EXPECT_EQ(bytes("mlkv:4:1"), 2LL * 1000 * 4 * 1 * 64 * 2);
  EXPECT_EQ(bytes("mlkv:1:1"), 2LL * 1000 * 1 * 1 * 64 * 2);  // one KV head for the whole model
}

TEST(Sharing, ParseAndRefuse) {
  EXPECT_EQ(SharingLayout::parse("gqa:2").str(), "gqa:2");
  EXPECT_EQ(SharingLayout::parse("mlkv:3:2").str(), "mlkv:3:2");
  for (const char* bad : {"gqa", "gqa:0", "mlkv", "mlkv:a", "grouped", "mqa:2"}) {
    try {
      SharingLayout::parse(bad);
      FAIL() << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.field(), "sharing") << e.what();
    }
  }
  auto m = load_model_files(test::model_dir("llama_gqa"));  // 4 query heads, 2 KV heads
  EXPECT_THROW(convert_sharing(m.config, m.weights, SharingLayout::parse("gqa:3")), Error);
  EXPECT_THROW(convert_sharing(m.config, m.weights, SharingLayout::parse("mlkv:5")), Error);
}

// Gemma 3's layers differ (sliding and full, two RoPE bases, a key norm per
// layer): merging KV heads within a layer works, sharing across layers is
// refused by name rather than computed with one layer's rotation.
TEST(Sharing, Gemma3MergesHeadsButNotLayers) {
  auto m = load_model_files(test::model_dir("gemma3"));  // 3 layers, 2 KV heads
  try {
    convert_sharing(m.config, m.weights, SharingLayout::parse("mlkv:1"));
    FAIL() << "mlkv:1 accepted on gemma3";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot share KV across layers"), std::string::npos) << e.what();
  }
  convert_sharing(m.config, m.weights, SharingLayout::parse("mqa"));
  EXPECT_EQ(m.config.n_kv_heads, 1);
  BackendOptions bo;
  bo.max_tokens = 24;
  auto be = make_backend(Device::Cpu, m.config, m.weights, bo);
  ForwardOptions fo;
  ForwardOutput out;
  be->forward(std::vector<int>(20, 7), fo, out);  // past the window of 8
  for (float x : out.logits) ASSERT_TRUE(std::isfinite(x));
}

TEST(Sharing, GqaToMqaAveragesTheKvHeads) {
  auto m = load_model_files(test::model_dir("llama_gqa"));
  const auto wk = m.weights.layers[1].wk.to_f32();  // [2 * 16, 48]
  const int hd = m.config.head_dim, d = m.config.hidden;
  convert_sharing(m.config, m.weights, SharingLayout::parse("mqa"));
  EXPECT_EQ(m.config.n_kv_heads, 1);
  const auto merged = m.weights.layers[1].wk.to_f32();
  ASSERT_EQ(merged.size(), size_t(hd) * d);
  for (int r = 0; r < hd; ++r)
    for (int c = 0; c < d; ++c)
      EXPECT_FLOAT_EQ(merged[r * d + c], 0.5f * (wk[r * d + c] + wk[(hd + r) * d + c]));
}

TEST(Sharing, MlkvAveragesAcrossTheLayersOfAGroupAndTheModelStillRuns) {
  auto m = load_model_files(test::model_dir("llama_gqa"));  // 2 layers
  const auto v0 = m.weights.layers[0].wv.to_f32(), v1 = m.weights.layers[1].wv.to_f32();
  convert_sharing(m.config, m.weights, SharingLayout::parse("mlkv:1"));
  EXPECT_EQ(m.config.n_kv_layers, 1);
  EXPECT_TRUE(m.weights.layers[1].wv.empty());
  const auto v = m.weights.layers[0].wv.to_f32();
  for (std::size_t i = 0; i < v.size(); ++i) EXPECT_FLOAT_EQ(v[i], 0.5f * (v0[i] + v1[i]));
  BackendOptions bo;
  bo.max_tokens = 8;
  auto be = make_backend(Device::Cpu, m.config, m.weights, bo);
  ForwardOptions fo;
  ForwardOutput out;
  be->forward(std::vector<int>{1, 2, 3}, fo, out);
  EXPECT_EQ(be->kv().layout().n_segments(), 2);  // one layer x 2 KV heads
  for (float x : out.logits) ASSERT_TRUE(std::isfinite(x));
}

TEST(Sharing, ConvertingAStoredMlkvCheckpointFurther) {
  auto m = load_model_files(test::model_dir("llama_mlkv"));  // 4 layers, owners 0 and 2, 2 KV heads
  const auto k0 = m.weights.layers[0].wk.to_f32(), k2 = m.weights.layers[2].wk.to_f32();
  convert_sharing(m.config, m.weights, SharingLayout::parse("mlkv:1:2"));
  // Four layers read two sources, twice each: the average weighs them equally.
  const auto k = m.weights.layers[0].wk.to_f32();
  for (std::size_t i = 0; i < k.size(); ++i) EXPECT_NEAR(k[i], 0.5f * (k0[i] + k2[i]), 1e-6);
  // Growing back to every layer duplicates exactly.
  auto n = load_model_files(test::model_dir("llama_mlkv"));
  convert_sharing(n.config, n.weights, SharingLayout::parse("mha"));
  EXPECT_EQ(n.config.n_kv_layers, 4);
  EXPECT_EQ(n.config.n_kv_heads, 4);
  const auto k1 = n.weights.layers[1].wk.to_f32();  // layer 1 read owner 0: its copy
  const int hd = n.config.head_dim, d = n.config.hidden;
  for (int r = 0; r < hd; ++r)
    for (int c = 0; c < d; ++c) EXPECT_FLOAT_EQ(k1[r * d + c], k0[r * d + c]);  // head 0 copies old head 0
}

}  // namespace
}  // namespace kvscope
