#include "frame_bench.h"

#include <algorithm>
#include <cfloat>
#include <cstdio>

namespace kvscope::gui {

namespace {

constexpr int kCases = 4;
const char* const kCaseNames[kCases] = {"still (nothing changes)", "panning while zoomed in (heatmap redrawn)",
                                        "zooming near the fit (heatmap redrawn)",
                                        "pointer moving over the cells (tooltip)"};

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(q * (v.size() - 1) + 0.5))];
}

template <class Phase>
double median_of(const std::vector<FramePhases>& frames, Phase phase) {
  std::vector<double> v;
  for (const FramePhases& f : frames) v.push_back(phase(f));
  return percentile(v, 0.5);
}

}  // namespace

void FrameBench::before_frame(AppState& s) {
  ViewSettings& v = s.view;
  switch (case_) {
    case 0:
    case 3:
      v.follow_latest = true;
      v.zoom = 0;  // fit, and it stays (however illegible)
      v.fit_while_legible = false;
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

void FrameBench::place_pointer(const AppState& s, float& x, float& y) const {
  x = y = -FLT_MAX;
  if (case_ != 3) return;
  const auto it = s.shell.rects.find("cells.A");
  if (it == s.shell.rects.end()) return;
  // A diagonal walk over the cells, a few pixels a frame.
  const ScreenRect& r = it->second;
  const float t = 0.1f + 0.8f * float(frame_) / float(frames_ + 3);
  x = r.x + t * r.w;
  y = r.y + t * r.h;
}

bool FrameBench::after_frame(const FramePhases& ms) {
  // The first frames of a case settle textures; they are not counted.
  if (frame_ >= 3) {
    times_[case_].push_back(ms);
  }
  if (++frame_ < frames_ + 3) return false;
  frame_ = 0;
  if (++case_ < kCases) return false;
  std::fprintf(
      stderr,
      "frame time over %d frames per case (ms, median / 90th percentile; medians of build + raster + present):\n",
      frames_);
  for (int c = 0; c < kCases; ++c) {
    std::vector<double> totals;
    for (const FramePhases& f : times_[c]) totals.push_back(f.total());
    std::fprintf(stderr, "  %-45s %7.1f / %7.1f   (%.1f + %.1f + %.1f; %3.0f%% of the pixels drawn)\n", kCaseNames[c],
                 percentile(totals, 0.5), percentile(totals, 0.9),
                 median_of(times_[c], [](const FramePhases& f) { return f.build; }),
                 median_of(times_[c], [](const FramePhases& f) { return f.raster; }),
                 median_of(times_[c], [](const FramePhases& f) { return f.present; }),
                 100 * median_of(times_[c], [](const FramePhases& f) { return f.drawn_share; }));
  }
  return true;
}

}  // namespace kvscope::gui
