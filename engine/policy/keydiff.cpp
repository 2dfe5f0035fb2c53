// keydiff (Park et al. 2025, "KeyDiff: Key Similarity-Based KV Cache
// Eviction"): a slot's score is minus the cosine between its key and the
// mean direction of all keys of its segment, so the keys least like the
// rest stay. The mean direction moves as the cache changes, so the backend
// rescores every slot after every call (slot_stats.h). kvpress's
// KeyDiffPress; the paper's block-wise prefill is not modelled (one-shot
// prefill scores the whole prompt at once, as KeyDiffPress alone does).
#include "policy/policy.h"

namespace kvscope {
namespace {

class KeyDiffPolicy final : public Policy {
 public:
  using Policy::Policy;
  Ranking ranking() const override { return Ranking::Statistic; }
  SlotStatRule stat_rule(const StepContext&) const override {
    SlotStatRule rule;
    rule.source = StatSource::KeyDiff;
    return rule;
  }
};

}  // namespace

std::unique_ptr<Policy> make_keydiff_policy(const ResolvedPolicy& r) { return std::make_unique<KeyDiffPolicy>(r); }

}  // namespace kvscope
