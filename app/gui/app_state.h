// Everything the window holds between frames, in one plain struct (the
// imgui_demo way): the worker and what it published, the selection, the
// view settings and the editable settings of the panels. Each panel is one
// function taking AppState&; no panel keeps state of its own elsewhere.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "engine_worker.h"
#include "published_run.h"
#include "shell_state.h"

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
const char* view_mode_name(ViewMode m);

enum class EvictedMark { Outline, Strip, None };  // evicted cells: outline, side strip, not marked
enum class ColorScaleKind { Linear, Log };

struct ViewSettings {
  ViewMode mode = ViewMode::Attention;
  EvictedMark evicted = EvictedMark::Outline;
  ColorScaleKind scale = ColorScaleKind::Linear;
  std::string colormap = "viridis";  // io/colormap names
  bool auto_range = true;
  float range_lo = 0, range_hi = 1;  // when !auto_range
  bool shared_range = false;  // one range over the main view, B and every grid thumbnail
  // Zoom and pan of the main view in cells (top-left cell and cells per pixel).
  double view_x0 = 0, view_y0 = 0, zoom = 0;  // zoom 0 = fit to the panel
  bool follow_latest = true;  // keep the newest row in view while playing
};

// The settings being edited in the policy / sharing panels before "Apply".
struct PendingSettings {
  PolicyParams policy;
  SharingLayout sharing;
  ApplyMode mode = ApplyMode::FromNow;
  PolicyParams fork_policy;  // the configuration B for "Fork"
};

struct AppState {
  std::unique_ptr<EngineWorker> worker;
  // What the worker published, refreshed once per frame.
  std::shared_ptr<const PublishedRun> a, b;
  std::shared_ptr<const FullReference> full_ref;
  WorkerStatus status;

  // Selection.
  int layer = 0, head = 0;   // query head; the KV head is head / (heads per KV head)
  bool head_chosen = false;  // false: follow the session's informative head
  int timeline_row = -1;     // -1 = the latest row; else a scrubbed row
  std::vector<int> bookmarks;  // positions; an eviction of one raises an alert
  std::vector<std::string> alerts;  // "step 14: layer 2 KV head 1 evicted bookmarked 'Paris' (pos 7)"
  int hovered_position = -1;  // the token under the mouse in any view (-1 none), highlighted everywhere
  std::vector<int> curve_positions;  // tokens whose statistic the score curves draw

  ViewSettings view;
  PendingSettings pending;
  SessionConfig editing;  // model, device, prompt, continuation, sampling as edited in the panels

  // Window.
  bool presenter = false;   // bigger fonts, expert panels hidden
  bool show_help = false;   // F1 overlay
  float ui_scale = 1.0f;    // HiDPI content scale x presenter factor
  double frame_ms = 0;      // last frame's CPU time
  std::vector<std::string> recent_models;
  std::string lesson_title, lesson_caption, lesson_look_at;  // the open lesson, if any
  std::string export_dir = "kvscope-export";
  ShellState shell;  // the window shell's own (panels, script, rects for tests)

  // The row the views show: the scrubbed one, or the latest published.
  int shown_row() const {
    const int latest = a ? a->rows - 1 : -1;
    return timeline_row < 0 || timeline_row > latest ? latest : timeline_row;
  }
};

}  // namespace kvscope::gui
