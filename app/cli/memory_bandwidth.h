// Measured memory bandwidth, the yardstick for decode speed: decoding one
// token reads every weight once, so tokens/s <= bandwidth / weight bytes.
#pragma once

namespace kvscope::cli {

// Host read bandwidth in GB/s with `threads` threads streaming a buffer much
// larger than the caches (best of several passes).
double host_read_bandwidth_gbs(int threads);

}  // namespace kvscope::cli
