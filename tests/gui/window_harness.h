// What the window tests share: a private Xvfb for the whole test program,
// running the app to completion, and reading its screenshots and state
// sidecars. The app tells where its panels are (the screenshot's JSON
// sidecar and --state-file), so nothing here guesses coordinates.
#pragma once

#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

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
inline const fs::path kAssets = fs::path(KVSCOPE_GUI_SESSIONS) / ".." / ".." / ".." / "assets";

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

// xdotool on the private display; false when it failed.
inline bool xdo(const std::string& args) {
  return std::system(("DISPLAY=" + shared_display().display() + " xdotool " + args + " > /dev/null 2>&1").c_str()) == 0;
}

// "X Y" of the centre of a rectangle, for xdotool's mousemove.
inline std::string centre_of(const Rect& r) {
  return std::to_string(r.x + r.w / 2) + " " + std::to_string(r.y + r.h / 2);
}

inline double span(const json& pair) { return pair[1].get<double>() - pair[0].get<double>(); }

// The window running on its own (no --exit) with `args` and a state file,
// for tests that drive it with xdotool; stopped (SIGTERM) however the test ends.
class LiveWindow {
 public:
  LiveWindow(const TempDir& tmp, const std::string& args) : state_file_(tmp / "state.json"), log_(tmp / "app.log") {
    const std::string cmd = app_env(tmp) + "exec timeout 120 " + quoted(kApp.string()) + " " + args + " --state-file " +
                            quoted(state_file_.string()) + " > " + quoted(log_.string()) + " 2>&1";
    pid_ = ::fork();
    if (pid_ == 0) {
      ::execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
  }
  ~LiveWindow() {
    if (pid_ <= 0) return;
    int status = 0;
    ::kill(pid_, SIGTERM);
    ::waitpid(pid_, &status, 0);
  }
  LiveWindow(const LiveWindow&) = delete;
  LiveWindow& operator=(const LiveWindow&) = delete;

  bool started() const { return pid_ > 0; }
  // The state once `pred` holds (or the last one after 20 s).
  template <class Pred>
  json wait(Pred pred) const {
    return wait_for_state(state_file_, pred);
  }
  std::string log() const { return kvscope::test::read_file(log_); }

 private:
  fs::path state_file_, log_;
  pid_t pid_ = -1;
};

// The bundled model with room for 2,100 positions (its RoPE has no limit of
// its own; the config's is a check), so runs longer than its 512 fit.
inline fs::path long_context_model(const TempDir& tmp) {
  const fs::path src = kAssets / "models" / "kvscope-tiny", dst = tmp / "tiny-long";
  fs::create_directories(dst);
  for (const auto& e : fs::directory_iterator(src))
    if (e.path().filename() != "config.json") fs::create_symlink(fs::absolute(e.path()), dst / e.path().filename());
  json cfg = load_json(src / "config.json");
  cfg["max_position_embeddings"] = 2100;
  kvscope::test::write_file(dst / "config.json", cfg.dump(2));
  return dst;
}

// `n` token ids of the bundled model's vocabulary, the same every run.
inline std::vector<int> pseudo_random_ids(int n) {
  std::vector<int> ids;
  uint32_t state = 12345;
  for (int i = 0; i < n; ++i) {
    state = state * 1664525u + 1013904223u;
    ids.push_back(10 + static_cast<int>((state >> 8) % 2000));
  }
  return ids;
}

}  // namespace kvscope::test::window
