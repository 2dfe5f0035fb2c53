// SnapKV's scoring (snapkv.cpp has the rule), shared with PyramidKV, which
// ranks slots the same way under budgets shaped by depth.
#pragma once

#include <algorithm>

#include "policy/policy.h"

namespace kvscope {

class SnapKvPolicy : public Policy {
 public:
  explicit SnapKvPolicy(const ResolvedPolicy& r) : Policy(r), kernel_(static_cast<int>(r.params.number("kernel"))) {}
  Ranking ranking() const override { return Ranking::Statistic; }
  SlotStatRule stat_rule(const StepContext&) const override {
    SlotStatRule rule;
    rule.source = StatSource::Attention;
    rule.decay = 1.0f;
    rule.reduce = r_.params.reduce;
    rule.last_rows = r_.w;
    return rule;
  }
  bool rescores() const override { return kernel_ > 1 || r_.w > 1; }
  // The pooling of [j0, j1): a sum over the kernel's in-range slots
  // divided by the whole kernel (kvpress pools with count_include_pad),
  // and by the observation window's queries, so the score is their mean
  // attention as kvpress's (its scale matters where a score is combined
  // with something else, CriticalKV's value norms).
  void rescore(const float* stat, const int*, int len, int j0, int j1, int, float* out) const override {
    const int half = kernel_ / 2;
    const float queries = static_cast<float>(std::max(r_.w, 1));
    for (int j = 0; j < len; ++j) out[j] = stat[j];
    for (int j = j0; j < j1; ++j) {
      float sum = 0.0f;
      for (int d = std::max(j - half, j0); d <= std::min(j + half, j1 - 1); ++d) sum += stat[d];
      out[j] = sum / static_cast<float>(kernel_) / queries;
    }
  }

 private:
  int kernel_;
};

// Throws Error::setting("policy.kernel", ...) for an even kernel.
void check_snapkv_kernel(const PolicyParams& p);

}  // namespace kvscope
