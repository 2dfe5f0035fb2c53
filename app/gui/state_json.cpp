#include "state_json.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "session/session_config.h"

namespace kvscope::gui {

nlohmann::json state_json(const AppState& s, int fb_w, int fb_h) {
  nlohmann::json j;
  j["format"] = "kvscope-window-state";
  j["rows"] = s.a ? s.a->rows : 0;
  j["shown_row"] = s.shown_row();
  j["timeline_row"] = s.timeline_row;
  j["layer"] = s.layer;
  j["head"] = s.head;
  j["mode"] = view_mode_key(s.view.mode);
  j["view"] = view_settings_to_json(s.view);  // what app_settings.cpp saves
  j["policy"] = s.a ? s.a->policy_label : "";
  j["policy_kind"] = s.a ? policy_name(s.a->config.policy.kind) : "";
  j["sharing"] = s.a ? s.a->config.sharing.str() : "";
  j["policy_changes"] = s.a ? s.a->config.policy_changes.size() : 0;
  j["unapplied"] = s.shell.unapplied_edits;  // the policy panel says "Not applied yet"
  j["generation"] = s.a ? s.a->generation : 0;
  j["fork"] = s.b != nullptr;
  j["fork_rows"] = s.b ? s.b->rows : 0;
  j["fork_policy"] = s.b ? s.b->policy_label : "";
  j["playing"] = s.status.playing;
  j["busy"] = s.status.busy;
  j["error"] = s.shell.error_banner;
  // The prompt panel's plan for the edited settings (panels_prompt.cpp).
  j["memory"] = {{"line", s.shell.memory_note.line}, {"fits", s.shell.memory_note.fits}};
  j["window_over_error"] = s.shell.window_over_error;  // "##error" when the banner is on top
  j["presenter"] = s.presenter;
  j["partial_present"] = s.shell.partial_present;
  j["font_px"] = s.shell.font_px;
  // The main view's columns on screen (the camera's), for tests of zoom.
  j["columns_shown"] = {s.shell.columns_shown.first, s.shell.columns_shown.second};
  j["rows_shown"] = {s.shell.rows_shown.first, s.shell.rows_shown.second};
  j["columns_total"] = s.shell.columns_total;
  // The smallest column and row (pixels) that carry their labels.
  j["label_min_px"] = {s.shell.label_min_px.first, s.shell.label_min_px.second};
  j["help"] = s.show_help;
  j["export_window"] = s.show_export;
  j["export_dir"] = s.export_dir;
  j["model_field"] = s.shell.model_path;
  j["grid_filling"] = s.shell.grid_filling;
  j["lesson"] = s.lesson ? s.lesson->title : "";
  j["lesson_step"] = s.lesson_step;
  j["window"] = {{"width", fb_w}, {"height", fb_h}};
  nlohmann::json rects = nlohmann::json::object();
  for (const auto& [name, r] : s.shell.rects)
    rects[name] = {std::lround(r.x), std::lround(r.y), std::lround(r.w), std::lround(r.h)};
  j["rects"] = rects;
  return j;
}

bool may_replace_state_file(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return true;
  if (!std::filesystem::is_regular_file(path, ec)) return false;
  std::ifstream in(path);
  const nlohmann::json j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return false;
  if (j.contains("format")) return j["format"] == "kvscope-window-state";
  return j.contains("rects") && j.contains("window");
}

bool write_text_atomically(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!out) return false;
    out << text;
    if (!out) return false;
  }
  return std::rename(tmp.c_str(), path.c_str()) == 0;
}

}  // namespace kvscope::gui
