#include <gtest/gtest.h>

#include "common/error.h"
#include "model/shapes.h"

namespace kvscope {
namespace {

TEST(Shapes, RealArchitecturesHaveTheirPublishedSizes) {
  // Parameter counts as published (embeddings included).
  EXPECT_NEAR(shape_config("pythia-160m").parameter_count() / 1e6, 162.3, 0.5);
  EXPECT_NEAR(shape_config("llama-2-7b").parameter_count() / 1e9, 6.74, 0.01);
  EXPECT_NEAR(shape_config("llama-3.2-1b").parameter_count() / 1e9, 1.236, 0.01);
  EXPECT_NEAR(shape_config("gpt2").parameter_count() / 1e6, 124.4, 0.5);
  EXPECT_NEAR(shape_config("opt-125m").parameter_count() / 1e6, 125.2, 0.5);
  EXPECT_NEAR(shape_config("opt-6.7b").parameter_count() / 1e9, 6.66, 0.01);
  EXPECT_NEAR(shape_config("gpt-j-6b").parameter_count() / 1e9, 6.05, 0.01);
  EXPECT_NEAR(shape_config("phi-3-mini").parameter_count() / 1e9, 3.82, 0.01);
}

TEST(Shapes, RandomWeightsAreDescribedNotAllocatedAndMatchTheConfig) {
  const auto c = shape_config("llama-2-7b");
  const auto w = random_weights(c, 1);
  EXPECT_EQ(w.numel(), c.parameter_count());
  for (const auto& name : known_shapes()) {  // GPT-J's one norm, OPT's position offset, head biases
    const auto cs = shape_config(name);
    EXPECT_EQ(random_weights(cs, 1).numel(), cs.parameter_count()) << name;
  }
  EXPECT_TRUE(w.layers[0].wq.random);
  EXPECT_EQ(w.layers[0].wq.data, nullptr);
  // Deterministic values: the same element twice, different elements differ.
  const auto small = random_weights(shape_config("pythia-160m"), 7);
  const auto a = small.layers[0].attn_norm_b.to_f32(), b = small.layers[0].attn_norm_b.to_f32();
  EXPECT_EQ(a, b);
  EXPECT_NE(a[0], a[1]);
  for (float v : small.layers[0].attn_norm_w.to_f32()) EXPECT_EQ(v, 1.0f);
}

TEST(Shapes, UnknownShapeListsKnownOnes) {
  try {
    shape_config("gpt5");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("unknown shape 'gpt5' (known: gpt2, pythia-160m"), std::string::npos);
  }
}

}  // namespace
}  // namespace kvscope
