// What the window remembers between runs: its size, the recent model
// directories, the last session file, the presenter flag and how the views
// look (view_settings.h: mode, colours, the A - B panel, ...), in
// $XDG_CONFIG_HOME/kvscope/settings.json (else ~/.config/kvscope). ImGui's
// own imgui.ini (panel positions the user moved) lives beside it. A missing
// or corrupt file gives the defaults: settings are a convenience, never a
// reason not to start.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "view_settings.h"

namespace kvscope::gui {

struct AppSettings {
  int window_width = 1600, window_height = 1000;
  std::vector<std::string> recent_models;  // newest first, at most kMaxRecentModels
  std::string last_session;                // the last session file opened or saved
  bool presenter = false;
  ViewSettings view;  // the user's view choices (not the zoom or pan)

  static constexpr int kMaxRecentModels = 8;
  // Moves `model` to the front of recent_models (adds it when new).
  void remember_model(const std::string& model);
};

// The folder holding settings.json and imgui.ini; empty when neither
// XDG_CONFIG_HOME nor HOME is set (then nothing is saved).
std::filesystem::path settings_dir();
std::filesystem::path imgui_ini_path();

// Defaults when the file is missing or unreadable; `warning` (optional)
// says what was wrong with a file that exists but could not be used.
AppSettings load_app_settings(std::string* warning = nullptr);
// Writes through a temporary file; returns false (no throw) on failure.
bool save_app_settings(const AppSettings& s);

}  // namespace kvscope::gui
