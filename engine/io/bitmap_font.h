// kvscope's own bitmap font for figure text: printable ASCII (32..126) in
// 5x9 cells (7 rows above the baseline, 2 descender rows), proportional
// spacing except for digits, which share one width so that tick labels line
// up. Drawn at integer scales by io/image.h; no font files at run time.
#pragma once

#include <array>
#include <cstdint>

namespace kvscope::bitmap_font {

inline constexpr int kRows = 9;     // glyph rows, top to bottom
inline constexpr int kAscent = 7;   // rows from the top down to the baseline
inline constexpr int kMaxWidth = 5; // widest glyph, in columns
inline constexpr int kSpacing = 1;  // blank columns after each glyph

struct Glyph {
  std::array<uint8_t, kRows> rows{};  // bit (width - 1 - x) set: column x inked
  int width = 0;                      // inked columns, left-aligned at 0
  int advance = 0;                    // width + kSpacing (space: a fixed gap)
  bool on(int x, int y) const { return x >= 0 && x < width && y >= 0 && y < kRows && ((rows[y] >> (width - 1 - x)) & 1); }
};

// Any char outside 32..126 is drawn as '?'.
const Glyph& glyph(char c);

}  // namespace kvscope::bitmap_font
