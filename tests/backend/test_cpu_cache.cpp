// The CPU backend's KV cache under eviction: what retain() keeps is exactly
// what later attention sees, and compacted positions re-rotate keys to the
// slots they move to.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "common/error.h"
#include "golden.h"
#include "model/loader.h"

namespace kvscope {
namespace {

TEST(CpuCache, RetainedSlotsAreWhatLayerZeroAttendsTo) {
  const auto m = load_model_files(test::model_dir("llama_gqa"));
  const auto g = test::Golden::load("llama_gqa");
  BackendOptions bo;
  bo.max_tokens = 64;
  auto evicted = make_backend(Device::Cpu, m.config, m.weights, bo);
  auto full = evicted->spawn(bo);
  ForwardOptions fo;
  ForwardOutput out_e, out_f;
  const std::vector<int> prompt(g.prompt.begin(), g.prompt.begin() + 20);
  evicted->forward(prompt, fo, out_e);
  full->forward(prompt, fo, out_f);
  const std::vector<int> keep = {0, 1, 5, 9, 10, 17, 19};
  for (int s = 0; s < evicted->kv().layout().n_segments(); ++s) evicted->retain(s, keep);
  EXPECT_EQ(evicted->kv().positions(0), keep);  // absolute positions survive compaction

  fo.capture_layers = {0};
  const int tok[1] = {g.prompt[20]};
  evicted->forward(tok, fo, out_e);
  full->forward(tok, fo, out_f);
  const auto& a = out_e.attention.at(0);
  const auto& b = out_f.attention.at(0);
  for (int h = 0; h < m.config.n_heads; ++h) {
    ASSERT_EQ(a.row_len[h], int(keep.size()) + 1);
    ASSERT_EQ(b.row_len[h], 21);
    // Layer 0's query and keys do not depend on earlier eviction: the
    // evicted run's logits are the full run's at the kept slots. Equal to
    // rounding, not to the bit: the two q.K products have 8 and 21 columns,
    // and OpenBLAS may sum a column that falls in its edge kernel in another
    // order (its generic x86 kernels do, on CPUs it does not recognise).
    for (std::size_t j = 0; j < keep.size(); ++j) EXPECT_FLOAT_EQ(a.logit_row(h, 0)[j], b.logit_row(h, 0)[keep[j]]);
    EXPECT_FLOAT_EQ(a.logit_row(h, 0)[keep.size()], b.logit_row(h, 0)[20]);
    // A slot that moved would hold another position's key: its logit would
    // differ by far more than rounding.
    EXPECT_NE(a.logit_row(h, 0)[2], b.logit_row(h, 0)[2]);
    double sum = 0;
    for (int j = 0; j < a.row_len[h]; ++j) sum += a.prob_row(h, 0)[j];
    EXPECT_NEAR(sum, 1.0, 1e-6);
  }
}

TEST(CpuCache, EvictionFromEitherEndKeepsEveryRowWithItsSlot) {
  // retain() closes holes from the shorter side (the segment's start moves
  // up when old slots go) and moves a segment back to its region's start
  // when appends would run past it. Whatever it moved, every slot must
  // still hold the key and value written for its position. 120 decode steps
  // through a 16-slot cache: mostly the oldest slot evicted (the window
  // pattern), sometimes one near the end, sometimes two anywhere.
  const auto m = load_model_files(test::model_dir("llama_gqa"));
  const auto g = test::Golden::load("llama_gqa");
  BackendOptions bo;
  bo.max_tokens = 16;
  CpuBackend be(CpuModel::create(m.config, m.weights), bo);
  const int S = be.kv().layout().n_segments(), hd = m.config.head_dim;
  std::vector<std::vector<std::vector<float>>> ref_k(S), ref_v(S);  // [segment][position]: rows as written
  ForwardOptions fo;
  ForwardOutput out;
  for (int step = 0; step < 120; ++step) {
    const int tok[1] = {g.prompt[step % g.prompt.size()]};
    be.forward(tok, fo, out);
    for (int s = 0; s < S; ++s) {
      const int last = be.kv().len(s) - 1;
      ref_k[s].emplace_back(be.key(s, last), be.key(s, last) + hd);
      ref_v[s].emplace_back(be.value(s, last), be.value(s, last) + hd);
    }
    const int len = be.kv().len(0);
    if (len < 12) continue;
    std::vector<bool> drop(len, false);
    if (step % 4 != 3) drop[1] = true;  // the oldest after one sink
    else if (step % 8 == 3) drop[len - 2] = true;
    else drop[(step * 7) % len] = drop[(step * 13 + 5) % len] = true;
    std::vector<int> keep;
    for (int j = 0; j < len; ++j)
      if (!drop[j]) keep.push_back(j);
    for (int s = 0; s < S; ++s) be.retain(s, keep);
    for (int s = 0; s < S; ++s)
      for (int j = 0; j < be.kv().len(s); ++j) {
        const int p = be.kv().positions(s)[j];
        ASSERT_EQ(std::vector<float>(be.key(s, j), be.key(s, j) + hd), ref_k[s][p]) << "step " << step << " slot " << j;
        ASSERT_EQ(std::vector<float>(be.value(s, j), be.value(s, j) + hd), ref_v[s][p]) << "step " << step << " slot " << j;
      }
  }
}

TEST(CpuCache, CompactedPositionsRerotateKeysToTheirNewSlots) {
  const auto m = load_model_files(test::model_dir("llama_gqa"));
  const auto g = test::Golden::load("llama_gqa");
  BackendOptions bo;
  bo.max_tokens = 32;
  bo.positions = PositionMode::Compacted;
  auto model = CpuModel::create(m.config, m.weights);
  CpuBackend a(model, bo), fresh(model, bo);
  ForwardOptions fo;
  ForwardOutput out;
  const std::vector<int> prompt(g.prompt.begin(), g.prompt.begin() + 12);
  a.forward(prompt, fo, out);
  const std::vector<int> keep = {2, 5, 7, 11};
  for (int s = 0; s < a.kv().layout().n_segments(); ++s) a.retain(s, keep);
  EXPECT_EQ(a.kv().rope_positions(0), (std::vector<int>{0, 1, 2, 3}));
  // Layer 0's keys depend only on the token and its rotation: they must
  // equal a fresh run of the kept tokens at positions 0..3.
  fresh.forward(std::vector<int>{prompt[2], prompt[5], prompt[7], prompt[11]}, fo, out);
  const int hd = m.config.head_dim;
  for (int kvh = 0; kvh < m.config.n_kv_heads; ++kvh) {
    const int seg = a.kv().layout().segment(0, kvh);
    for (int i = 0; i < 4; ++i)
      for (int d = 0; d < hd; ++d) EXPECT_NEAR(a.key(seg, i)[d], fresh.key(seg, i)[d], 2e-5) << "slot " << i;
  }
}

TEST(CpuCache, RetainRejectsBadSlotLists) {
  const auto m = load_model_files(test::model_dir("gpt2"));
  BackendOptions bo;
  bo.max_tokens = 8;
  auto be = make_backend(Device::Cpu, m.config, m.weights, bo);
  ForwardOptions fo;
  ForwardOutput out;
  be->forward(std::vector<int>{1, 2, 3, 4}, fo, out);
  EXPECT_THROW(be->retain(0, std::vector<int>{2, 1}), Error);
  EXPECT_THROW(be->retain(0, std::vector<int>{0, 4}), Error);
  EXPECT_THROW(be->retain(0, std::vector<int>{1, 1}), Error);
}

TEST(CpuCache, OverflowingTheCacheOrThePositionsIsAnError) {
  const auto m = load_model_files(test::model_dir("gpt2"));
  BackendOptions bo;
  bo.max_tokens = 4;
  auto be = make_backend(Device::Cpu, m.config, m.weights, bo);
  ForwardOptions fo;
  ForwardOutput out;
  be->forward(std::vector<int>{1, 2, 3}, fo, out);
  try {
    be->forward(std::vector<int>{4, 5}, fo, out);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("capacity"), std::string::npos);
  }
  EXPECT_THROW(be->forward(std::vector<int>{999}, fo, out), Error);  // outside the vocabulary
  bo.max_tokens = 200;  // more than gpt2's 128 positions
  auto big = make_backend(Device::Cpu, m.config, m.weights, bo);
  std::vector<int> many(129, 1);
  try {
    big->forward(many, fo, out);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("maximum positions (128)"), std::string::npos) << e.what();
  }
}

TEST(CpuCache, CompactedPositionsAreRefusedForLearnedPositions) {
  const auto m = load_model_files(test::model_dir("gpt2"));
  BackendOptions bo;
  bo.max_tokens = 8;
  bo.positions = PositionMode::Compacted;
  EXPECT_THROW(make_backend(Device::Cpu, m.config, m.weights, bo), Error);
}

}  // namespace
}  // namespace kvscope
