// Invariants every policy must keep on real (random tiny) models: never
// over budget, sinks and the recent window always kept, an evicted token
// never returns, full and ideal never evict, and a replay is bit-identical.
#include <gtest/gtest.h>

#include <cstring>

#include "session_fixture.h"

namespace kvscope {
namespace {

struct Case {
  PolicyKind kind;
  std::string model;
  PrefillMode prefill;
  Granularity granularity;
};

class Invariants : public ::testing::TestWithParam<Case> {};

TEST_P(Invariants, BudgetProtectionAndNoReturn) {
  const Case c = GetParam();
  SessionConfig cfg = test::config(c.kind, "8");
  cfg.policy.prefill = c.prefill;
  cfg.policy.granularity = c.granularity;
  if (c.kind != PolicyKind::Sink && c.kind != PolicyKind::Window) cfg.policy.sinks = 1;
  cfg.policy.window = Amount::parse("2", "w");
  Session s(test::bundle(c.model), cfg);
  s.run_to_end();
  const auto& rec = s.recorder();
  const auto& r = s.policy().resolved();
  const int S = rec.layout().n_segments();
  ASSERT_EQ(rec.rows_recorded(), 13);
  for (int row = 0; row < rec.rows_recorded(); ++row) {
    const int newest = s.prompt_length() - 1 + row;
    for (int seg = 0; seg < S; ++seg) {
      int held = 0;
      for (int p = 0; p <= newest; ++p) {
        const uint8_t m = rec.mask(row, seg, p);
        ASSERT_NE(m, kNotSeen) << "seen position marked unseen";
        const bool kept = m == kMaskKept || m == kMaskProtected;
        held += kept;
        // Sinks and the recent window stay.
        if (p < r.s || p > newest - r.w) ASSERT_TRUE(kept) << "row " << row << " seg " << seg << " pos " << p;
        // Evicted tokens never come back.
        if (row > 0) {
          const uint8_t before = rec.mask(row - 1, seg, p);
          if (before == kEvictedNow || before == kEvictedEarlier) ASSERT_EQ(m, kEvictedEarlier);
        }
      }
      for (int p = newest + 1; p < rec.positions(); ++p) ASSERT_EQ(rec.mask(row, seg, p), kNotSeen);
      EXPECT_LE(held, r.k) << "over budget at row " << row;
    }
    EXPECT_LE(rec.metrics()[row].kv_slots, int64_t(r.k) * S);
  }
  EXPECT_FALSE(rec.events().empty());
}

INSTANTIATE_TEST_SUITE_P(
    Policies, Invariants,
    ::testing::Values(Case{PolicyKind::Window, "llama_gqa", PrefillMode::OneShot, Granularity::KvHead},
                      Case{PolicyKind::Sink, "gpt2", PrefillMode::OneShot, Granularity::KvHead},
                      Case{PolicyKind::H2O, "llama_gqa", PrefillMode::OneShot, Granularity::KvHead},
                      Case{PolicyKind::H2O, "llama_mlkv", PrefillMode::Streaming, Granularity::Layer},
                      Case{PolicyKind::TOVA, "gpt_neox_parallel", PrefillMode::Streaming, Granularity::Layer},
                      Case{PolicyKind::Keyformer, "llama3_mqa_bf16", PrefillMode::OneShot, Granularity::KvHead},
                      Case{PolicyKind::A2SF, "qwen2_fp16_sharded", PrefillMode::OneShot, Granularity::Model},
                      Case{PolicyKind::Random, "mistral", PrefillMode::Streaming, Granularity::KvHead},
                      // Gemma 3: sliding layers (window 8) and a full one.
                      Case{PolicyKind::TOVA, "gemma3", PrefillMode::OneShot, Granularity::KvHead},
                      Case{PolicyKind::H2O, "gemma3", PrefillMode::Streaming, Granularity::Layer}));

TEST(Invariants, FullAndIdealNeverEvict) {
  for (PolicyKind k : {PolicyKind::Full, PolicyKind::Ideal}) {
    Session s(test::bundle("llama_gqa"), test::config(k, "8"));
    s.run_to_end();
    EXPECT_TRUE(s.recorder().events().empty());
    const auto& last = s.recorder().metrics().back();
    EXPECT_EQ(last.kv_bytes, last.kv_bytes_full);
    EXPECT_DOUBLE_EQ(last.kl, 0.0);
    EXPECT_DOUBLE_EQ(last.attention_recall, 1.0);
    if (k == PolicyKind::Ideal) {
      int marked = 0;  // the ideal mask marks the top 8 of the current row
      for (int p = 0; p < s.recorder().positions(); ++p) marked += s.recorder().mask(5, 0, p) == kMaskKept;
      EXPECT_EQ(marked, 8);
    }
  }
}

TEST(Invariants, AReplayIsBitIdentical) {
  SessionConfig cfg = test::config(PolicyKind::Keyformer, "40%");
  cfg.sampling.temperature = 0.9f;
  cfg.sampling.top_p = 0.9f;
  Session a(test::bundle("llama_gqa"), cfg), b(test::bundle("llama_gqa"), cfg);
  a.run_to_end();
  b.run_to_end();
  EXPECT_EQ(a.tokens(), b.tokens());
  EXPECT_EQ(a.recorder().masks(), b.recorder().masks());
  const auto& sa = a.recorder().scores();
  const auto& sb = b.recorder().scores();
  ASSERT_EQ(sa.size(), sb.size());
  EXPECT_EQ(0, std::memcmp(sa.data(), sb.data(), sa.size() * 4));  // NaNs included
  // A different seed draws different noise and tokens. The Keyformer noise
  // is keyed by policy.seed and the sampling by SessionConfig::seed; a
  // session file's "seed" sets both (SessionConfig::from_json), as the CLI
  // does, so another seed here means another seed for both.
  {
    nlohmann::json j = cfg.to_json();
    j["seed"] = uint64_t{12};
    const SessionConfig f = SessionConfig::from_json(j, "test");
    EXPECT_EQ(f.seed, 12u);
    EXPECT_EQ(f.policy.seed, 12u);
    EXPECT_EQ(f.sampling.seed, 12u);
  }
  cfg.seed = 12;
  cfg.policy.seed = 12;
  cfg.sampling.seed = 12;
  Session c(test::bundle("llama_gqa"), cfg);
  c.run_to_end();
  EXPECT_NE(a.tokens(), c.tokens());
  EXPECT_NE(a.recorder().scores(), c.recorder().scores());
  // Row 0 is the prompt alone (no sampled token yet), so a difference there
  // is the noise's: every KV head's statistic over the prompt changes.
  const Recorder &ra = a.recorder(), &rc = c.recorder();
  const int S = ra.layout().n_segments();
  for (int seg = 0; seg < S; ++seg) {
    int differ = 0;
    for (int p = 0; p < a.prompt_length(); ++p) {
      ASSERT_EQ(a.tokens()[p], c.tokens()[p]);
      differ += std::abs(ra.score(0, seg, p) - rc.score(0, seg, p)) > 1e-4f;
    }
    EXPECT_GT(differ, a.prompt_length() / 2) << "segment " << seg;
  }
}

TEST(Invariants, BookkeepingAlongsideTheHeadRecordsWhatTheSerialPathRecords) {
  // A step's choice and recording run alongside the backend's output head
  // (ForwardOptions::alongside_head); without the shadow run its eviction
  // does too, with it the eviction waits for the metrics, after the
  // forward pass. Both must record the same steps, to the bit.
  for (PolicyKind kind : {PolicyKind::H2O, PolicyKind::Keyformer, PolicyKind::TOVA, PolicyKind::A2SF, PolicyKind::Window}) {
    SCOPED_TRACE(policy_name(kind));
    SessionConfig cfg = test::config(kind, "40%");
    cfg.sampling.temperature = 0.9f;  // the sampled tokens depend on every earlier eviction
    cfg.recording.metrics = true;
    Session serial(test::bundle("llama_gqa"), cfg);
    cfg.recording.metrics = false;
    Session alongside(test::bundle("llama_gqa"), cfg);
    serial.run_to_end();
    alongside.run_to_end();
    EXPECT_EQ(serial.tokens(), alongside.tokens());
    const Recorder &a = serial.recorder(), &b = alongside.recorder();
    EXPECT_EQ(a.masks(), b.masks());
    ASSERT_EQ(a.scores().size(), b.scores().size());
    EXPECT_EQ(0, std::memcmp(a.scores().data(), b.scores().data(), a.scores().size() * 4));
    ASSERT_EQ(a.events().size(), b.events().size());
    for (std::size_t i = 0; i < a.events().size(); ++i) {
      EXPECT_EQ(a.events()[i].position, b.events()[i].position);
      EXPECT_EQ(a.events()[i].step, b.events()[i].step);
      EXPECT_EQ(a.events()[i].rank, b.events()[i].rank);
    }
    ASSERT_EQ(a.metrics().size(), b.metrics().size());
    for (std::size_t r = 0; r < a.metrics().size(); ++r) {
      EXPECT_EQ(a.metrics()[r].kv_slots, b.metrics()[r].kv_slots) << "row " << r;
      EXPECT_EQ(a.metrics()[r].next_token, b.metrics()[r].next_token) << "row " << r;
    }
    const int L = serial.model_config().n_layers, H = serial.model_config().n_heads;
    for (int r = 0; r < a.rows_recorded(); ++r)
      for (int l = 0; l < L; ++l)
        for (int h = 0; h < H; ++h)
          for (int p = 0; p < a.positions(); ++p)
            ASSERT_EQ(a.attention(r, l, h, p), b.attention(r, l, h, p)) << r << " " << l << " " << h << " " << p;
  }
}

TEST(Invariants, PolicyChangesFromNowOnAndReplayRepeatsThem) {
  SessionConfig cfg = test::config(PolicyKind::H2O, "10");
  Session a(test::bundle("llama_gqa"), cfg);
  a.prefill();
  for (int i = 0; i < 4; ++i) a.step();
  PolicyParams p = cfg.policy;
  p.kind = PolicyKind::Window;
  p.budget = Amount::parse("6", "b");
  a.set_policy(p);
  a.run_to_end();
  // After the change the cache shrinks to 6 per segment at the next step.
  EXPECT_LE(a.recorder().metrics()[5].kv_slots, 6 * a.recorder().layout().n_segments());
  EXPECT_GT(a.recorder().metrics()[4].kv_slots, 6 * a.recorder().layout().n_segments());
  ASSERT_EQ(a.config().policy_changes.size(), 1u);
  Session b(test::bundle("llama_gqa"), a.config());  // the recorded change replays
  b.run_to_end();
  EXPECT_EQ(a.recorder().masks(), b.recorder().masks());
}

TEST(Invariants, SharingLayoutsChangeTheCacheSize) {
  SessionConfig cfg = test::config(PolicyKind::Full, "100%", 4);
  Session native(test::bundle("llama_gqa"), cfg);
  cfg.sharing = SharingLayout::parse("mqa");
  Session mqa(test::bundle("llama_gqa"), cfg);
  cfg.sharing = SharingLayout::parse("mlkv:1:1");
  Session mlkv(test::bundle("llama_gqa"), cfg);
  native.run_to_end();
  mqa.run_to_end();
  mlkv.run_to_end();
  EXPECT_EQ(mqa.kv_bytes() * 2, native.kv_bytes());
  EXPECT_EQ(mlkv.kv_bytes() * 4, native.kv_bytes());
  EXPECT_EQ(native.kv_bytes(), 2LL * int64_t(native.tokens().size()) * 2 * 2 * 16 * 4);
}

TEST(Invariants, UnrecordedLayersAreReplayedExactly) {
  SessionConfig cfg = test::config(PolicyKind::H2O, "8", 6);
  cfg.recording.layers = {0};
  Session s(test::bundle("llama_gqa"), cfg);
  s.run_to_end();
  cfg.recording.layers = {1};
  Session direct(test::bundle("llama_gqa"), cfg);
  direct.run_to_end();
  EXPECT_FALSE(s.recorder().records_layer(1));
  EXPECT_EQ(s.layer_attention(1), direct.layer_attention(1));
}

TEST(Invariants, BadSettingsNameTheSetting) {
  auto err = [](SessionConfig c) {
    try {
      Session s(test::bundle("llama_gqa"), c);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  SessionConfig c = test::config(PolicyKind::H2O, "8");
  c.recording.layers = {7};
  EXPECT_NE(err(c).find("recording.layers: unknown layer 7 (the model has layers 0..1)"), std::string::npos) << err(c);
  c = test::config(PolicyKind::H2O, "8");
  c.export_opts.head = 9;
  EXPECT_NE(err(c).find("export.head: unknown head 9"), std::string::npos);
  c = test::config(PolicyKind::H2O, "500");
  EXPECT_NE(err(c).find("larger than the context"), std::string::npos);
  c = test::config(PolicyKind::H2O, "8");
  c.max_new_tokens = 200;
  EXPECT_NE(err(c).find("exceed the model's maximum positions (128)"), std::string::npos);
  c = test::config(PolicyKind::H2O, "8");
  c.policy.positions = PositionMode::Compacted;
  EXPECT_NO_THROW(Session(test::bundle("llama_gqa"), c));
  EXPECT_NE(err([&] { auto d = c; return d; }()).find("(no error)"), std::string::npos);
  SessionConfig g = test::config(PolicyKind::H2O, "8");
  g.policy.positions = PositionMode::Compacted;
  try {
    Session s(test::bundle("gpt2"), g);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("learned absolute positions"), std::string::npos);
  }
}

}  // namespace
}  // namespace kvscope
