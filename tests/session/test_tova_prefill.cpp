// TOVA's one-shot prefill (docs/policies.md): S = A_t of the current row only,
// so right after the prompt (row 0) the statistic of a KV head is the LAST
// prompt query's attention, averaged over the query heads (and, with MLKV,
// the layers) that read it -- not the column sums over the prompt rows that
// H2O starts from. The decision then keeps the top k by the layer mean.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "session_fixture.h"

namespace kvscope {
namespace {

void check_tova_row0(const std::string& model) {
  SCOPED_TRACE(model);
  SessionConfig cfg = test::config(PolicyKind::TOVA, "40%", 4);
  cfg.recording.metrics = false;
  Session s(test::bundle(model), cfg);
  s.prefill();
  const Recorder& rec = s.recorder();
  const KvLayout& lay = rec.layout();
  const int n = s.prompt_length(), S = lay.n_segments();
  const auto& r = s.policy().resolved();
  ASSERT_EQ(r.granularity, Granularity::Layer);
  ASSERT_EQ(r.w, 0);
  ASSERT_EQ(r.s, 0);
  ASSERT_LT(r.k, n);
  ASSERT_EQ(rec.rows_recorded(), 1);

  // Expected: mean over readers of the recorded last-query attention.
  std::vector<std::vector<double>> want(S, std::vector<double>(n, 0.0));
  std::vector<int> readers(S, 0);
  for (int l = 0; l < lay.n_layers; ++l) {
    ASSERT_TRUE(rec.records_layer(l));
    for (int h = 0; h < lay.n_heads; ++h) {
      const int seg = lay.segment_of(l, h);
      ++readers[seg];
      double row_sum = 0;
      for (int p = 0; p < n; ++p) {
        want[seg][p] += rec.attention(0, l, h, p);
        row_sum += rec.attention(0, l, h, p);
      }
      EXPECT_NEAR(row_sum, 1.0, 1e-5);  // one softmax row, the last query's
    }
  }
  for (int seg = 0; seg < S; ++seg) {
    EXPECT_EQ(readers[seg], lay.n_heads * lay.n_layers / lay.n_kv_layers / lay.n_kv_heads);
    double sum = 0;
    for (int p = 0; p < n; ++p) {
      want[seg][p] /= readers[seg];
      EXPECT_NEAR(rec.score(0, seg, p), want[seg][p], 1e-6) << "seg " << seg << " pos " << p;
      sum += rec.score(0, seg, p);
    }
    // One row's worth of mass: column sums over the n prompt rows would hold n.
    EXPECT_NEAR(sum, 1.0, 1e-5) << "seg " << seg;
    // Position 0 is the whole of row 0's attention: a column sum is >= 1 there.
    EXPECT_LT(rec.score(0, seg, 0), 1.0);
  }

  // The decision: per owning layer, the top k positions by the mean over
  // that layer's KV heads; the same positions in every KV head of the layer.
  for (int kvl = 0; kvl < lay.n_kv_layers; ++kvl) {
    std::vector<double> mean(n, 0.0);
    for (int g = 0; g < lay.n_kv_heads; ++g)
      for (int p = 0; p < n; ++p) mean[p] += want[lay.segment(kvl, g)][p] / lay.n_kv_heads;
    std::vector<int> order(n);
    for (int p = 0; p < n; ++p) order[p] = p;
    std::sort(order.begin(), order.end(), [&](int a, int b) { return mean[a] != mean[b] ? mean[a] > mean[b] : a > b; });
    ASSERT_GT(mean[order[r.k - 1]] - mean[order[r.k]], 1e-6) << "near tie at the boundary";
    for (int g = 0; g < lay.n_kv_heads; ++g) {
      const int seg = lay.segment(kvl, g);
      for (int i = 0; i < n; ++i)
        EXPECT_EQ(rec.mask(0, seg, order[i]), i < r.k ? kMaskKept : kEvictedNow)
            << "kv layer " << kvl << " head " << g << " pos " << order[i];
      EXPECT_EQ(s.backend().kv().len(seg), r.k);
    }
  }
}

TEST(TovaPrefill, RowZeroIsTheLastPromptQueryMeanOverReaders) {
  check_tova_row0("llama_gqa");   // 2 query heads per KV head
  check_tova_row0("llama_mlkv");  // 2 layers x 2 query heads per KV head
  check_tova_row0("gpt2");        // MHA: one reader per KV head
}

}  // namespace
}  // namespace kvscope
