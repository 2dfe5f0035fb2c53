// Named colormaps (256 RGB entries each) compiled into the library from
// engine/io/colormap_tables.inc, which tools/make_colormaps.py writes next
// to assets/colormaps/<name>.csv (the same numbers, for the shaders).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kvscope {

struct Rgb {
  uint8_t r = 0, g = 0, b = 0;
  friend bool operator==(const Rgb&, const Rgb&) = default;
};

struct Colormap {
  std::string_view name;
  std::array<Rgb, 256> table;

  // t in [0, 1] (clamped) -> one of the 256 entries: entry floor(t * 256),
  // with t = 1 mapped to the last, so every entry covers an equal interval
  // of t, the first holds exactly t = 0 and the last t = 1. NaN -> first.
  Rgb at(double t) const;
  static int index(double t);
};

// Throws kvscope::Error("colormap: unknown colormap 'jet' (known: viridis, ...)").
const Colormap& colormap(std::string_view name);
// "" for a known name, else the message above (for callers that check
// settings before any work and name the field themselves).
std::string unknown_colormap(std::string_view name);
std::vector<std::string> colormap_names();  // viridis, magma, inferno, gray, coolwarm

}  // namespace kvscope
