// Measured memory bandwidth, the yardstick for decode speed: decoding one
// token reads every weight once, so tokens/s <= bandwidth / weight bytes.
#pragma once

#include <cstdint>
#include <string>

#include "model/weights.h"

namespace kvscope::cli {

// Host read bandwidth in GB/s with `threads` tasks of the decode pool
// streaming a buffer much larger than the caches with the widest vector
// loads the CPU has (best of five passes after a warm-up). The pool runs
// min(threads, its size) of them at once, as decode does.
double host_read_bandwidth_gbs(int threads);

// Throws kvscope::Error when the CPU backend's copy of `weights` under
// --weights `format` (CpuModel::host_bytes; f16 with the fp32 copy of a
// matrix alive while converting) would take more than 90% of the memory a
// new allocation can get; `what` names the model.
void check_host_memory(const std::string& what, const ModelWeights& weights, const std::string& format);

}  // namespace kvscope::cli
