// The window shell's own state (main.cpp, the panels, the command line
// script): what AppState needs beyond the engine's selection and view
// settings. Plain data; AppState holds one of these as `shell`.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "views/background_fill.h"

namespace kvscope::gui {

// A rectangle on the screen in framebuffer pixels (what a screenshot shows).
struct ScreenRect {
  float x = 0, y = 0, w = 0, h = 0;
};

// A lesson file found in assets/lessons (its title read once at start).
struct LessonEntry {
  std::string name;   // file stem: "passkey_window"
  std::string title;  // the file's lesson.title, else the stem
  std::string path;
};

struct ShellState {
  // Panels and a few widgets ("panel.main_view", "button.step"), this
  // frame, for the screenshot's sidecar and the state file (tests click them).
  std::map<std::string, ScreenRect> rects;
  // This frame's opaque heatmap images in the main view (ImGui's display
  // coordinates, as clipped): its background is drawn around them.
  std::vector<Box> opaque_cells;

  // Panel edits that are not engine settings.
  std::string model_path;      // the model field ("" = the bundled model)
  std::string session_path;    // the session file field
  int run_n = 16;              // "Run N"
  // The transport's line of buttons at its default sizes, as the last frame
  // drew it (pixels): wider than the panel, and the next frame draws the
  // compact sizes (panels_transport.cpp).
  float transport_line_width = 0;
  int curve_add_position = 0;  // the score curves' "add token" field
  bool fork_editor_open = false;
  std::string apply_feedback;  // what the last Apply did, shown under the button
  bool apply_replays = false;  // whether it was a replay (the feedback's verb)
  // The edits that Apply applied (policy and sharing as a session file
  // writes them): the feedback is shown only while they are still the
  // controls' settings, not beside "Not applied yet" for newer ones.
  std::string applied_edits;
  float font_px = 0;           // the text size the last frame drew with
  bool grid_filling = false;   // the grid's thumbnails are still downsampling the history
  std::pair<double, double> columns_shown{0, 0};  // the main view's first and last column on screen
  std::pair<double, double> rows_shown{0, 0};     // and its first and last row
  int columns_total = 0;                          // the positions the main view has (what the fit shows)
  std::pair<float, float> label_min_px{0, 0};     // the smallest column and row that carry a label
  bool unapplied_edits = false;  // the policy panel's settings differ from the run's ("Not applied yet")
  std::string last_applied_label;
  // The export panel: the head one export is of (-1: the main view's), the
  // figure formats, and where Save session writes.
  int export_layer = -1, export_head = -1;
  bool export_png = true, export_svg = true, export_pdf = false;
  std::string save_path;

  // The prompt panel's memory line for the edited settings, kept until one
  // of them changes (`key`: the settings as JSON).
  struct MemoryNote {
    std::string key, line, detail;
    bool fits = true;
  };
  MemoryNote memory_note;

  // Errors and messages from the worker, shown until dismissed.
  uint64_t error_serial_seen = 0;
  std::string error_banner;
  // The window drawn on top at the banner's centre in the last frame
  // ("##error": the banner itself, as it must be), for the state file.
  std::string window_over_error;
  uint64_t message_serial_seen = 0;
  std::string message_line;

  // An open/open_file is under way: when A's generation moves past this,
  // the session's view block, lesson and settings are taken over.
  std::optional<uint64_t> adopt_after_generation;
  bool adopt_view_block = false;

  // GLFW key codes pressed (or repeated) since the last frame. ImGui 1.86
  // only sees whether a key is down at frame time, so a press and release
  // inside one frame (xdotool, a quick tap while the engine keeps frames
  // busy) would be lost; main.cpp's key callback queues them here.
  struct KeyPress {
    int key = 0, mods = 0;  // GLFW_KEY_*, GLFW_MOD_* as reported with the press
  };
  std::vector<KeyPress> pressed_keys;

  std::vector<LessonEntry> lessons;
  bool reset_layout = false;     // one frame of the default panel places
  bool want_quit = false;
  float base_scale = 1.0f;       // HiDPI content scale (ui_scale / presenter factor)
  double frame_ms_smooth = 0;    // drawn frames' time, smoothed
  // What the status bar shows: follows frame_ms_smooth only when it moves
  // by more than a fifth, so that showing it does not itself change every
  // frame (an unchanged frame is not redrawn, frame_skip.h).
  double frame_ms_shown = 0;
  bool partial_present = false;  // frames reach the window as changed rectangles (frame_present.h)
};

}  // namespace kvscope::gui
