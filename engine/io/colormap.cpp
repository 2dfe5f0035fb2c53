#include "io/colormap.h"

#include <cmath>

#include "common/error.h"

namespace kvscope {
namespace {

const Colormap kColormaps[] = {
#include "io/colormap_tables.inc"
};

}  // namespace

int Colormap::index(double t) {
  if (!(t > 0)) return 0;  // also NaN
  if (t >= 1) return 255;
  return std::min(255, static_cast<int>(t * 256));
}

Rgb Colormap::at(double t) const { return table[static_cast<std::size_t>(index(t))]; }

std::string unknown_colormap(std::string_view name) {
  std::string known;
  for (const auto& c : kColormaps) {
    if (c.name == name) return "";
    known += (known.empty() ? "" : ", ") + std::string(c.name);
  }
  return "unknown colormap '" + std::string(name) + "' (known: " + known + ")";
}

const Colormap& colormap(std::string_view name) {
  for (const auto& c : kColormaps)
    if (c.name == name) return c;
  throw Error("colormap", "", unknown_colormap(name));
}

std::vector<std::string> colormap_names() {
  std::vector<std::string> names;
  for (const auto& c : kColormaps) names.emplace_back(c.name);
  return names;
}

}  // namespace kvscope
