#include "frame_bench.h"

#include <algorithm>
#include <cstdio>

namespace kvscope::gui {

namespace {

const char* const kCases[] = {"still (nothing changes)", "panning while zoomed in (heatmap redrawn)",
                              "zooming near the fit (heatmap redrawn)"};

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(q * (v.size() - 1) + 0.5))];
}

}  // namespace

void FrameBench::before_frame(AppState& s) {
  ViewSettings& v = s.view;
  switch (case_) {
    case 0:
      v.zoom = 0;  // fit
      break;
    case 1:
      // Half a cell per pixel, moving a few cells right and down each frame.
      v.follow_latest = false;
      v.zoom = 0.5;
      v.view_x0 = (frame_ * 7) % 1024;
      v.view_y0 = (frame_ * 5) % 1024;
      break;
    default: {
      // Between 1.1x and 1.3x the fit's cells per pixel is zoomed out past
      // the fit, which snaps back; so zoom in around 0.6..0.9 of the rows.
      v.follow_latest = true;
      const double rows = s.a ? std::max(1, s.a->rows) : 1;
      v.zoom = rows / 800.0 * (0.6 + 0.3 * (frame_ % 2));
      break;
    }
  }
}

bool FrameBench::after_frame(double ms) {
  // The first frames of a case settle textures; they are not counted.
  if (frame_ >= 3) times_[case_].push_back(ms);
  if (++frame_ < frames_ + 3) return false;
  frame_ = 0;
  if (++case_ < 3) return false;
  std::fprintf(stderr, "frame time over %d frames per case (ms, median / 90th percentile):\n", frames_);
  for (int c = 0; c < 3; ++c)
    std::fprintf(stderr, "  %-45s %7.1f / %7.1f\n", kCases[c], percentile(times_[c], 0.5), percentile(times_[c], 0.9));
  return true;
}

}  // namespace kvscope::gui
