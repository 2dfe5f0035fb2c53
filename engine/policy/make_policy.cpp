#include "policy/policy.h"

namespace kvscope {

std::unique_ptr<Policy> make_policy(const ResolvedPolicy& r) {
  switch (r.params.kind) {
    case PolicyKind::Full: return make_full_policy(r);
    case PolicyKind::Window: return make_window_policy(r);
    case PolicyKind::Sink: return make_sink_policy(r);
    case PolicyKind::H2O: return make_h2o_policy(r);
    case PolicyKind::TOVA: return make_tova_policy(r);
    case PolicyKind::Keyformer: return make_keyformer_policy(r);
    case PolicyKind::A2SF: return make_a2sf_policy(r);
    case PolicyKind::Random: return make_random_policy(r);
    case PolicyKind::Ideal: return make_ideal_policy(r);
  }
  return make_full_policy(r);
}

}  // namespace kvscope
