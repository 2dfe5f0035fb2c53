// Whether a policy's choices depend on the seed: random, and Keyformer
// with Gumbel or Gaussian noise (constant noise and none draw nothing). A
// sweep runs such a policy once per seed (--seeds), any other once.
#pragma once

#include "policy/params.h"

namespace kvscope {

bool draws_random(const PolicyParams& p);

}  // namespace kvscope
