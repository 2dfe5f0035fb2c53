#include "policy/policy.h"

namespace kvscope {

std::unique_ptr<Policy> make_policy(const ResolvedPolicy& r) { return policy_spec(r.params.kind).make(r); }

}  // namespace kvscope
