// keyformer: G_t = softmax((X_t + g) / tau_t) over the pre-softmax logits
// with fresh noise g per (step, layer, head, slot), F_t = F_{t-1} + G_t.
// Attention itself keeps the ordinary softmax; G only scores. Recent window
// default 30% of k; tau rises from tau_init to tau_end over the planned
// new tokens.
#include "policy/policy.h"

namespace kvscope {

float keyformer_tau(const PolicyParams& p, const StepContext& ctx) {
  if (p.tau_schedule == TauSchedule::Constant) return p.tau_init;
  const int T = ctx.planned_new_tokens > 0 ? ctx.planned_new_tokens : 1;
  return p.tau_init + static_cast<float>(ctx.step) * (p.tau_end - p.tau_init) / static_cast<float>(T);
}

namespace {

class KeyformerPolicy final : public Policy {
 public:
  using Policy::Policy;
  Ranking ranking() const override { return Ranking::Statistic; }
  SlotStatRule stat_rule(const StepContext& ctx) const override {
    SlotStatRule rule;
    rule.source = StatSource::GumbelSoftmax;
    rule.decay = 1.0f;
    rule.reduce = r_.params.reduce;
    rule.noise = r_.params.noise;
    rule.tau = keyformer_tau(r_.params, ctx);
    rule.seed = r_.params.seed;
    return rule;
  }
};

}  // namespace

// The authors' released attention.py (--keyformer-variant code):
// docs/policies.md, "Where kvscope follows the paper and where the authors'
// code differs".
void keyformer_variant_rules(const PolicyParams& p, ResolveRules& rules, ChoiceQuirks& q) {
  if (p.keyformer_variant != KeyformerVariant::Code) return;
  rules.truncate_percentages = true;  // int((n * kv_cache) / 100)
  q.reserved_slot = true;
  q.window_exit_dropped = true;
  q.zero_window_holds = true;
}

std::unique_ptr<Policy> make_keyformer_policy(const ResolvedPolicy& r) {
  return std::make_unique<KeyformerPolicy>(r);
}

}  // namespace kvscope
