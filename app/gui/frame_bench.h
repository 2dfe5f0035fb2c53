// --bench-frames N: once the scripted run is done, the window draws N
// frames in each of four situations and prints each one's median and 90th
// percentile frame time, split into its phases: building the frame on the
// CPU (ImGui, the heatmap passes queued), rasterising it (ImGui's draw
// data, then glFinish, so the software rasteriser's work under Xvfb
// counts) and presenting it (the swap). The situations: nothing changing
// (a frame identical to the last one shown is not rasterised nor
// presented, frame_skip.h, so this is what a still window really costs),
// the main view panned every frame while zoomed in, the zoom changed every
// frame near the fit (both redraw the heatmap), and the pointer moving
// over the cells at the fit (the tooltip follows it; the heatmap is not
// redrawn but the window is). For bench notes, never for tests.
#pragma once

#include <string>
#include <vector>

#include "app_state.h"

namespace kvscope::gui {

// One frame's milliseconds by phase.
struct FramePhases {
  double build = 0, raster = 0, present = 0;
  float drawn_share = 0;  // of the window's pixels drawn again (frame_damage.h)
  double total() const { return build + raster + present; }
};

class FrameBench {
 public:
  explicit FrameBench(int frames_per_case) : frames_(frames_per_case) {}
  bool enabled() const { return frames_ > 0; }
  // Before the frame is built: moves the camera for the current case.
  void before_frame(AppState& s);
  // After the platform's new frame, before ImGui's: where the pointer is
  // for the current case (outside the window but in the pointer case).
  void place_pointer(const AppState& s, float& x, float& y) const;
  // After glFinish and the swap: records the frame. True when all cases
  // are done (the report is printed to stderr).
  bool after_frame(const FramePhases& ms);

 private:
  int frames_ = 0, frame_ = 0, case_ = 0;
  std::vector<std::vector<FramePhases>> times_{4};
};

}  // namespace kvscope::gui
