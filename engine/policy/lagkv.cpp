// lagkv (Liang et al. 2025, LagKV: lag-relative information of the KV cache
// tells which tokens are important; kvpress's LagKVPress): after the sinks
// the cache is cut into partitions of `lag` slots, and each token is scored
// by how far its key and value stray from the range of the next partition
// (the std of its min-max normalised channels, softmaxed over its own
// partition), as a rank within its partition (backend/cache_scores.h). The
// sinks and the last partition and a half score 1. No attention is needed;
// the backend rescores every slot after every call.
#include "policy/policy.h"

namespace kvscope {
namespace {

class LagKvPolicy final : public Policy {
 public:
  using Policy::Policy;
  Ranking ranking() const override { return Ranking::Statistic; }
  SlotStatRule stat_rule(const StepContext&) const override {
    SlotStatRule rule;
    rule.source = StatSource::LagKv;
    rule.span = static_cast<int>(r_.params.number("lag"));
    rule.sinks = r_.s;
    return rule;
  }
};

}  // namespace

std::unique_ptr<Policy> make_lagkv_policy(const ResolvedPolicy& r) { return std::make_unique<LagKvPolicy>(r); }

}  // namespace kvscope
