// The quiet NaN that marks a value that does not exist (a cell not recorded
// or evicted, the mean of nothing), in both widths the engine stores.
#pragma once

#include <limits>

namespace kvscope {

inline constexpr float kNaNf = std::numeric_limits<float>::quiet_NaN();
inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

}  // namespace kvscope
