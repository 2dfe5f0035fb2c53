// The window's settings file: what it remembers comes back, and a missing,
// corrupt or half-wrong file gives defaults instead of stopping the app.
#include <gtest/gtest.h>

#include <cstdlib>

#include "app_settings.h"
#include "test_util.h"

namespace {

using kvscope::gui::AppSettings;
using kvscope::test::TempDir;

// Points XDG_CONFIG_HOME at a test folder for the test's duration.
class ConfigHome {
 public:
  explicit ConfigHome(const std::filesystem::path& dir) {
    if (const char* old = std::getenv("XDG_CONFIG_HOME")) old_ = old;
    ::setenv("XDG_CONFIG_HOME", dir.c_str(), 1);
  }
  ~ConfigHome() {
    if (old_.empty()) ::unsetenv("XDG_CONFIG_HOME");
    else ::setenv("XDG_CONFIG_HOME", old_.c_str(), 1);
  }

 private:
  std::string old_;
};

TEST(AppSettings, SavedSettingsComeBack) {
  TempDir tmp;
  ConfigHome home(tmp.path());
  AppSettings s;
  s.window_width = 1280;
  s.window_height = 720;
  s.remember_model("/models/a");
  s.remember_model("/models/b");
  s.remember_model("/models/a");  // moves to the front, no duplicate
  s.last_session = "/tmp/x.json";
  s.presenter = true;
  ASSERT_TRUE(kvscope::gui::save_app_settings(s));
  EXPECT_EQ(kvscope::gui::settings_dir(), tmp.path() / "kvscope");
  EXPECT_EQ(kvscope::gui::imgui_ini_path(), tmp.path() / "kvscope" / "imgui.ini");

  const AppSettings back = kvscope::gui::load_app_settings();
  EXPECT_EQ(back.window_width, 1280);
  EXPECT_EQ(back.window_height, 720);
  EXPECT_EQ(back.recent_models, (std::vector<std::string>{"/models/a", "/models/b"}));
  EXPECT_EQ(back.last_session, "/tmp/x.json");
  EXPECT_TRUE(back.presenter);
}

// The view choices (view_settings.h) are saved with the rest: the A - B
// panel's choice among them, which once lived in a static of the main view
// and was lost at every start. The zoom and pan belong to one session's
// size and are not saved.
TEST(AppSettings, ViewChoicesComeBack) {
  TempDir tmp;
  ConfigHome home(tmp.path());
  using namespace kvscope::gui;
  AppSettings s;
  s.view.fork_difference = ForkDifference::Masks;
  s.view.mode = ViewMode::DiffFork;
  s.view.evicted = EvictedMark::Strip;
  s.view.scale = ColorScaleKind::Log;
  s.view.colormap = "magma";
  s.view.auto_range = false;
  s.view.range_lo = 0.125f;
  s.view.range_hi = 0.5f;
  s.view.shared_range = true;
  s.view.follow_latest = false;
  s.view.zoom = 0.25;
  s.view.view_x0 = 12;
  ASSERT_TRUE(save_app_settings(s));

  const AppSettings back = load_app_settings();
  EXPECT_EQ(back.view.fork_difference, ForkDifference::Masks);
  EXPECT_EQ(back.view.mode, ViewMode::DiffFork);
  EXPECT_EQ(back.view.evicted, EvictedMark::Strip);
  EXPECT_EQ(back.view.scale, ColorScaleKind::Log);
  EXPECT_EQ(back.view.colormap, "magma");
  EXPECT_FALSE(back.view.auto_range);
  EXPECT_EQ(back.view.range_lo, 0.125f);
  EXPECT_EQ(back.view.range_hi, 0.5f);
  EXPECT_TRUE(back.view.shared_range);
  EXPECT_FALSE(back.view.follow_latest);
  EXPECT_EQ(back.view.zoom, 0);  // fit, as at every start
  EXPECT_EQ(back.view.view_x0, 0);

  // The default choice comes back too (not only a changed one).
  s.view.fork_difference = ForkDifference::Attention;
  ASSERT_TRUE(save_app_settings(s));
  EXPECT_EQ(load_app_settings().view.fork_difference, ForkDifference::Attention);
}

TEST(AppSettings, WrongViewValuesAreIgnoredOneByOne) {
  TempDir tmp;
  ConfigHome home(tmp.path());
  std::filesystem::create_directories(tmp.path() / "kvscope");
  kvscope::test::write_file(tmp.path() / "kvscope" / "settings.json",
                            R"({"view": {"fork_difference": "masks", "mode": "no such mode", "colormap": "jet",
                                         "range": [2, 1], "scale": "log", "shared_range": 1}})");
  using namespace kvscope::gui;
  const AppSettings s = load_app_settings();
  const ViewSettings defaults;
  EXPECT_EQ(s.view.fork_difference, ForkDifference::Masks);
  EXPECT_EQ(s.view.scale, ColorScaleKind::Log);
  EXPECT_EQ(s.view.mode, defaults.mode);
  EXPECT_EQ(s.view.colormap, defaults.colormap);
  EXPECT_EQ(s.view.range_lo, defaults.range_lo);
  EXPECT_EQ(s.view.range_hi, defaults.range_hi);
  EXPECT_EQ(s.view.shared_range, defaults.shared_range);
}

TEST(AppSettings, MissingFileGivesDefaults) {
  TempDir tmp;
  ConfigHome home(tmp.path());
  std::string warning;
  const AppSettings s = kvscope::gui::load_app_settings(&warning);
  EXPECT_EQ(s.window_width, 1600);
  EXPECT_EQ(s.window_height, 1000);
  EXPECT_TRUE(s.recent_models.empty());
  EXPECT_TRUE(warning.empty());
}

TEST(AppSettings, CorruptFileGivesDefaultsAndSaysSo) {
  TempDir tmp;
  ConfigHome home(tmp.path());
  std::filesystem::create_directories(tmp.path() / "kvscope");
  kvscope::test::write_file(tmp.path() / "kvscope" / "settings.json", "{\"window_width\": 12");
  std::string warning;
  const AppSettings s = kvscope::gui::load_app_settings(&warning);
  EXPECT_EQ(s.window_width, 1600);
  EXPECT_NE(warning.find("settings.json"), std::string::npos) << warning;
}

TEST(AppSettings, WrongValuesAreIgnoredOneByOne) {
  TempDir tmp;
  ConfigHome home(tmp.path());
  std::filesystem::create_directories(tmp.path() / "kvscope");
  kvscope::test::write_file(tmp.path() / "kvscope" / "settings.json",
                            R"({"window_width": -5, "window_height": 900, "recent_models": ["/m", 3], "presenter": "yes"})");
  const AppSettings s = kvscope::gui::load_app_settings();
  EXPECT_EQ(s.window_width, 1600);  // out of range: the default
  EXPECT_EQ(s.window_height, 900);
  EXPECT_EQ(s.recent_models, std::vector<std::string>{"/m"});
  EXPECT_FALSE(s.presenter);
}

}  // namespace
