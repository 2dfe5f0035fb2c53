// kvscope-cli bench --policy NAME: what eviction and recording cost per
// decoded token, next to plain full-cache decoding of the same model.
#pragma once

#include <cstdint>
#include <string>

#include "cli_policy.h"

namespace kvscope::cli {

struct PolicyBenchArgs {
  std::string model, device = "cpu";
  std::string shape;  // instead of a model: a known shape's random weights (model/shapes.h)
  int prompt_tokens = 128, decode_tokens = 32, repeats = 3;
  uint64_t seed = 1;
  bool json = false;
  PolicyFlags flags;
};

// Times four runs of one random prompt: the bare backend (full cache, no
// recording), the session stepper with the full policy and every layer
// (or the --record-layers) recorded, the stepper with the chosen policy and
// the same layers recorded, and that again with the metrics on (their
// full-cache reference stepped together with the policy run; left out with
// --no-metrics). Reports the best of `repeats` runs each.
void run_policy_bench(const PolicyBenchArgs& a);

}  // namespace kvscope::cli
