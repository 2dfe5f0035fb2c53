// A policy change keeps its promise: after switching between any two
// granularities (and from a per-head score to a shared one, as a user
// does in the window), every KV head holds k slots at the next step.
// Before, a shared decision over heads that had evicted on their own kept
// the unit's best k positions, and a head holding few of them fell far
// below k.
#include <gtest/gtest.h>

#include "session_fixture.h"

namespace kvscope {
namespace {

TEST(GranularitySwitch, EveryHeadHoldsKAfterEveryChange) {
  const Granularity all[] = {Granularity::KvHead, Granularity::Layer, Granularity::Model};
  for (Granularity from : all)
    for (Granularity to : all)
      for (PolicyKind next : {PolicyKind::TOVA, PolicyKind::H2O, PolicyKind::Random}) {
        SessionConfig cfg = test::config(PolicyKind::H2O, "12", 10);
        cfg.policy.granularity = from;
        Session s(test::bundle("llama_gqa"), cfg);
        s.prefill();
        for (int i = 0; i < 4; ++i) ASSERT_TRUE(s.step());
        PolicyParams p = cfg.policy;
        p.kind = next;
        p.granularity = to;
        s.set_policy(p);
        ASSERT_TRUE(s.step());
        const int k = s.policy().resolved().k;
        const KvBook& book = s.backend().kv();
        for (int seg = 0; seg < book.layout().n_segments(); ++seg)
          EXPECT_EQ(book.len(seg), k) << granularity_name(from) << " -> " << policy_name(next) << " "
                                      << granularity_name(to) << ", segment " << seg;
      }
}

}  // namespace
}  // namespace kvscope
