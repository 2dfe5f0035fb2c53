// One frame of the window, apart from the GLFW / OpenGL plumbing of
// main.cpp: take over what the worker published, then draw every panel.
// The frame owns what the views keep between frames that is not AppState:
// their GL objects and caches (views/view_caches.h).
#pragma once

#include <imgui.h>

#include "app_state.h"
#include "views/view_caches.h"

namespace kvscope::gui {

// Reads the worker's published runs and status; raises new errors as the
// banner; adopts a newly opened session's settings (and its session file's
// view and lesson blocks); follows the informative head until the user
// picks one.
void refresh_from_worker(AppState& s);

// Shows what a session file's "view" block (whole_block) or a lesson
// step's view names: the layer and head, the mode, the timeline step,
// the positions to open on. A lesson step moves only what it names
// (its mode always: "attention" when it names none).
void adopt_view(AppState& s, const ViewConfig& v, const PublishedRun& a, bool whole_block);

class AppFrame {
 public:
  // Compiles the views' shaders and makes their textures: the GL context
  // must be current.
  AppFrame();
  // Frees the views' GL objects: before the GL context goes.
  ~AppFrame();
  AppFrame(const AppFrame&) = delete;
  AppFrame& operator=(const AppFrame&) = delete;

  // The menu bar, every panel, the banner and the help overlay.
  void draw(AppState& s);

 private:
  // The main view's contents and its background around its heatmaps.
  void draw_main_view_around_background(AppState& s);

  ViewCaches caches_;
  ImU32 main_view_background_ = 0;  // the style's window background, for the main view to draw
};

}  // namespace kvscope::gui
