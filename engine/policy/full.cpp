// full: the topline. Keeps everything; no statistic.
#include "policy/policy.h"

namespace kvscope {
namespace {

class FullPolicy final : public Policy {
 public:
  using Policy::Policy;
  Ranking ranking() const override { return Ranking::None; }
};

}  // namespace

std::unique_ptr<Policy> make_full_policy(const ResolvedPolicy& r) { return std::make_unique<FullPolicy>(r); }

}  // namespace kvscope
