// sink (StreamingLLM): the first s positions (attention sinks, s = 4) are
// protected; of the rest the newest k - s are kept.
#include "policy/policy.h"

namespace kvscope {
namespace {

class SinkPolicy final : public Policy {
 public:
  using Policy::Policy;
  Ranking ranking() const override { return Ranking::Recency; }
};

}  // namespace

std::unique_ptr<Policy> make_sink_policy(const ResolvedPolicy& r) { return std::make_unique<SinkPolicy>(r); }

}  // namespace kvscope
