// random: a uniformly random unprotected slot goes while over budget, drawn
// from the seeded Philox stream (a baseline for the scored policies).
#include "policy/policy.h"

namespace kvscope {
namespace {

class RandomPolicy final : public Policy {
 public:
  using Policy::Policy;
  Ranking ranking() const override { return Ranking::Random; }
};

}  // namespace

std::unique_ptr<Policy> make_random_policy(const ResolvedPolicy& r) { return std::make_unique<RandomPolicy>(r); }

}  // namespace kvscope
