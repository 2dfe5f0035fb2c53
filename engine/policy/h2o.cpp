// h2o (Heavy-Hitter Oracle): S_t = S_{t-1} + A_t, a new slot starting at its
// own attention; one-shot prefill = column sums of the prompt's attention.
// Keeps the recent window (default k/2) plus the top of the rest by S.
// With h2o_score = mean (kvpress's ObservedAttentionPress) a slot ranks by
// S / (queries that could see it): newest - position + 1, the n - j of a
// prompt's one-shot prefill (counted by position: a sliding-window layer's
// queries stop seeing a key sooner, which this does not model).
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
  bool rescores() const override { return r_.params.h2o_score == H2oScore::Mean; }
  void rescore(const float* stat, const int* pos, int len, int, int, int newest, float* out) const override {
    for (int j = 0; j < len; ++j) out[j] = stat[j] / static_cast<float>(newest - pos[j] + 1);
  }
};

}  // namespace

std::unique_ptr<Policy> make_h2o_policy(const ResolvedPolicy& r) { return std::make_unique<H2OPolicy>(r); }

}  // namespace kvscope
