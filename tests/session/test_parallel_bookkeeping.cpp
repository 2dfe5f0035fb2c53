// A step's host bookkeeping runs in parallel over runs of segments (the
// choice of slots, the recorder's row, the eviction): whatever the number
// of threads, it must produce exactly what one thread produces. One thread
// is had by calling from inside a pool task, where the pool runs nested
// work in the calling thread, in order (backend/parallel.h).
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "backend/parallel.h"
#include "common/counter_random.h"
#include "kv/kv_book.h"
#include "kv/kv_layout.h"
#include "policy/selection.h"
#include "session/recorder.h"

namespace kvscope {
namespace {

// 16 owning layers of 8 KV heads (128 segments, MHA), 400 positions seen,
// then a different fifth of each segment's slots evicted, so that lengths
// and held positions differ between segments.
struct BigCache {
  KvLayout layout;
  KvBook book;
  std::vector<std::vector<float>> stats;  // [segment][slot]
  static constexpr int kSeen = 400;

  BigCache() {
    layout.n_layers = layout.n_kv_layers = 16;
    layout.n_heads = layout.n_kv_heads = 8;
    layout.head_dim = 4;
    for (int l = 0; l < 16; ++l) {
      layout.owners.push_back(l);
      layout.source_of_layer.push_back(l);
    }
    book = KvBook(layout, 512);
    std::vector<int> rope(layout.n_segments());
    for (int p = 0; p < kSeen; ++p) {
      std::fill(rope.begin(), rope.end(), p);
      book.append(p, rope);
    }
    stats.resize(layout.n_segments());
    for (int s = 0; s < layout.n_segments(); ++s) {
      std::vector<int> keep;
      for (int j = 0; j < kSeen; ++j)
        if (j >= kSeen - 8 || philox4(7, uint32_t(s), uint32_t(j), 0, 0).v[0] % 5 != 0) keep.push_back(j);
      book.retain(s, keep);
      for (std::size_t j = 0; j < keep.size(); ++j)  // coarse values: many ties
        stats[s].push_back(float(philox4(9, uint32_t(s), uint32_t(j), 0, 0).v[0] % 16) / 8.0f);
    }
  }
  const std::vector<float>& stat(int s) const { return stats[s]; }
};

// `f` run by one thread: as a task of a busy pool.
template <class F>
void on_one_thread(F&& f) {
  parallel_for(2, [&](int i) {
    if (i == 0) f();
  });
}

bool same_floats(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

std::unique_ptr<Policy> policy_of(PolicyKind kind) {
  PolicyParams p;
  p.kind = kind;
  p.budget = Amount{50, true};
  return make_policy(resolve_policy(p, BigCache::kSeen, 1000));
}

TEST(ParallelBookkeeping, RunsOfSegmentsChooseAndRecordWhatOneThreadDoes) {
  if (pool_threads() < 2) GTEST_SKIP() << "one thread in the pool (KVSCOPE_THREADS=1 or one core): nothing runs in parallel";
  const BigCache c;
  const int S = c.layout.n_segments();
  ASSERT_GT(runs_for(S, c.book.total_slots()), 1) << "the cache is too small to be cut into runs";
  auto stat = [&](int s) -> const std::vector<float>& { return c.stat(s); };
  const int newest = BigCache::kSeen - 1;
  for (PolicyKind kind : {PolicyKind::H2O, PolicyKind::TOVA, PolicyKind::Keyformer, PolicyKind::A2SF,
                          PolicyKind::Window, PolicyKind::Sink, PolicyKind::Random, PolicyKind::Ideal,
                          PolicyKind::Full}) {
    const auto pol = policy_of(kind);
    const std::string name = policy_name(kind);
    SlotChoice par, one;
    SelectionScratch par_scratch, one_scratch;
    // Twice, so that the second choice starts from the first's pivot hints.
    for (int step = 1; step <= 2; ++step) {
      choose_slots(*pol, c.book, stat, newest, step, par, par_scratch);
      on_one_thread([&] { choose_slots(*pol, c.book, stat, newest, step, one, one_scratch); });
      ASSERT_EQ(par.dropped, one.dropped) << name;
      for (int s = 0; s < S; ++s) {
        ASSERT_EQ(par.keep[s], one.keep[s]) << name << " segment " << s;
        ASSERT_EQ(par.state[s], one.state[s]) << name << " segment " << s;
        ASSERT_TRUE(same_floats(par.score[s], one.score[s])) << name << " segment " << s;
        ASSERT_EQ(par.rank[s], one.rank[s]) << name << " segment " << s;
      }
    }
    if (pol->evicts()) EXPECT_GT(par.dropped, 0) << name;

    // The recorder's row from that choice, with layer 3's attention captured.
    const int layer = 3;
    AttentionRows a;
    a.layer = layer;
    a.n_queries = 1;
    for (int h = 0; h < c.layout.n_heads; ++h) {
      a.offset.push_back(int64_t(a.probs.size()));
      a.row_len.push_back(c.book.len(c.layout.segment_of(layer, h)));
      for (int j = 0; j < a.row_len.back(); ++j) a.probs.push_back(float(h + 1) / float(j + 2));
    }
    const std::vector<int> tokens(BigCache::kSeen, 5);
    Recorder rp(c.layout, 2, BigCache::kSeen, {layer}), r1(c.layout, 2, BigCache::kSeen, {layer});
    const bool has_stat = pol->ranking() == Ranking::Statistic;
    rp.record(1, c.book, par, has_stat, stat, {a}, 1, tokens, pol->evicts());
    on_one_thread([&] { r1.record(1, c.book, one, has_stat, stat, {a}, 1, tokens, pol->evicts()); });
    EXPECT_EQ(rp.masks(), r1.masks()) << name;
    EXPECT_TRUE(same_floats(rp.scores(), r1.scores())) << name;
    EXPECT_TRUE(same_floats(rp.attention_rows(), r1.attention_rows())) << name;
    ASSERT_EQ(rp.events().size(), r1.events().size()) << name;
    for (std::size_t i = 0; i < rp.events().size(); ++i) {
      const EvictionEvent &x = rp.events()[i], &y = r1.events()[i];
      ASSERT_TRUE(x.kv_layer == y.kv_layer && x.kv_head == y.kv_head && x.position == y.position &&
                  x.rank == y.rank && std::memcmp(&x.statistic, &y.statistic, sizeof(float)) == 0)
          << name << " event " << i;
    }
    if (pol->evicts()) EXPECT_EQ(int(rp.events().size()), par.dropped) << name;
    // In the order one pass over the segments gives: by segment, then by position.
    for (std::size_t i = 1; i < rp.events().size(); ++i) {
      const EvictionEvent &x = rp.events()[i - 1], &y = rp.events()[i];
      const int sx = x.kv_layer * c.layout.n_kv_heads + x.kv_head, sy = y.kv_layer * c.layout.n_kv_heads + y.kv_head;
      ASSERT_TRUE(sx < sy || (sx == sy && x.position < y.position)) << name << " event " << i;
    }
  }
}

}  // namespace
}  // namespace kvscope
