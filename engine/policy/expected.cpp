// expected (Devoto et al. 2025, Expected Attention; kvpress's
// ExpectedAttentionPress): a slot's score is the attention the queries to
// come are expected to give it. The queries before RoPE are modelled as a
// Gaussian, their mean and covariance summed over every query the layer has
// seen past the sinks; averaged over the RoPE of the next F positions, the
// expected softmax weight of a key has a closed form
// (backend/expected_attention.h), then times the value's norm. It needs no
// attention row: the backend rescores every slot after every call from the
// cache and the queries' moments. kvpress keeps its first 4 positions and
// leaves them out of the moments: here they are the sinks.
#include "policy/policy.h"

namespace kvscope {
namespace {

class ExpectedPolicy final : public Policy {
 public:
  using Policy::Policy;
  Ranking ranking() const override { return Ranking::Statistic; }
  SlotStatRule stat_rule(const StepContext&) const override {
    SlotStatRule rule;
    rule.source = StatSource::Expected;
    rule.span = static_cast<int>(r_.params.number("future_positions"));
    rule.sinks = r_.s;
    rule.variant = (r_.params.query_covariance == QueryCovariance::Off ? kExpectedNoCovariance : 0) |
                   (r_.params.value_norm == ValueNorm::Off ? kExpectedNoValueNorm : 0);
    return rule;
  }
};

}  // namespace

std::unique_ptr<Policy> make_expected_policy(const ResolvedPolicy& r) { return std::make_unique<ExpectedPolicy>(r); }

}  // namespace kvscope
