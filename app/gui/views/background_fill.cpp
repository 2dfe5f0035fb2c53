#include "views/background_fill.h"

#include <algorithm>

namespace kvscope::gui {

std::vector<Box> boxes_around(const Box& outer, const std::vector<Box>& holes) {
  std::vector<Box> inside;  // the holes clipped to `outer`, empty ones dropped
  for (const Box& h : holes) {
    const Box c{std::max(h.x0, outer.x0), std::max(h.y0, outer.y0), std::min(h.x1, outer.x1), std::min(h.y1, outer.y1)};
    if (c.x0 < c.x1 && c.y0 < c.y1) inside.push_back(c);
  }
  std::vector<float> ys{outer.y0, outer.y1};
  for (const Box& h : inside) ys.insert(ys.end(), {h.y0, h.y1});
  std::sort(ys.begin(), ys.end());
  ys.erase(std::unique(ys.begin(), ys.end()), ys.end());

  std::vector<Box> out;
  for (std::size_t b = 0; b + 1 < ys.size(); ++b) {
    const float top = ys[b], bottom = ys[b + 1];
    if (!(top < bottom)) continue;
    // The holes crossing this band cover it from top to bottom (every
    // hole's edges are band edges): what is left of the band is the gaps
    // between their x-intervals.
    std::vector<std::pair<float, float>> spans;
    for (const Box& h : inside)
      if (h.y0 <= top && h.y1 >= bottom) spans.emplace_back(h.x0, h.x1);
    std::sort(spans.begin(), spans.end());
    float x = outer.x0;
    auto emit = [&](float x0, float x1) {
      if (!(x0 < x1)) return;
      // Join the box of the same span right above it (a few boxes: a scan).
      for (Box& above : out)
        if (above.y1 == top && above.x0 == x0 && above.x1 == x1) {
          above.y1 = bottom;
          return;
        }
      out.push_back({x0, top, x1, bottom});
    };
    for (const auto& [s0, s1] : spans) {
      emit(x, s0);
      x = std::max(x, s1);
    }
    emit(x, outer.x1);
  }
  return out;
}

}  // namespace kvscope::gui
