// a2sf (Accumulative Attention Score with Forgetting factor):
// S_t = alpha S_{t-1} + A_t (alpha = 0.2); one-shot prefill gives
// S[j] = sum_q alpha^(L-1-q) A[q][j]. No recent window by default: all of k
// is selective. alpha = 1 is H2O's accumulation, alpha = 0 TOVA's.
#include "policy/policy.h"

namespace kvscope {
namespace {

class A2sfPolicy final : public Policy {
 public:
  using Policy::Policy;
  Ranking ranking() const override { return Ranking::Statistic; }
  SlotStatRule stat_rule(const StepContext&) const override {
    SlotStatRule rule;
    rule.source = StatSource::Attention;
    rule.decay = r_.params.alpha;
    rule.reduce = r_.params.reduce;
    return rule;
  }
};

}  // namespace

// The latest revision of the authors' code compresses once, after the
// prompt, with its fixed recent_budget of 16 as the default window.
void a2sf_revision_rules(const PolicyParams& p, ResolveRules& rules, ChoiceQuirks& q) {
  if (p.a2sf_revision != A2sfRevision::Latest) return;
  rules.window_default = "16";
  q.prompt_only = true;
}

std::unique_ptr<Policy> make_a2sf_policy(const ResolvedPolicy& r) { return std::make_unique<A2sfPolicy>(r); }

}  // namespace kvscope
