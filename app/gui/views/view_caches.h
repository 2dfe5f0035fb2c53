// What the views keep from one frame to the next that is neither a choice
// of the user (AppState::view) nor the engine's data: the GL objects they
// draw with (textures, render targets, the shader program) and the work
// they need not redo (downsampled thumbnails, thresholds, the replays
// already asked of the worker). One explicit object, owned by the frame
// (app_frame.h) and handed to each view, instead of statics inside the
// views: made after the GL context exists, released before it goes.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "views/color_range.h"
#include "views/heatmap_panel.h"
#include "views/live_heatmap.h"
#include "views/thumbnail_atlas.h"
#include "views/views_gpu.h"

namespace kvscope::gui {

// The main view (main_view.cpp).
struct MainViewCache {
  // One picture with its (optional) mask strip below it.
  struct Picture {
    LiveHeatmap cells;
    PanelRenderCache panel, strip;
    void release();
  };
  Picture a, b, diff;  // A, or A | B | difference in the fork comparison
  std::set<std::pair<uint64_t, int>> fill_requested;  // (generation, layer) replays asked for
  std::tuple<uint64_t, int, int> full_requested{0, -1, -1};  // (generation, layer, rows) of the last full-cache request
};

// The layers x heads grid (grid_panel.cpp).
struct GridCache {
  ThumbnailAtlas atlas;
  RenderTarget target;
  std::string rendered;  // what `target` shows
  double rendered_at = -1e9;
  int atlas_kind = -1;
  int epoch = 0;  // bumps with every atlas reset, so a refilled atlas is drawn again
  std::set<std::pair<uint64_t, int>> fill_requested;
  // Summaries of the shown row, recomputed when the row or the data change.
  std::string summary_source;  // what the summaries were computed from
  int summary_row = -1;
  double summarized_at = -1e9;
  std::vector<float> summary;  // [layer * heads + head]
  // Scrolling layers: the first one in view, the one to scroll to next
  // frame (-1: none), and the selected layer last brought into view.
  int first_layer = 0, scroll_to_layer = -1, followed_layer = -1;
};

// The score curves (score_curves_panel.cpp): the eviction threshold per
// row of one KV segment, grown as rows arrive.
struct ScoreCurvesCache {
  const void* session = nullptr;
  uint64_t generation = 0;
  int segment = -1;
  std::vector<float> threshold;
};

struct ViewCaches {
  ViewGpu gpu;
  RangeReports ranges;  // the shared colour range's inputs
  MainViewCache main_view;
  GridCache grid;
  ScoreCurvesCache score_curves;

  // Compiles the shaders and makes the colormap textures (the GL context
  // must be current).
  void init();
  // Frees every GL object the views made, while the context still exists.
  void release();
};

}  // namespace kvscope::gui
