// Measured memory bandwidth, the yardstick for decode speed: decoding one
// token reads every weight once, so tokens/s <= bandwidth / weight bytes.
#pragma once

namespace kvscope::cli {

// Host read bandwidth in GB/s with `threads` tasks of the decode pool
// streaming a buffer much larger than the caches with the widest vector
// loads the CPU has (best of five passes after a warm-up). The pool runs
// min(threads, its size) of them at once, as decode does.
double host_read_bandwidth_gbs(int threads);

}  // namespace kvscope::cli
