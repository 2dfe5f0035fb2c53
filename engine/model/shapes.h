// Real architectures' shapes with random weights, for benchmarks that need
// no files: `kvscope-cli bench --shape llama-2-7b`.
#pragma once

#include <string>
#include <vector>

#include "model/config.h"
#include "model/weights.h"

namespace kvscope {

std::vector<std::string> known_shapes();
// Throws kvscope::Error listing the known shapes for an unknown name.
ModelConfig shape_config(const std::string& name);
// Uniform random weights (std 0.02, norms at 1) described, not allocated:
// each backend generates them where they live.
ModelWeights random_weights(const ModelConfig& cfg, uint64_t seed);

}  // namespace kvscope
