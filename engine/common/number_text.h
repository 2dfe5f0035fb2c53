// A number as messages quote it: printf's %g (8, 0.5, 1e-05), so a value
// the user typed reads back the way they wrote it.
#pragma once

#include <cstdio>
#include <string>

namespace kvscope {

inline std::string number_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

}  // namespace kvscope
