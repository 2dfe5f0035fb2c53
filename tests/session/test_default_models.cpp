// The bundled models in assets/models: the base GQA model and its MLKV
// variant load with the layout their config.json declares, run sessions and
// are what kvscope-cli uses when no model is given.
#include <gtest/gtest.h>

#include <fstream>

#include "bundle/model_bundle.h"
#include "io/json_file.h"
#include "reports/evaluation.h"
#include "session/session.h"
#include "test_util.h"

namespace kvscope {
namespace {

std::filesystem::path asset(const std::string& rel) { return assets_dir() / rel; }

std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

TEST(DefaultModels, BaseIsALlamaWithGroupedKv) {
  const ModelBundle b = load_model_bundle(default_model_dir());
  const ModelConfig& c = b.config();
  EXPECT_EQ(c.n_layers, 4);
  EXPECT_EQ(c.n_heads, 8);
  EXPECT_EQ(c.n_kv_heads, 2);  // GQA: fewer KV heads than query heads
  EXPECT_EQ(c.n_kv_layers, 4);
  EXPECT_GE(c.max_positions, 512);
  EXPECT_LE(c.vocab_size, 4096);
}

TEST(DefaultModels, MlkvVariantSharesKvAcrossLayerPairs) {
  const ModelBundle b = load_model_bundle(asset("models/kvscope-tiny-mlkv"));
  const ModelConfig& c = b.config();
  EXPECT_EQ(c.n_layers, 4);
  EXPECT_EQ(c.n_kv_layers, 2);
  EXPECT_EQ(c.owning_layers(), (std::vector<int>{0, 2}));
  EXPECT_EQ(c.kv_source(), (std::vector<int>{0, 0, 1, 1}));
}

TEST(DefaultModels, MlkvSessionEvictsPerOwningLayer) {
  auto b = std::make_shared<const ModelBundle>(load_model_bundle(asset("models/kvscope-tiny-mlkv")));
  SessionConfig cfg;
  cfg.prompt = read_text(asset("prompts/story.txt"));
  cfg.max_new_tokens = 6;
  cfg.stop_at_eos = false;
  cfg.policy.kind = PolicyKind::H2O;
  cfg.policy.budget = Amount::parse("40%", "budget");
  Session s(b, cfg);
  s.prefill();
  s.run_to_end();
  const int rows = s.current_row() + 1;
  ASSERT_EQ(rows, 7);
  // Two owning layers x two KV heads: four segments (eviction units), each
  // read by 2 layers x 4 query heads.
  const ModelConfig& mc = s.model_config();
  ASSERT_EQ(mc.n_kv_layers, 2);
  ASSERT_EQ(mc.n_kv_heads, 2);
  const KvLayout& lay = s.recorder().layout();
  EXPECT_EQ(lay.n_segments(), 4);
  EXPECT_EQ(s.backend().kv().layout().n_segments(), 4);
  EXPECT_EQ(lay.owners, (std::vector<int>{0, 2}));
  for (int l = 0; l < 4; ++l)
    for (int h = 0; h < 8; ++h) EXPECT_EQ(lay.segment_of(l, h), (l / 2) * 2 + h / 4) << l << " " << h;
  const auto& masks = s.recorder().masks();
  EXPECT_EQ(masks.size(), static_cast<std::size_t>(rows) * 4 * s.recorder().positions());
  // Each segment decides alone (kv_head granularity) and holds k slots.
  const int k = s.policy().resolved().k;
  for (int seg = 0; seg < 4; ++seg) EXPECT_EQ(s.backend().kv().len(seg), k) << seg;
  EXPECT_EQ(s.backend().kv().total_slots(), 4LL * k);
  // KV bytes = 2 s m g d bytes with m = 2, g = 2, d = 32, 4-byte CPU
  // elements: half the base model's (m = 4) at the same tokens.
  const int64_t tokens = static_cast<int64_t>(s.tokens().size());
  EXPECT_EQ(s.kv_bytes_full(), 2 * tokens * 2 * 2 * 32 * 4);
  EXPECT_EQ(s.kv_bytes(), 2LL * 4 * k * 32 * 4);
  EXPECT_LT(s.kv_bytes(), s.kv_bytes_full());
  const auto base = std::make_shared<const ModelBundle>(load_model_bundle(default_model_dir()));
  EXPECT_EQ(KvLayout::from_config(base->config()).bytes(tokens, s.backend().kv_element_bytes()), 2 * s.kv_bytes_full());
  // The base model's own session at the same tokens reports twice as many full-cache bytes.
  SessionConfig full_cfg = cfg;
  full_cfg.policy.kind = PolicyKind::Full;
  full_cfg.recording.metrics = false;
  Session bs(base, full_cfg);
  bs.run_to_end();
  ASSERT_EQ(bs.tokens().size(), s.tokens().size());
  EXPECT_EQ(bs.kv_bytes_full(), 2 * s.kv_bytes_full());
  EXPECT_EQ(bs.kv_bytes(), bs.kv_bytes_full());
}

// The greedy continuation of an example prompt (assets/prompts/KIND.txt)
// under a policy, and the answer the prompt expects.
struct Continuation {
  std::string text, want;
  bool answers() const { return text.compare(0, want.size(), want) == 0; }
};

Continuation continue_example(const std::string& kind, PolicyKind policy, const std::string& budget) {
  static auto b = std::make_shared<const ModelBundle>(load_model_bundle(default_model_dir()));
  std::string want = read_text(asset("prompts/" + kind + ".answer.txt"));
  want = " " + want.substr(0, want.find('\n'));
  SessionConfig cfg;
  cfg.prompt = read_text(asset("prompts/" + kind + ".txt"));
  cfg.max_new_tokens = static_cast<int>(b->tokenizer->encode(want, false).size()) + 2;
  cfg.policy.kind = policy;
  cfg.policy.budget = Amount::parse(budget, "budget");
  cfg.recording.metrics = false;
  Session s(b, cfg);
  s.run_to_end();
  std::vector<int> gen = s.generated();
  if (!gen.empty() && b->is_eos(gen.back())) gen.pop_back();
  return {b->tokenizer->decode(gen, true), want};
}

// The point of the bundled model: with the full cache it recalls a pass key
// stated early in the prompt; a recent-tokens window that has dropped the
// key's tokens cannot, and the answer visibly changes.
TEST(DefaultModels, EvictingThePassKeyBreaksTheAnswer) {
  const auto full = continue_example("passkey", PolicyKind::Full, "100%");
  EXPECT_TRUE(full.answers()) << full.text << " vs " << full.want;
  const auto window = continue_example("passkey", PolicyKind::Window, "20%");
  EXPECT_FALSE(window.answers()) << window.text;
}

// The same for a story: where someone went is stated in the second sentence
// and asked for at the end.
TEST(DefaultModels, EvictingAStoryFactBreaksTheAnswer) {
  const auto full = continue_example("story", PolicyKind::Full, "100%");
  EXPECT_TRUE(full.answers()) << full.text << " vs " << full.want;
  const auto window = continue_example("story", PolicyKind::Window, "20%");
  EXPECT_FALSE(window.answers()) << window.text;
}

TEST(DefaultModels, CliDefaultsToTheBundledModel) {
  const auto r = test::run_cli("inspect --json", false);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto j = nlohmann::json::parse(r.output);
  EXPECT_EQ(j["layers"], 4);
  EXPECT_EQ(j["kv_heads"], 2);
}

TEST(DefaultModels, ExamplePromptsAndEvalSetsParse) {
  for (const char* kind : {"story", "passkey", "kv"}) {
    const auto items = load_eval_set(asset(std::string("eval/") + kind + ".jsonl"));
    EXPECT_EQ(items.size(), 100u) << kind;
    for (const auto& it : items) EXPECT_FALSE(it.answer.empty()) << kind;
    EXPECT_FALSE(read_text(asset(std::string("prompts/") + kind + ".txt")).empty());
  }
}

}  // namespace
}  // namespace kvscope
