#include "policy/policy_summary.h"

#include <cstdio>

namespace kvscope {

std::string policy_summary(const ResolvedPolicy& r) {
  char buf[160];
  std::snprintf(buf, sizeof(buf), "%s k=%d w=%d s=%d %s", policy_name(r.params.kind), r.k, r.w, r.s,
                granularity_name(r.granularity));
  std::string out = buf;
  // The policy's other parameters where they differ from its defaults
  // ("h2o_score=mean", "kernel=3"), so two runs that differ say how.
  const PolicySpec& spec = policy_spec(r.params.kind);
  for (const ParamUse& use : spec.params) {
    const std::string key = use.key;
    if (key == "budget" || key == "window" || key == "sinks" || key == "granularity") continue;
    const ParamSpec& param = *find_param(key);
    const std::string value = param_text(r.params, param);
    if (!value.empty() && value != param_default(spec, param)) out += " " + key + "=" + value;
  }
  return out;
}

}  // namespace kvscope
