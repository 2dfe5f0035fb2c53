// leverage (Chari & Van Durme 2025, Compactor; kvpress's
// LeverageScorePress): a slot's score is the statistical leverage of its
// key before RoPE among the keys of its segment, centred on their mean:
// h_j = x_j^T (X^T X)^-1 x_j (backend/leverage_scores.h). Keys that point
// where few others do stay: the outliers that a low-rank summary of the
// cache would lose. Query-agnostic, no attention read; the backend
// rescores every slot after every call, O(n head_dim^2) per KV head.
#include "policy/policy.h"

namespace kvscope {
namespace {

class LeveragePolicy final : public Policy {
 public:
  using Policy::Policy;
  Ranking ranking() const override { return Ranking::Statistic; }
  SlotStatRule stat_rule(const StepContext&) const override {
    SlotStatRule rule;
    rule.source = StatSource::Leverage;
    return rule;
  }
};

}  // namespace

std::unique_ptr<Policy> make_leverage_policy(const ResolvedPolicy& r) { return std::make_unique<LeveragePolicy>(r); }

}  // namespace kvscope
