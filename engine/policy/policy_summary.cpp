#include "policy/policy_summary.h"

#include <cstdio>

namespace kvscope {

std::string policy_summary(const ResolvedPolicy& r) {
  char buf[160];
  std::snprintf(buf, sizeof(buf), "%s k=%d w=%d s=%d %s", policy_name(r.params.kind), r.k, r.w, r.s,
                granularity_name(r.granularity));
  return buf;
}

}  // namespace kvscope
