// What the user chose about how the views look: the mode of the main view,
// the colours, how evicted cells show, the fork comparison's third panel,
// the zoom. Plain data in AppState::view; app_settings.cpp saves the
// choices (not the zoom and pan, which belong to one session's size) so
// that the next start shows things the same way, and state_json.cpp
// writes them into the state file tests read.
#pragma once

#include <optional>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

namespace kvscope::gui {

// What the main view shows for the selected layer and head.
enum class ViewMode {
  Attention,      // attention heatmap: rows are steps, columns positions
  Mask,           // retained mask, TOVA paper style: kept / evicted now / evicted earlier / protected
  Statistic,      // the policy's statistic (accumulated attention, noisy score, discounted sum)
  DiffFull,       // attention A minus the full cache's attention along the same tokens
  DiffFork,       // A vs B: mask A vs mask B, attention A - B
  IdealOverlay,   // A's mask against the ideal top-k of A's own attention
};
// "retained mask", ...: what the mode combo shows.
const char* view_mode_name(ViewMode m);
// "attention", "mask", ... (session files' view.mode names, kViewModes) <-> ViewMode.
const char* view_mode_key(ViewMode m);
std::optional<ViewMode> parse_view_mode(const std::string& name);

enum class EvictedMark { Outline, Strip, None };  // evicted cells: outline, side strip, not marked
enum class ColorScaleKind { Linear, Log };
// How the fork comparison's third panel shows A against B.
enum class ForkDifference { Attention, Masks };

struct ViewSettings {
  ViewMode mode = ViewMode::Attention;
  EvictedMark evicted = EvictedMark::Outline;
  ColorScaleKind scale = ColorScaleKind::Linear;
  std::string colormap = "viridis";  // io/colormap names
  bool auto_range = true;
  float range_lo = 0, range_hi = 1;  // when !auto_range
  bool shared_range = false;  // one range over the main view, B and every grid thumbnail
  ForkDifference fork_difference = ForkDifference::Attention;  // the A - B panel: attention or masks
  bool follow_latest = true;  // keep the newest row in view while playing

  // Zoom and pan of the main view in cells (top-left cell and cells per
  // pixel); not saved. zoom_aspect: cells per pixel down over across while
  // zoomed (the fit's aspect when zooming began).
  double view_x0 = 0, view_y0 = 0, zoom = 0;  // zoom 0 = fit to the panel
  double zoom_aspect = 1;
  // Positions [first, last] the next frame opens on (a session file's or
  // lesson's "view.positions"); consumed by the main view's camera.
  std::optional<std::pair<int, int>> open_on_columns;
  // The next frame opens on views/first_view.h's rule (a session or lesson
  // that names no positions); consumed by the main view's camera.
  bool open_first_view = false;
  // The fit on screen is first_view's choice, not the user's: when the run
  // grows past what the fit can label (a short prompt generating hundreds
  // of tokens), the rule applies again and the view moves to the newest
  // cells at a legible size. Any zoom, pan or "fit" of the user's ends it.
  bool fit_while_legible = false;
};

// Back to the fit: every recorded step and every position seen, following
// the newest (the toolbar's "fit", the Home key).
void fit_view(ViewSettings& v);

// The saved choices as JSON ({"mode": "mask", "colormap": "magma", ...}),
// and back: each field read on its own, a missing or wrong one keeps what
// `into` holds (a settings file from another version still loads).
nlohmann::json view_settings_to_json(const ViewSettings& v);
void view_settings_from_json(const nlohmann::json& j, ViewSettings& into);

}  // namespace kvscope::gui
