// The Backend base class's share of every backend (backend.h): the checks,
// made before anything changes; the positions and rotations a call appends
// to the KV book; the statistic's decay weights; the shapes of the
// captures; retain() and reset() on the book and the statistics. Seen
// through a backend with no kernels (BookOnly), with expected values worked
// out here from the rules, and then on the CPU backend, whose refusals once
// left a half-compacted book behind.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "backend/cpu/cpu_backend.h"
#include "common/error.h"
#include "float_rows.h"
#include "model/loader.h"
#include "test_util.h"

namespace kvscope {
namespace {

// A backend that runs no model: it records what the base handed it. Its
// statistic of a slot is the slot's position, so compaction is visible.
class BookOnly final : public Backend {
 public:
  BookOnly(const ModelConfig& cfg, const BackendOptions& opt) : Backend(cfg, opt), cfg_(cfg) {}
  std::string name() const override { return "book only"; }
  const ModelConfig& config() const override { return cfg_; }
  std::unique_ptr<Backend> spawn(const BackendOptions& opt) const override {
    return std::make_unique<BookOnly>(cfg_, opt);
  }
  std::unique_ptr<Backend> clone() override { return std::make_unique<BookOnly>(*this); }
  int kv_element_bytes() const override { return 4; }
  void compute_value_weights(const std::vector<ValueWeightJob>&) override {}

  int calls = 0;            // do_forward calls
  int first_pos = -1;       // of the last call
  std::vector<std::vector<int>> rope;  // [token][segment] of the last call
  std::vector<float> row_weights;
  float carry = 0.0f;
  int64_t capture_floats_before = -1;  // capture_floats() before begin_forward()
  std::vector<std::vector<int>> rope_at_retain;  // kv().rope_positions(seg) as do_retain saw it
  std::vector<int> retain_old_len;
  int resets = 0;

 private:
  void do_forward(std::span<const int> tokens, const ForwardOptions& opt, ForwardOutput& out) override {
    const int n = static_cast<int>(tokens.size());
    ++calls;
    capture_floats_before = capture_floats(opt, n);
    first_pos = begin_forward(n, opt, out);
    const int S = kv().layout().n_segments();
    rope.assign(n, std::vector<int>(S));
    for (int i = 0; i < n; ++i)
      for (int s = 0; s < S; ++s) rope[i][s] = new_rope_pos(i, s);
    row_weights = stat_row_weights();
    carry = stat_carry();
    for (int s = 0; s < S; ++s)
      for (int j = 0; j < kv().len(s); ++j) stats_[s][j] = static_cast<float>(kv().positions(s)[j]);
    if (opt.alongside_head) opt.alongside_head();
  }
  bool has_last_logits() const override { return calls > 0; }
  int do_sample(const SamplingParams&, uint64_t) override { return 7; }
  void do_retain(int seg, std::span<const int>, int old_len) override {
    rope_at_retain.push_back(kv().rope_positions(seg));
    retain_old_len.push_back(old_len);
  }
  void do_reset() override { ++resets; }

  ModelConfig cfg_;
};

// llama_mlkv: 4 layers reading 2 KV layers of 2 KV heads, 4 query heads:
// 4 segments, each read by 4 query heads.
ModelConfig mlkv_config() { return load_model_files(test::model_dir("llama_mlkv")).config; }

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

std::vector<int> iota_ints(int n, int from = 0) {
  std::vector<int> v(n);
  for (int i = 0; i < n; ++i) v[i] = from + i;
  return v;
}

TEST(BackendBase, OptionsAreCheckedWhenTheBackendIsMade) {
  const ModelConfig cfg = mlkv_config();
  BackendOptions bo;
  EXPECT_EQ(message_of([&] { BookOnly b(cfg, bo); }), "backend: max_tokens: must be positive");
  ModelConfig learned = cfg;
  learned.rope = RopeStyle::None;
  learned.model_type = "gpt2";
  bo.max_tokens = 8;
  bo.positions = PositionMode::Compacted;
  EXPECT_EQ(message_of([&] { BookOnly b(learned, bo); }),
            "backend: positions: compacted positions need rotary embeddings or ALiBi; gpt2 uses learned absolute "
            "positions");
}

// ALiBi (MPT) after eviction: with original positions a kept key is biased
// by its distance in the text, with compacted positions by its distance in
// the cache's slots. Without RoPE the keys and the query are the same in
// both modes, so layer 0's logits differ by exactly the two biases'
// difference, slope_h * ((p_j - p_q) - (j - q)).
TEST(BackendBase, AlibiDistancesFollowThePositionMode) {
  const auto m = load_model_files(test::model_dir("mpt"));
  const ModelConfig& cfg = m.config;
  ASSERT_EQ(cfg.alibi_slopes.size(), std::size_t(cfg.n_heads));
  BackendOptions orig_opts, comp_opts;
  orig_opts.max_tokens = comp_opts.max_tokens = 16;
  comp_opts.positions = PositionMode::Compacted;
  CpuBackend orig(CpuModel::create(cfg, m.weights), orig_opts), comp(CpuModel::create(cfg, m.weights), comp_opts);
  const std::vector<int> prompt = {5, 17, 33, 8, 91, 120, 7, 64, 12, 250};
  ForwardOptions fo;
  ForwardOutput a, b;
  orig.forward(prompt, fo, a);
  comp.forward(prompt, fo, b);
  const std::vector<int> keep = {0, 1, 2, 6, 7, 8, 9};  // positions 3..5 evicted
  for (int seg = 0; seg < orig.kv().layout().n_segments(); ++seg) {
    orig.retain(seg, keep);
    comp.retain(seg, keep);
  }
  fo.capture_layers = {0};
  fo.capture_logits = true;
  const int tok[1] = {42};
  orig.forward(tok, fo, a);
  comp.forward(tok, fo, b);
  const AttentionRows& ra = a.attention.at(0);
  const AttentionRows& rb = b.attention.at(0);
  const int q_slot = 7, q_pos = 10;
  int checked = 0;
  for (int h = 0; h < cfg.n_heads; ++h) {
    ASSERT_EQ(ra.row_len[h], 8);
    ASSERT_EQ(rb.row_len[h], 8);
    const float slope = cfg.alibi_slopes[h];
    for (int j = 0; j <= q_slot; ++j) {
      const int p = j < q_slot ? keep[j] : q_pos;
      const double want = double(float(p - q_pos) * slope) - double(float(j - q_slot) * slope);
      EXPECT_NEAR(ra.logit_row(h, 0)[j] - rb.logit_row(h, 0)[j], want, 1e-5) << "head " << h << " slot " << j;
      ++checked;
    }
  }
  EXPECT_EQ(checked, cfg.n_heads * 8);
  // The gap is real: position 0 is 10 tokens from the query in the text,
  // 7 slots in the cache; positions 6..9, after the gap, are as near in both.
  EXPECT_NEAR(ra.logit_row(0, 0)[0] - rb.logit_row(0, 0)[0], -3 * cfg.alibi_slopes[0], 1e-5);
  EXPECT_GT(std::abs(ra.logit_row(0, 0)[0] - rb.logit_row(0, 0)[0]), 0.1);
  EXPECT_EQ(ra.logit_row(0, 0)[4], rb.logit_row(0, 0)[4]);
}

TEST(BackendBase, ACallIsRefusedBeforeAnythingChanges) {
  const ModelConfig cfg = mlkv_config();
  BackendOptions bo;
  bo.max_tokens = 4;
  BookOnly b(cfg, bo);
  ForwardOptions fo;
  ForwardOutput out;
  b.forward(std::vector<int>{1, 2, 3}, fo, out);
  const KvBook before = b.kv();
  EXPECT_EQ(message_of([&] { b.forward(std::vector<int>{}, fo, out); }), "forward: tokens: no tokens");
  EXPECT_EQ(message_of([&] { b.forward(std::vector<int>{4, 5}, fo, out); }),
            "forward: capacity: KV cache capacity of 4 tokens exceeded");
  EXPECT_EQ(message_of([&] { b.forward(std::vector<int>{cfg.vocab_size}, fo, out); }),
            "forward: tokens: token id 320 outside the vocabulary (320)");
  EXPECT_EQ(message_of([&] { b.forward(std::vector<int>{-1}, fo, out); }),
            "forward: tokens: token id -1 outside the vocabulary (320)");
  EXPECT_EQ(b.calls, 1);  // the backend never saw them
  EXPECT_EQ(b.tokens_seen(), 3);
  for (int s = 0; s < before.layout().n_segments(); ++s) EXPECT_EQ(b.kv().positions(s), before.positions(s));

  bo.max_tokens = 200;  // more than the model's 128 positions
  BookOnly big(cfg, bo);
  EXPECT_EQ(message_of([&] { big.forward(std::vector<int>(129, 1), fo, out); }),
            "forward: positions: sequence of 129 tokens is longer than the model's maximum positions (128)");
  EXPECT_EQ(big.calls, 0);
}

TEST(BackendBase, APairIsRefusedBeforeEitherRunMoves) {
  const ModelConfig cfg = mlkv_config();
  BackendOptions small, roomy;
  small.max_tokens = 2;
  roomy.max_tokens = 8;
  BookOnly a(cfg, roomy), full(cfg, small);
  ForwardOptions fo;
  ForwardOutput oa, of;
  a.forward(std::vector<int>{1, 2}, fo, oa);
  full.forward(std::vector<int>{1, 2}, fo, of);
  const int tok[1] = {3};
  EXPECT_THROW(a.forward_pair(tok, fo, oa, full, fo, of), Error);  // the reference is full
  EXPECT_EQ(a.tokens_seen(), 2);
  EXPECT_EQ(full.tokens_seen(), 2);
  EXPECT_EQ(a.calls + full.calls, 2);
}

TEST(BackendBase, NewTokensTakeTheirPositionOrTheirSlotAsRotation) {
  const ModelConfig cfg = mlkv_config();
  for (PositionMode mode : {PositionMode::Original, PositionMode::Compacted}) {
    SCOPED_TRACE(mode == PositionMode::Original ? "original" : "compacted");
    BackendOptions bo;
    bo.max_tokens = 16;
    bo.positions = mode;
    BookOnly b(cfg, bo);
    const int S = b.kv().layout().n_segments();
    ASSERT_EQ(S, 4);
    ForwardOptions fo;
    ForwardOutput out;
    b.forward(std::vector<int>{1, 2, 3, 4, 5}, fo, out);
    EXPECT_EQ(b.first_pos, 0);
    for (int s = 0; s < S; ++s) {
      EXPECT_EQ(b.kv().positions(s), iota_ints(5));
      EXPECT_EQ(b.kv().rope_positions(s), iota_ints(5));
    }
    // Segment 0 keeps three slots, segment 1 one; the others keep all five.
    b.retain(0, std::vector<int>{0, 2, 4});
    b.retain(1, std::vector<int>{3});
    ASSERT_EQ(b.rope_at_retain.size(), 2u);
    EXPECT_EQ(b.rope_at_retain[0], (std::vector<int>{0, 2, 4}));  // the rotations the kept keys have
    EXPECT_EQ(b.retain_old_len, (std::vector<int>{5, 5}));
    EXPECT_EQ(b.kv().positions(0), (std::vector<int>{0, 2, 4}));
    const bool compacted = mode == PositionMode::Compacted;
    EXPECT_EQ(b.kv().rope_positions(0), compacted ? iota_ints(3) : (std::vector<int>{0, 2, 4}));
    EXPECT_EQ(b.kv().rope_positions(1), compacted ? iota_ints(1) : (std::vector<int>{3}));

    b.forward(std::vector<int>{6, 7}, fo, out);
    EXPECT_EQ(b.first_pos, 5);
    EXPECT_EQ(b.tokens_seen(), 7);
    const int len_before[4] = {3, 1, 5, 5};
    for (int i = 0; i < 2; ++i)
      for (int s = 0; s < S; ++s) EXPECT_EQ(b.rope[i][s], compacted ? len_before[s] + i : 5 + i) << i << " " << s;
    EXPECT_EQ(b.kv().positions(0), (std::vector<int>{0, 2, 4, 5, 6}));
    EXPECT_EQ(b.kv().rope_positions(0), compacted ? iota_ints(5) : (std::vector<int>{0, 2, 4, 5, 6}));
  }
}

// S = decay * S + f per query row: row i of n enters with decay^(n-1-i) and
// the slots from before the call are carried with decay^n.
TEST(BackendBase, DecayWeightsArePowersOfTheDecay) {
  const ModelConfig cfg = mlkv_config();
  BackendOptions bo;
  bo.max_tokens = 16;
  BookOnly b(cfg, bo);
  ForwardOptions fo;
  ForwardOutput out;
  b.forward(std::vector<int>{1, 2, 3, 4}, fo, out);
  EXPECT_TRUE(b.row_weights.empty());  // no rule: no weights
  EXPECT_EQ(b.carry, 1.0f);
  for (float decay : {1.0f, 0.0f, 0.5f, 0.9f}) {
    SCOPED_TRACE(decay);
    b.reset();
    fo.stats.source = StatSource::Attention;
    fo.stats.decay = decay;
    const int n = 4;
    b.forward(std::vector<int>{1, 2, 3, 4}, fo, out);
    ASSERT_EQ(b.row_weights.size(), std::size_t(n));
    for (int i = 0; i < n; ++i)
      EXPECT_NEAR(b.row_weights[i], std::pow(double(decay), n - 1 - i), 1e-6 * std::pow(double(decay), n - 1 - i)) << i;
    EXPECT_NEAR(b.carry, std::pow(double(decay), n), 1e-6);
    EXPECT_EQ(b.row_weights[n - 1], 1.0f);  // the newest row enters whole (0^0 = 1 for TOVA)
  }
}

TEST(BackendBase, CapturesComeOnceEachInTheOrderListed) {
  const ModelConfig cfg = mlkv_config();
  BackendOptions bo;
  bo.max_tokens = 16;
  BookOnly b(cfg, bo);
  ForwardOptions fo;
  ForwardOutput out;
  fo.capture_layers = {2, 0, 2, 99, -1};
  fo.capture_logits = false;
  for (bool last_only : {false, true}) {
    SCOPED_TRACE(last_only ? "last query only" : "every query");
    fo.capture_last_query_only = last_only;
    b.reset();
    b.forward(std::vector<int>{1, 2, 3, 4, 5}, ForwardOptions{}, out);
    b.retain(1, std::vector<int>{0, 4});  // segment 1 is shorter now
    b.forward(std::vector<int>{6, 7, 8}, fo, out);
    ASSERT_EQ(out.attention.size(), 2u);
    EXPECT_EQ(out.attention[0].layer, 2);
    EXPECT_EQ(out.attention[1].layer, 0);
    const int rows = last_only ? 1 : 3;
    int64_t all = 0;
    for (const AttentionRows& a : out.attention) {
      EXPECT_EQ(a.n_queries, rows);
      ASSERT_EQ(a.row_len.size(), std::size_t(cfg.n_heads));
      int64_t total = 0;
      for (int h = 0; h < cfg.n_heads; ++h) {
        const int seg = b.kv().layout().segment_of(a.layer, h);
        EXPECT_EQ(a.row_len[h], seg == 1 ? 2 + 3 : 5 + 3) << "layer " << a.layer << " head " << h;
        EXPECT_EQ(a.offset[h], total);
        total += int64_t(rows) * a.row_len[h];
      }
      EXPECT_EQ(a.probs.size(), std::size_t(total));
      EXPECT_TRUE(a.logits.empty());
      all += total;
    }
    EXPECT_EQ(b.capture_floats_before, all);  // what a backend sizes before the book changes
  }
  fo.capture_layers = {};
  b.forward(std::vector<int>{9}, fo, out);
  EXPECT_TRUE(out.attention.empty());
}

TEST(BackendBase, RetainChecksTheWholeListBeforeAnythingChanges) {
  const ModelConfig cfg = mlkv_config();
  BackendOptions bo;
  bo.max_tokens = 8;
  BookOnly b(cfg, bo);
  ForwardOptions fo;
  ForwardOutput out;
  b.forward(std::vector<int>{1, 2, 3, 4}, fo, out);
  const std::string bad = "kv cache: retain: slot list must be strictly ascending and inside the segment";
  EXPECT_EQ(message_of([&] { b.retain(0, std::vector<int>{1, 0}); }), bad);  // slot 1 would have moved first
  EXPECT_EQ(message_of([&] { b.retain(0, std::vector<int>{0, 4}); }), bad);
  EXPECT_EQ(message_of([&] { b.retain(0, std::vector<int>{1, 1}); }), bad);
  EXPECT_EQ(message_of([&] { b.retain(4, std::vector<int>{0}); }), "kv cache: retain: segment 4 out of range");
  EXPECT_EQ(message_of([&] { b.retain(-1, std::vector<int>{0}); }), "kv cache: retain: segment -1 out of range");
  EXPECT_TRUE(b.retain_old_len.empty());
  EXPECT_EQ(b.kv().positions(0), iota_ints(4));
  EXPECT_EQ(b.slot_stats(0), (std::vector<float>{0, 1, 2, 3}));

  b.retain(0, std::vector<int>{1, 3});
  EXPECT_EQ(b.kv().positions(0), (std::vector<int>{1, 3}));
  EXPECT_EQ(b.slot_stats(0), (std::vector<float>{1, 3}));  // the statistics move with their slots
}

TEST(BackendBase, ResetAndSample) {
  const ModelConfig cfg = mlkv_config();
  BackendOptions bo;
  bo.max_tokens = 8;
  BookOnly b(cfg, bo);
  EXPECT_EQ(message_of([&] { b.sample(SamplingParams{}, 0); }), "sample: no forward pass yet");
  ForwardOptions fo;
  ForwardOutput out;
  b.forward(std::vector<int>{1, 2, 3}, fo, out);
  EXPECT_EQ(b.sample(SamplingParams{}, 0), 7);
  auto copy = b.clone();
  b.reset();
  EXPECT_EQ(b.resets, 1);
  EXPECT_EQ(b.tokens_seen(), 0);
  EXPECT_EQ(b.kv().total_slots(), 0);
  EXPECT_TRUE(b.slot_stats(0).empty());
  EXPECT_EQ(copy->tokens_seen(), 3);  // a copy keeps its own sequence
  EXPECT_EQ(copy->kv().positions(3), iota_ints(3));
}

// The CPU backend once validated a retain() list as KvBook::retain moved
// the slots, so a list refused halfway left the book half-compacted. Now
// a refused list leaves the run exactly as it was: the next step gives the
// bits of a run that was never asked.
TEST(BackendBase, CpuRunIsUntouchedByARefusedRetain) {
  const auto m = load_model_files(test::model_dir("llama_gqa"));
  BackendOptions bo;
  bo.max_tokens = 16;
  auto asked = make_backend(Device::Cpu, m.config, m.weights, bo);
  auto never = asked->spawn(bo);
  ForwardOptions fo;
  fo.stats.source = StatSource::Attention;
  fo.capture_layers = {0, 1};
  ForwardOutput oa, on;
  const std::vector<int> prompt = {5, 9, 14, 2, 7, 11};
  asked->forward(prompt, fo, oa);
  never->forward(prompt, fo, on);
  EXPECT_THROW(asked->retain(0, std::vector<int>{2, 4, 3}), Error);
  EXPECT_THROW(asked->retain(asked->kv().layout().n_segments(), std::vector<int>{0}), Error);
  const int tok[1] = {3};
  asked->forward(tok, fo, oa);
  never->forward(tok, fo, on);
  EXPECT_TRUE(testing_rows::same_bits(oa.logits, on.logits));
  for (int s = 0; s < asked->kv().layout().n_segments(); ++s) {
    EXPECT_EQ(asked->kv().positions(s), never->kv().positions(s));
    EXPECT_TRUE(testing_rows::same_bits(asked->slot_stats(s), never->slot_stats(s)));
  }
  ASSERT_EQ(oa.attention.size(), on.attention.size());
  for (std::size_t i = 0; i < oa.attention.size(); ++i)
    EXPECT_TRUE(testing_rows::same_bits(oa.attention[i].probs, on.attention[i].probs));
}

}  // namespace
}  // namespace kvscope

namespace kvscope {
namespace {

// A session's shadow after a one-shot prompt is a copy of the run
// (Backend::clone_as_full_cache), not the prompt computed again: the copy
// must hold the bits of a full-cache run fed the same tokens, though the
// run it was copied from keeps compacted positions and gathered
// statistics, and then decode alongside that run step for step.
TEST(BackendBase, AFullCacheTwinIsTheRunASpawnFedTheSameTokensWouldBe) {
  for (const char* model : {"llama_gqa", "mpt"}) {  // RoPE, ALiBi
    for (const StatSource source : {StatSource::Attention, StatSource::GumbelSoftmax, StatSource::KeyNorm}) {
      SCOPED_TRACE(std::string(model) + " statistic " + std::to_string(int(source)));
      const auto m = load_model_files(test::model_dir(model));
      BackendOptions bo;
      bo.max_tokens = 24;
      bo.positions = PositionMode::Compacted;
      auto run = make_backend(Device::Cpu, m.config, m.weights, bo);
      BackendOptions so = bo;
      so.positions = PositionMode::Original;
      auto spawned = run->spawn(so);
      ForwardOptions fo;  // the run's: a statistic and the last query's rows
      fo.stats.source = source;
      fo.capture_layers = {0, 1};
      fo.capture_last_query_only = true;
      ForwardOptions full = fo;  // the shadow's: no statistic
      full.stats = SlotStatRule{};
      ForwardOutput run_out, spawned_out, twin_out;
      const std::vector<int> prompt = {5, 9, 14, 2, 7, 11, 4, 8};
      run->forward(prompt, fo, run_out);
      spawned->forward(prompt, full, spawned_out);
      ASSERT_TRUE(run->holds_every_token());
      const auto twin = run->clone_as_full_cache();
      EXPECT_EQ(twin->options().positions, PositionMode::Original);
      EXPECT_TRUE(testing_rows::same_bits(run_out.logits, spawned_out.logits));
      ASSERT_EQ(run_out.attention.size(), spawned_out.attention.size());
      for (std::size_t i = 0; i < run_out.attention.size(); ++i)
        EXPECT_TRUE(testing_rows::same_bits(run_out.attention[i].probs, spawned_out.attention[i].probs));
      // The run evicts; the twin and the spawned run go on with every slot.
      for (int s = 0; s < run->kv().layout().n_segments(); ++s) run->retain(s, std::vector<int>{0, 3, 6, 7});
      EXPECT_FALSE(run->holds_every_token());
      EXPECT_THROW(run->clone_as_full_cache(), Error);
      for (const int tok : {3, 12, 6}) {
        const int one[1] = {tok};
        twin->forward(one, full, twin_out);
        spawned->forward(one, full, spawned_out);
        EXPECT_TRUE(testing_rows::same_bits(twin_out.logits, spawned_out.logits));
        for (std::size_t i = 0; i < twin_out.attention.size(); ++i)
          EXPECT_TRUE(testing_rows::same_bits(twin_out.attention[i].probs, spawned_out.attention[i].probs));
      }
      for (int s = 0; s < twin->kv().layout().n_segments(); ++s) {
        EXPECT_EQ(twin->kv().positions(s), spawned->kv().positions(s));
        EXPECT_EQ(twin->kv().rope_positions(s), spawned->kv().rope_positions(s));
      }
    }
  }
}

}  // namespace
}  // namespace kvscope
