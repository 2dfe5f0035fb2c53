// snapkv (SnapKV, Li et al. 2024): the prompt's last w queries (the
// observation window, which is also the protected recent window) score the
// keys before them, S[j] = sum over those queries of A[q][j], combined over
// the query heads that read the KV head; a slot ranks by the mean of S over
// the `kernel` slots centred on it (average pooling, zero beyond the
// competing slots, as kvpress's SnapKVPress pools with padding kernel/2).
// While decoding, each new query's attention is added to S, as H2O does:
// SnapKV itself compresses only the prompt. With a window of 0 every prompt
// query scores.
#include <algorithm>
#include <string>

#include "common/error.h"
#include "policy/policy.h"

namespace kvscope {
namespace {

class SnapKvPolicy final : public Policy {
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
  bool rescores() const override { return kernel_ > 1; }
  // The pooling of [j0, j1): a sum over the kernel's in-range slots
  // divided by the whole kernel (kvpress pools with count_include_pad).
  void rescore(const float* stat, const int*, int len, int j0, int j1, int, float* out) const override {
    const int half = kernel_ / 2;
    for (int j = 0; j < len; ++j) out[j] = stat[j];
    for (int j = j0; j < j1; ++j) {
      float sum = 0.0f;
      for (int d = std::max(j - half, j0); d <= std::min(j + half, j1 - 1); ++d) sum += stat[d];
      out[j] = sum / static_cast<float>(kernel_);
    }
  }

 private:
  int kernel_;
};

}  // namespace

std::unique_ptr<Policy> make_snapkv_policy(const ResolvedPolicy& r) {
  const double kernel = r.params.number("kernel");
  if (static_cast<long>(kernel) % 2 == 0)
    throw Error::setting("policy.kernel", "must be odd (the pooling window is centred on each slot), got " +
                                              std::to_string(static_cast<long>(kernel)));
  return std::make_unique<SnapKvPolicy>(r);
}

}  // namespace kvscope
