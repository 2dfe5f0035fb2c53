// One line saying which policy is in effect with its resolved numbers,
// "h2o k=49 w=24 s=0 kv_head": the CLI's run summary and the window's
// labels print the same words.
#pragma once

#include <string>

#include "policy/params.h"

namespace kvscope {

std::string policy_summary(const ResolvedPolicy& r);

}  // namespace kvscope
