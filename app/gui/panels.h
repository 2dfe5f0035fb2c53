// The window's panels: one small function each, all state in AppState (the
// imgui_demo way). The views (heatmap, grid, score curves, token strip) are
// in views/; these are the controls around them.
#pragma once

#include <string>
#include <vector>

#include "app_state.h"
#include "error_words.h"
#include "imgui.h"
#include "io/host_memory.h"  // format_bytes

namespace kvscope::gui {

// ---- the panel windows and where they go (panels_layout.cpp) ----
enum class PanelSlot { Controls, Transport, MainView, Grid, Lesson, TokenStrip, ScoreCurves, Metrics, StatusBar };
// Whether presenter mode draws the panel: the lesson, the transport, the
// main view and the status bar.
bool presenter_panel(PanelSlot slot);
// Begins the ImGui window of a panel at its default place (first use, or
// every frame while s.shell.reset_layout) and records its rectangle as
// "panel.<id>". Always pair with ImGui::End().
bool begin_panel(AppState& s, const char* title, const char* id, PanelSlot slot, int extra_flags = 0);
// Records the last item's rectangle as `name` (a widget tests click).
void record_item_rect(AppState& s, const std::string& name);
// Records a rectangle in screen coordinates as `name` (one not an item).
void record_rect(AppState& s, const std::string& name, ImVec2 pos, ImVec2 size);
// Hover help for the last item: "what it does" and where it comes from.
void help_tooltip(const char* text);

// Text that reports a problem (a setting that does not work, a run that will not fit).
inline const ImVec4 kProblemColour{1.0f, 0.45f, 0.4f, 1.0f};

// ---- controls (left column) ----
void draw_model_panel(AppState& s);      // model directory, recent, summary, device
void draw_session_file_panel(AppState& s);  // open a session file
void draw_prompt_panel(AppState& s);     // prompt, continuation, max new tokens, sampling
void draw_policy_panel(AppState& s);     // policy of A + sharing + Apply
void draw_fork_panel(AppState& s);       // policy of B, Fork / Drop fork
void draw_export_panel(AppState& s);     // export directory, Export all, Save session
void draw_export_window(AppState& s);    // File > Export... / Ctrl+E: the export panel in its own window
// The policy parameter editor, for A and for B; returns true when changed.
bool edit_policy_params(AppState& s, const char* id, PolicyParams& p, bool expert);
// One line: "" when `p` is usable for A's prompt, else the engine's message
// in the window's words.
std::string policy_problem(const AppState& s, const PolicyParams& p);

// ---- the rest ----
void draw_transport_panel(AppState& s);  // step, run N, play, reset, cancel, timeline, fork
void draw_metrics_panel(AppState& s);    // KV bytes and quality over the steps, A and B
void draw_lesson_panel(AppState& s);     // caption and "look at" of the open lesson
void draw_status_bar(AppState& s);
void draw_main_menu(AppState& s);        // File, View, Lessons, Help
void draw_error_banner(AppState& s);     // the worker's last error, red, until dismissed
// After ImGui::Render(): which window is drawn on top at the banner's
// centre (shell.window_over_error; "" when no banner shows).
void note_window_over_error(AppState& s);
void draw_help_overlay(AppState& s);     // F1: every key
void handle_keyboard(AppState& s);       // Space, arrows, R, F, , . [ ] F1

// ---- actions shared by buttons, keys and menus (panels_actions.cpp) ----
void action_step(AppState& s);           // from the scrubbed row when scrubbed
void action_step_back(AppState& s);      // the timeline one row back
void action_toggle_play(AppState& s);
void action_reset(AppState& s);
void action_fork(AppState& s);
void action_open_model(AppState& s, const std::string& model);  // editing settings with this model
void action_open_session_file(AppState& s, const std::string& path, int steps = -1);
void action_open_lesson(AppState& s, const LessonEntry& lesson);
// The open lesson's step (0-based; -1 the introduction): its caption, and
// the view it names (panels_lesson.cpp).
void action_lesson_step(AppState& s, int step);
void action_select_layer(AppState& s, int delta);
void action_select_head(AppState& s, int delta);
// The engine's settings of the panels for a new session A.
SessionConfig config_from_panels(const AppState& s);

// Lessons in assets/lessons, sorted by file name.
std::vector<LessonEntry> find_lessons();

}  // namespace kvscope::gui
