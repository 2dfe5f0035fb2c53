// ideal (A2SF's reference): nothing is evicted; the statistic is the current
// row of the full cache's attention, and the mask marks its top k — what an
// oracle with this step's attention would keep.
#include "policy/policy.h"

namespace kvscope {
namespace {

class IdealPolicy final : public Policy {
 public:
  using Policy::Policy;
  Ranking ranking() const override { return Ranking::Statistic; }
  SlotStatRule stat_rule(const StepContext&) const override {
    SlotStatRule rule;
    rule.source = StatSource::Attention;
    rule.decay = 0.0f;
    rule.reduce = r_.params.reduce;
    return rule;
  }
};

}  // namespace

std::unique_ptr<Policy> make_ideal_policy(const ResolvedPolicy& r) { return std::make_unique<IdealPolicy>(r); }

}  // namespace kvscope
