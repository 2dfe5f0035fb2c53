// The parts of a panel's background that nothing opaque covers.
//
// Under a software rasteriser every pixel filled costs CPU: the main view's
// background under its heatmap (which is opaque) was a third of a frame's
// fill when the view pans or zooms. The main view draws its background
// itself, around the heatmaps' rectangles (app_frame.cpp). Plain geometry,
// no ImGui or OpenGL, so its tests need no display.
#pragma once

#include <vector>

namespace kvscope::gui {

struct Box {
  float x0 = 0, y0 = 0, x1 = 0, y1 = 0;  // x0 <= x1, y0 <= y1
  bool operator==(const Box&) const = default;
};

// `outer` less every hole, as disjoint boxes: horizontal bands between the
// holes' top and bottom edges, each cut around the holes that cross it
// (bands of the same span one above the other are joined). Holes may
// overlap each other and reach outside `outer`.
std::vector<Box> boxes_around(const Box& outer, const std::vector<Box>& holes);

}  // namespace kvscope::gui
