// tova (Token Omission Via Attention): S_t = A_t, the current row only; the
// lowest-scored slot goes while over budget. Head-averaged (granularity
// `layer`) by default, as the TOVA paper found better than per head.
#include "policy/policy.h"

namespace kvscope {
namespace {

class TovaPolicy final : public Policy {
 public:
  using Policy::Policy;
  Ranking ranking() const override { return Ranking::Statistic; }
  SlotStatRule stat_rule(const StepContext&) const override {
    SlotStatRule rule;
    rule.source = StatSource::Attention;
    rule.decay = 0.0f;  // one-shot prefill: only the last prompt row survives
    rule.reduce = r_.params.reduce;
    return rule;
  }
};

}  // namespace

std::unique_ptr<Policy> make_tova_policy(const ResolvedPolicy& r) { return std::make_unique<TovaPolicy>(r); }

}  // namespace kvscope
