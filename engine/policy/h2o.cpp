// h2o (Heavy-Hitter Oracle): S_t = S_{t-1} + A_t, a new slot starting at its
// own attention; one-shot prefill = column sums of the prompt's attention.
// Keeps the recent window (default k/2) plus the top of the rest by S.
#include "policy/policy.h"

namespace kvscope {
namespace {

class H2OPolicy final : public Policy {
 public:
  using Policy::Policy;
  Ranking ranking() const override { return Ranking::Statistic; }
  SlotStatRule stat_rule(const StepContext&) const override {
    SlotStatRule rule;
    rule.source = StatSource::Attention;
    rule.decay = 1.0f;
    rule.reduce = r_.params.reduce;
    return rule;
  }
};

}  // namespace

std::unique_ptr<Policy> make_h2o_policy(const ResolvedPolicy& r) { return std::make_unique<H2OPolicy>(r); }

}  // namespace kvscope
