#include "policy/draws_random.h"

namespace kvscope {

bool draws_random(const PolicyParams& p) {
  if (p.kind == PolicyKind::Random) return true;
  return p.kind == PolicyKind::Keyformer && (p.noise == NoiseKind::Gumbel || p.noise == NoiseKind::Gaussian);
}

}  // namespace kvscope
