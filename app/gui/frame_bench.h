// --bench-frames N: once the scripted run is done, the window draws N
// frames in each of three situations and prints each one's median and 90th
// percentile frame time (CPU time of the frame plus glFinish, so the
// software rasteriser's work under Xvfb counts): nothing changing, the
// main view panned every frame while zoomed in (the heatmap redrawn each
// frame), and the zoom changed every frame near the fit. For bench notes,
// never for tests.
#pragma once

#include <string>
#include <vector>

#include "app_state.h"

namespace kvscope::gui {

class FrameBench {
 public:
  explicit FrameBench(int frames_per_case) : frames_(frames_per_case) {}
  bool enabled() const { return frames_ > 0; }
  // Before the frame is built: moves the camera for the current case.
  void before_frame(AppState& s);
  // After glFinish and the swap: records the frame. True when all cases
  // are done (the report is printed to stderr).
  bool after_frame(double ms);

 private:
  int frames_ = 0, frame_ = 0, case_ = 0;
  std::vector<std::vector<double>> times_{3};
};

}  // namespace kvscope::gui
