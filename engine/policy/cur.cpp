// cur (Sengupta et al. 2025, CurDKV: value-guided KV compression by an
// approximated CUR decomposition; kvpress's CURPress with its defaults):
// a slot's score is its key's and its value's leverage, approximated by
// squared norms normalised within local windows of slots, combined as
// their product (backend/cache_scores.h), so keys and values that stand out
// from their neighbours stay. It reads the cache alone and needs no
// attention; the backend rescores every slot after every call. kvpress
// keeps its first 4 positions by scoring them 1: here they are the sinks.
#include "policy/policy.h"

namespace kvscope {
namespace {

class CurPolicy final : public Policy {
 public:
  using Policy::Policy;
  Ranking ranking() const override { return Ranking::Statistic; }
  SlotStatRule stat_rule(const StepContext&) const override {
    SlotStatRule rule;
    rule.source = StatSource::Cur;
    rule.span = static_cast<int>(r_.params.number("cur_window"));
    rule.variant = static_cast<int>(r_.params.leverage);
    return rule;
  }
};

}  // namespace

std::unique_ptr<Policy> make_cur_policy(const ResolvedPolicy& r) { return std::make_unique<CurPolicy>(r); }

}  // namespace kvscope
