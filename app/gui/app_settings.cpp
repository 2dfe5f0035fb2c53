#include "app_settings.h"
#include "io/json_file.h"

#include <cstdlib>
#include <fstream>
#include <system_error>

#include <nlohmann/json.hpp>

namespace kvscope::gui {

namespace fs = std::filesystem;

void AppSettings::remember_model(const std::string& model) {
  std::erase(recent_models, model);
  recent_models.insert(recent_models.begin(), model);
  if (recent_models.size() > kMaxRecentModels) recent_models.resize(kMaxRecentModels);
}

fs::path settings_dir() {
  // XDG base directory rule: an empty or relative XDG_CONFIG_HOME is ignored.
  if (const char* xdg = std::getenv("XDG_CONFIG_HOME"); xdg && *xdg && fs::path(xdg).is_absolute())
    return fs::path(xdg) / "kvscope";
  if (const char* home = std::getenv("HOME"); home && *home) return fs::path(home) / ".config" / "kvscope";
  return {};
}

fs::path imgui_ini_path() {
  const fs::path dir = settings_dir();
  return dir.empty() ? fs::path() : dir / "imgui.ini";
}

AppSettings load_app_settings(std::string* warning) {
  AppSettings s;
  const fs::path dir = settings_dir();
  if (dir.empty()) return s;
  const fs::path file = dir / "settings.json";
  std::ifstream in(file);
  if (!in) return s;  // first start: nothing to read
  // Each field is read on its own so one bad value does not lose the others.
  try {
    const nlohmann::json j = nlohmann::json::parse(in);
    if (!j.is_object()) throw std::runtime_error("not a JSON object");
    auto read_int = [&](const char* key, int& out, int lo, int hi) {
      if (j.contains(key) && j[key].is_number_integer()) {
        const int v = j[key].get<int>();
        if (v >= lo && v <= hi) out = v;
      }
    };
    read_int("window_width", s.window_width, 320, 16384);
    read_int("window_height", s.window_height, 240, 16384);
    if (j.contains("recent_models") && j["recent_models"].is_array()) {
      for (const auto& m : j["recent_models"])
        if (m.is_string() && s.recent_models.size() < AppSettings::kMaxRecentModels)
          s.recent_models.push_back(m.get<std::string>());
    }
    if (j.contains("last_session") && j["last_session"].is_string()) s.last_session = j["last_session"].get<std::string>();
    if (j.contains("presenter") && j["presenter"].is_boolean()) s.presenter = j["presenter"].get<bool>();
    if (j.contains("view")) view_settings_from_json(j["view"], s.view);
  } catch (const std::exception& e) {
    if (warning) *warning = file.string() + ": ignored (" + e.what() + ")";
    return AppSettings{};
  }
  return s;
}

bool save_app_settings(const AppSettings& s) {
  const fs::path dir = settings_dir();
  if (dir.empty()) return false;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return false;
  const nlohmann::json j = {{"window_width", s.window_width},
                            {"window_height", s.window_height},
                            {"recent_models", s.recent_models},
                            {"last_session", s.last_session},
                            {"presenter", s.presenter},
                            {"view", view_settings_to_json(s.view)}};
  const fs::path file = dir / "settings.json", tmp = dir / "settings.json.tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!out) return false;
    out << json_text(j) << "\n";
    if (!out) return false;
  }
  fs::rename(tmp, file, ec);
  return !ec;
}

}  // namespace kvscope::gui
