// Everything the window holds between frames, in one plain struct (the
// imgui_demo way): the worker and what it published, the selection, the
// view settings and the editable settings of the panels. Each panel is one
// function taking AppState&; no panel keeps state of its own elsewhere.
// What the views keep besides (GL objects and caches of work done) is the
// frame's ViewCaches (views/view_caches.h), never a choice of the user.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine_worker.h"
#include "published_run.h"
#include "shell_state.h"
#include "view_settings.h"

namespace kvscope::gui {

// Bookmarked tokens watched for eviction (views/bookmark_alerts.h): how far
// into A's eviction events the watch has read, and when each bookmark was
// last evicted (ImGui time), for the token strip's flash and the alert line.
struct BookmarkWatch {
  const void* session = nullptr;  // the session and generation the events are of
  uint64_t generation = 0;
  std::size_t seen_events = 0;
  std::map<int, double> flashed_at;  // position -> ImGui time of its eviction
  std::string last_alert;
  double last_alert_at = -1e9;
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
  BookmarkWatch bookmark_watch;
  int hovered_position = -1;  // the token under the mouse in any view (-1 none), highlighted everywhere
  // views/hover.h: the position a view noted this frame (published as
  // hovered_position when the next frame begins) and that frame's number.
  int hover_noted = -1, hover_frame = -1;
  std::vector<int> curve_positions;  // tokens whose statistic the score curves draw

  ViewSettings view;
  PendingSettings pending;
  SessionConfig editing;  // model, device, prompt, continuation, sampling as edited in the panels

  // Window.
  bool presenter = false;   // bigger fonts, expert panels hidden
  bool show_help = false;   // F1 overlay
  float ui_scale = 1.0f;    // HiDPI content scale x presenter factor
  double frame_ms = 0;      // the last frame drawn: build + raster + present (ms)
  std::vector<std::string> recent_models;
  std::optional<LessonConfig> lesson;  // the open lesson, if any
  int lesson_step = -1;                // its step on screen (-1: the introduction)
  std::string export_dir;              // "" until first shown: then export_defaults.h's folder
  bool show_export = false;            // File > Export... (Ctrl+E)
  ShellState shell;  // the window shell's own (panels, script, rects for tests)

  // The row the views show: the scrubbed one, or the latest published.
  int shown_row() const {
    const int latest = a ? a->rows - 1 : -1;
    return timeline_row < 0 || timeline_row > latest ? latest : timeline_row;
  }
};

}  // namespace kvscope::gui
