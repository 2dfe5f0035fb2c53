// What the window tests share: a private Xvfb for the whole test program,
// running the app to completion, and reading its screenshots and state
// sidecars. The app tells where its panels are (the screenshot's JSON
// sidecar and --state-file), so nothing here guesses coordinates.
#pragma once

#include <gtest/gtest.h>

#include <sys/wait.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>
#include <stb_image.h>

#include "test_util.h"
#include "xvfb_display.h"

namespace kvscope::test::window {

namespace fs = std::filesystem;
using kvscope::test::TempDir;
using nlohmann::json;

inline const fs::path kApp = KVSCOPE_APP_PATH;
inline const fs::path kCli = KVSCOPE_CLI_PATH;
inline const fs::path kSessions = KVSCOPE_GUI_SESSIONS;

// One Xvfb for the whole program (started on first use, stopped at exit).
inline kvscope::test::XvfbDisplay& shared_display() {
  static kvscope::test::XvfbDisplay display;
  return display;
}

// Whether a private display could be started; when not, `skip` says
// whether the test may skip (KVSCOPE_ALLOW_NO_XVFB=1 and no Xvfb at all)
// instead of failing.
inline bool display_ready(std::string* why, bool* skip) {
  const auto& d = shared_display();
  if (!d.display().empty()) return true;
  *why = d.error();
  const char* allow = std::getenv("KVSCOPE_ALLOW_NO_XVFB");
  *skip = allow && std::string(allow) == "1" && kvscope::test::find_on_path("Xvfb").empty();
  return false;
}

#define REQUIRE_DISPLAY()                \
  do {                                   \
    std::string why_;                    \
    bool skip_ = false;                  \
    if (!display_ready(&why_, &skip_)) { \
      if (skip_) GTEST_SKIP() << why_;   \
      FAIL() << why_;                    \
    }                                    \
  } while (0)

inline std::string quoted(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// The environment of every app run: the private display, software GL, and
// a settings folder of the test's own (no imgui.ini of the user's).
inline std::string app_env(const TempDir& tmp) {
  return "DISPLAY=" + shared_display().display() +
         " LIBGL_ALWAYS_SOFTWARE=1 XDG_CONFIG_HOME=" + quoted((tmp / "config").string()) + " ";
}

// Runs the window to completion (it must --exit); returns its exit code.
inline int run_app(const TempDir& tmp, const std::string& args, std::string* output = nullptr) {
  const fs::path log = tmp / "app.log";
  const std::string cmd =
      app_env(tmp) + "timeout 60 " + quoted(kApp.string()) + " " + args + " > " + quoted(log.string()) + " 2>&1";
  const int rc = std::system(cmd.c_str());
  if (output) *output = kvscope::test::read_file(log);
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

struct Image {
  int w = 0, h = 0;
  std::vector<unsigned char> rgb;
  unsigned pixel(int x, int y) const {
    const unsigned char* p = &rgb[(static_cast<size_t>(y) * w + x) * 3];
    return (p[0] << 16) | (p[1] << 8) | p[2];
  }
};

inline Image load_png(const fs::path& p) {
  Image img;
  int channels = 0;
  unsigned char* data = stbi_load(p.c_str(), &img.w, &img.h, &channels, 3);
  if (!data) return img;
  img.rgb.assign(data, data + static_cast<size_t>(img.w) * img.h * 3);
  stbi_image_free(data);
  return img;
}

inline json load_json(const fs::path& p) {
  std::ifstream in(p);
  return json::parse(in);
}

struct Rect {
  int x = 0, y = 0, w = 0, h = 0;
};
inline Rect rect_of(const json& state, const std::string& name) {
  const auto& r = state.at("rects").at(name);
  return {r[0].get<int>(), r[1].get<int>(), r[2].get<int>(), r[3].get<int>()};
}

// Polls the state file until `pred` holds (or 20 s pass); returns the last state.
template <class Pred>
inline json wait_for_state(const fs::path& file, Pred pred) {
  json last;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < deadline) {
    try {
      if (fs::exists(file)) {
        last = load_json(file);
        if (pred(last)) return last;
      }
    } catch (const std::exception&) {
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return last;
}

}  // namespace kvscope::test::window
