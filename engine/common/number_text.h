// A number as messages quote it: printf's %g (8, 0.5, 1e-05), so a value
// the user typed reads back the way they wrote it; a whole number every
// digit (1048576, where %g would round it to 1.04858e+06).
#pragma once

#include <cmath>
#include <cstdio>
#include <string>

namespace kvscope {

inline std::string number_text(double v) {
  char buf[32];
  if (std::isfinite(v) && v == std::trunc(v) && std::fabs(v) < 1e15) std::snprintf(buf, sizeof buf, "%.0f", v);
  else std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

}  // namespace kvscope
