// The counts a kind of sharing starts from when the window picks it
// (SharingLayout::with_kind): on models of every shape they must be a
// layout the engine accepts and that still holds KV, never the "mlkv:0"
// (0 layers, "0 B per token") the window once opened MLKV with.
#include <gtest/gtest.h>

#include <string>

#include "kv/sharing.h"
#include "model/config.h"

namespace kvscope {
namespace {

// A Llama-like shape: `layers` layers alike, `kv_heads` KV heads shared by
// `kv_heads * 4` query heads (1, 3, 8 KV heads: MQA, an odd GQA, wide GQA).
ModelConfig shape(int layers, int kv_heads) {
  ModelConfig c;
  c.model_type = "llama";
  c.n_layers = layers;
  c.n_kv_layers = layers;
  c.n_kv_heads = kv_heads;
  c.n_heads = kv_heads * 4;
  c.head_dim = 16;
  c.hidden = c.n_heads * c.head_dim;
  return c;
}

TEST(SharingDefaults, EveryKindStartsFromALayoutTheEngineAccepts) {
  using Kind = SharingLayout::Kind;
  for (const int layers : {1, 2, 30})
    for (const int kv_heads : {1, 3, 8})
      for (const Kind kind : {Kind::Native, Kind::MHA, Kind::GQA, Kind::MQA, Kind::MLKV}) {
        const ModelConfig cfg = shape(layers, kv_heads);
        // From the layout a new session has (native, no counts).
        const SharingLayout l = SharingLayout{}.with_kind(kind, cfg);
        SCOPED_TRACE(std::to_string(layers) + " layers, " + std::to_string(kv_heads) + " KV heads: " + l.str());
        EXPECT_EQ(l.kind, kind);
        std::pair<int, int> mg;
        ASSERT_NO_THROW(mg = check_sharing(cfg, l));
        const auto [m, g] = mg;
        EXPECT_GE(m, 1);
        EXPECT_LE(m, layers);
        EXPECT_GE(g, 1);
        ModelConfig shared = cfg;
        shared.n_kv_layers = m;
        shared.n_kv_heads = g;
        EXPECT_GT(shared.kv_bytes_per_token(2), 0);
        if (kind == Kind::MLKV) {
          // MLKV shares across layers where there are layers to share:
          // fewer owning layers than layers, the model's own KV heads.
          EXPECT_GT(l.kv_layers, 0);
          EXPECT_EQ(m, layers > 1 ? layers / 2 : 1);
          EXPECT_EQ(g, kv_heads);
        }
      }
}

// Counts the user already set are kept where they work; MLKV's layer count
// out of the model's range (a layout from a deeper model) starts again.
TEST(SharingDefaults, KeepsCountsThatWorkAndReplacesOnesThatDoNot) {
  const ModelConfig cfg = shape(30, 8);
  SharingLayout gqa;
  gqa.kind = SharingLayout::Kind::GQA;
  gqa.kv_heads = 2;
  const SharingLayout mlkv = gqa.with_kind(SharingLayout::Kind::MLKV, cfg);
  EXPECT_EQ(mlkv.kv_heads, 2);
  EXPECT_EQ(mlkv.kv_layers, 15);
  EXPECT_EQ(check_sharing(cfg, mlkv), std::make_pair(15, 2));

  SharingLayout deep;
  deep.kind = SharingLayout::Kind::MLKV;
  deep.kv_layers = 40;
  EXPECT_EQ(deep.with_kind(SharingLayout::Kind::MLKV, cfg).kv_layers, 15);
  deep.kv_layers = 6;
  EXPECT_EQ(deep.with_kind(SharingLayout::Kind::MLKV, cfg).kv_layers, 6);
}

}  // namespace
}  // namespace kvscope
