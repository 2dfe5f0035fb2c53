// knorm (Devoto et al. 2024, "A Simple and Effective L2 Norm-Based Strategy
// for KV Cache Compression"): a slot's score is minus its key's L2 norm,
// S_j = -|k_j|, so keys with a small norm stay (the paper finds they draw
// the most attention). The score reads the key alone and needs no
// attention; the backend recomputes it after every call (slot_stats.h).
// kvpress's KnormPress.
#include "policy/policy.h"

namespace kvscope {
namespace {

class KnormPolicy final : public Policy {
 public:
  using Policy::Policy;
  Ranking ranking() const override { return Ranking::Statistic; }
  SlotStatRule stat_rule(const StepContext&) const override {
    SlotStatRule rule;
    rule.source = StatSource::KeyNorm;
    return rule;
  }
};

}  // namespace

std::unique_ptr<Policy> make_knorm_policy(const ResolvedPolicy& r) { return std::make_unique<KnormPolicy>(r); }

}  // namespace kvscope
