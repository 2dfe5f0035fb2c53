// window: keeps the newest k tokens (a sliding window over the cache).
#include "policy/policy.h"

namespace kvscope {
namespace {

class WindowPolicy final : public Policy {
 public:
  using Policy::Policy;
  Ranking ranking() const override { return Ranking::Recency; }
};

}  // namespace

std::unique_ptr<Policy> make_window_policy(const ResolvedPolicy& r) { return std::make_unique<WindowPolicy>(r); }

}  // namespace kvscope
