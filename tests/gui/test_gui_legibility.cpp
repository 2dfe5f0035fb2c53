// The window in front of a room: presenter mode gives the heatmap the
// screen at projector sizes with fonts a room can read; a long run marks
// its evicted cells with no periodic pattern (no moire) at 1280x720; the
// wheel zooms one axis over its labels; a lesson's steps move the view.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <complex>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "test_util.h"
#include "window_harness.h"

using namespace kvscope::test::window;

namespace {

const fs::path kAssets = fs::path(KVSCOPE_GUI_SESSIONS) / ".." / ".." / ".." / "assets";

// A screenshot of the app run with `args` at `size`: the image and its sidecar.
struct Capture {
  Image image;
  json state;
};
Capture capture(const TempDir& tmp, const std::string& name, const std::string& args, const std::string& size) {
  const fs::path png = tmp / (name + ".png");
  std::string out;
  const int rc = run_app(tmp, args + " --size " + size + " --screenshot " + quoted(png.string()) + " --exit", &out);
  EXPECT_EQ(rc, 0) << name << ": " << out;
  Capture c;
  c.image = load_png(png);
  const fs::path sidecar = tmp / (name + ".json");
  if (fs::exists(sidecar)) c.state = load_json(sidecar);
  return c;
}

double area(const Rect& r) { return static_cast<double>(r.w) * r.h; }

TEST(GuiLegibility, PresenterModeGivesTheRoomTheHeatmap) {
  REQUIRE_DISPLAY();
  for (const auto& [size, w, h] : {std::tuple{"1280x720", 1280, 720}, std::tuple{"1920x1080", 1920, 1080}}) {
    SCOPED_TRACE(size);
    TempDir tmp;
    const Capture c = capture(
        tmp, "presenter", "--session " + quoted((kSessions / "h2o.json").string()) + " --steps 8 --presenter", size);
    ASSERT_FALSE(c.state.is_null());
    ASSERT_EQ(c.image.w, w);
    EXPECT_TRUE(c.state["presenter"].get<bool>());
    // Text a room can read.
    EXPECT_GE(c.state["font_px"].get<double>(), 20.0);
    // The heatmap's cells take a large share of the screen ...
    const Rect cells = rect_of(c.state, "cells.A");
    EXPECT_GE(area(cells) / (double(w) * h), 0.35) << "cells " << cells.w << "x" << cells.h;
    // ... and the kept panels are whole: the transport (Step, Play) is on
    // screen, the expert panels are not drawn.
    const Rect transport = rect_of(c.state, "panel.transport");
    EXPECT_GE(transport.x, 0);
    EXPECT_LE(transport.x + transport.w, w);
    for (const char* button : {"button.step", "button.play", "slider.timeline"}) {
      ASSERT_TRUE(c.state["rects"].contains(button)) << button;
      const Rect b = rect_of(c.state, button);
      EXPECT_GE(b.y, transport.y) << button;
      EXPECT_LE(b.y + b.h, transport.y + transport.h) << button << " clipped by the transport bar";
    }
    EXPECT_TRUE(c.state["rects"].contains("panel.lesson"));
    for (const char* hidden :
         {"panel.controls", "panel.grid", "panel.token_strip", "panel.score_curves", "panel.metrics"})
      EXPECT_FALSE(c.state["rects"].contains(hidden)) << hidden;
  }
}

// The bundled model with room for 2,100 positions (its RoPE has no limit of
// its own; the config's is a check), so a 2,048-position run fits.
fs::path long_context_model(const TempDir& tmp) {
  const fs::path src = kAssets / "models" / "kvscope-tiny", dst = tmp / "tiny-long";
  fs::create_directories(dst);
  for (const auto& e : fs::directory_iterator(src))
    if (e.path().filename() != "config.json") fs::create_symlink(fs::absolute(e.path()), dst / e.path().filename());
  json cfg = load_json(src / "config.json");
  cfg["max_position_embeddings"] = 2100;
  kvscope::test::write_file(dst / "config.json", cfg.dump(2));
  return dst;
}

// The power spectrum along each pixel row of the rectangle (luminance,
// mean removed, the first N = 2^k pixels), averaged over the rows.
std::vector<double> row_spectrum(const Image& img, Rect r, int& n) {
  n = 1;
  while (n * 2 <= r.w) n *= 2;
  std::vector<double> power(n / 2 + 1, 0.0);
  std::vector<std::complex<double>> x(n);
  for (int y = r.y; y < r.y + r.h; ++y) {
    double mean = 0;
    for (int i = 0; i < n; ++i) {
      const unsigned p = img.pixel(r.x + i, y);
      x[i] = 0.299 * (p >> 16) + 0.587 * ((p >> 8) & 255) + 0.114 * (p & 255);
      mean += x[i].real() / n;
    }
    for (auto& v : x) v -= mean;
    // Iterative radix-2 FFT.
    for (int i = 1, j = 0; i < n; ++i) {
      int bit = n >> 1;
      for (; j & bit; bit >>= 1) j ^= bit;
      j ^= bit;
      if (i < j) std::swap(x[i], x[j]);
    }
    for (int len = 2; len <= n; len <<= 1) {
      const std::complex<double> w = std::polar(1.0, -2 * M_PI / len);
      for (int i = 0; i < n; i += len) {
        std::complex<double> wk = 1;
        for (int k = 0; k < len / 2; ++k, wk *= w) {
          const auto a = x[i + k], b = x[i + k + len / 2] * wk;
          x[i + k] = a + b;
          x[i + k + len / 2] = a - b;
        }
      }
    }
    for (int k = 0; k <= n / 2; ++k) power[k] += std::norm(x[k]) / r.h;
  }
  return power;
}

// A 2,048-position run (2,000 prompt tokens, 48 new) at 1280x720: cells
// are about a third of a pixel wide. Evicted cells must read as such
// (their pixels differ from the unmarked picture, kept ones do not) and
// the marking must add no periodic texture: along the rows, no frequency
// with a period of 2-16 pixels may stand out of the spectrum (a hatch every
// sixth pixel did, by a factor of hundreds).
TEST(GuiLegibility, LongRunMarksEvictionsWithoutMoire) {
  REQUIRE_DISPLAY();
  TempDir tmp;
  std::vector<int> ids;
  uint32_t state = 12345;
  for (int i = 0; i < 2000; ++i) {
    state = state * 1664525u + 1013904223u;
    ids.push_back(10 + static_cast<int>((state >> 8) % 2000));
  }
  const fs::path session = tmp / "long.json";
  kvscope::test::write_file(session, json{{"format", "kvscope-session"},
                                          {"version", 1},
                                          {"model", long_context_model(tmp).string()},
                                          {"prompt_ids", ids},
                                          {"max_new_tokens", 48},
                                          {"stop_at_eos", false},
                                          {"policy", {{"name", "h2o"}, {"budget", "25%"}}},
                                          {"view", {{"layer", 1}, {"head", 0}, {"mode", "attention"}}}}
                                         .dump());
  const Capture marked = capture(tmp, "marked", "--session " + quoted(session.string()), "1280x720");
  // The same run with evicted cells not marked (the session's view block).
  json unmarked = load_json(session);
  unmarked["view"]["evicted"] = "none";
  kvscope::test::write_file(tmp / "plain_session.json", unmarked.dump());
  const Capture plain = capture(tmp, "plain", "--session " + quoted((tmp / "plain_session.json").string()), "1280x720");
  ASSERT_FALSE(marked.state.is_null());
  ASSERT_FALSE(plain.state.is_null());
  ASSERT_EQ(marked.state["rows"], 49);
  ASSERT_EQ(marked.state["view"]["evicted"], "outline");
  ASSERT_EQ(plain.state["view"]["evicted"], "none");
  const Rect cells = rect_of(marked.state, "cells.A");
  const Rect plain_cells = rect_of(plain.state, "cells.A");
  ASSERT_EQ(cells.x, plain_cells.x);
  ASSERT_EQ(cells.w, plain_cells.w);
  ASSERT_GT(cells.w, 256);
  const double cols_per_px =
      (marked.state["columns_shown"][1].get<double>() - marked.state["columns_shown"][0].get<double>()) / cells.w;
  EXPECT_GT(cols_per_px, 2.0) << "the run should be zoomed out: cells narrower than a pixel";

  // Marked and unmarked differ on the evicted cells and agree on the kept.
  size_t differ = 0, total = 0;
  for (int y = cells.y; y < cells.y + cells.h; ++y)
    for (int x = cells.x; x < cells.x + cells.w; ++x) {
      ++total;
      differ += marked.image.pixel(x, y) != plain.image.pixel(x, y);
    }
  const double differ_share = double(differ) / total;
  EXPECT_GT(differ_share, 0.15) << "evicted cells look like kept ones";
  EXPECT_LT(differ_share, 0.95) << "kept cells are marked too";

  int n = 0;
  const std::vector<double> power = row_spectrum(marked.image, cells, n);
  std::vector<double> band(power.begin() + n / 16, power.begin() + n / 2);
  std::vector<double> sorted = band;
  std::nth_element(sorted.begin(), sorted.begin() + sorted.size() / 2, sorted.end());
  const double median = sorted[sorted.size() / 2];
  const auto peak = std::max_element(band.begin(), band.end());
  const double period = double(n) / (n / 16 + (peak - band.begin()));
  RecordProperty("peak_over_median", std::to_string(*peak / median));
  EXPECT_LT(*peak / median, 12.0) << "a periodic pattern with a period of " << period << " pixels";
}

TEST(GuiLegibility, LessonStepsMoveTheView) {
  REQUIRE_DISPLAY();
  TempDir tmp;
  const Capture first = capture(tmp, "step1", "--lesson 3_h2o_vs_tova --lesson-step 1", "1600x1000");
  ASSERT_FALSE(first.state.is_null());
  EXPECT_EQ(first.state["lesson_step"], 0);
  EXPECT_EQ(first.state["mode"], "diff_fork");
  EXPECT_EQ(first.state["view"]["fork_difference"], "masks");
  // The step names positions 0-40: those columns fill the panel.
  EXPECT_NEAR(first.state["columns_shown"][0].get<double>(), 0.0, 0.5);
  EXPECT_NEAR(first.state["columns_shown"][1].get<double>(), 41.0, 1.0);
  const Capture third = capture(tmp, "step3", "--lesson 3_h2o_vs_tova --lesson-step 3", "1600x1000");
  EXPECT_EQ(third.state["lesson_step"], 2);
  EXPECT_EQ(third.state["mode"], "mask");
  // A step the lesson does not have is refused, naming the flag.
  std::string out;
  EXPECT_EQ(run_app(tmp, "--lesson 3_h2o_vs_tova --lesson-step 9 --exit", &out), 2) << out;
  EXPECT_NE(out.find("--lesson-step"), std::string::npos) << out;
}

bool xdo(const std::string& args) {
  return std::system(("DISPLAY=" + shared_display().display() + " xdotool " + args + " > /dev/null 2>&1").c_str()) == 0;
}

double span(const json& pair) { return pair[1].get<double>() - pair[0].get<double>(); }

// The Gemma 3 lesson's shape: few rows over many positions. The wheel over
// the position labels zooms across only (it did nothing when rows were at
// their largest), over the step labels down only; Home fits again.
TEST(GuiLegibility, WheelZoomsTheAxisUnderThePointer) {
  REQUIRE_DISPLAY();
  ASSERT_FALSE(kvscope::test::find_on_path("xdotool").empty()) << "install xdotool";
  TempDir tmp;
  const fs::path session = tmp / "wide.json";
  kvscope::test::write_file(session, json{{"format", "kvscope-session"},
                                          {"version", 1},
                                          {"prompt_file", (kAssets / "prompts" / "passkey.txt").string()},
                                          {"max_new_tokens", 4},
                                          {"policy", {{"name", "tova"}, {"budget", "50%"}}}}
                                         .dump());
  const fs::path state_file = tmp / "state.json";
  const std::string cmd = app_env(tmp) + "exec timeout 60 " + quoted(kApp.string()) + " --session " +
                          quoted(session.string()) + " --size 1600x1000 --state-file " + quoted(state_file.string()) +
                          " > " + quoted((tmp / "app.log").string()) + " 2>&1";
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  struct Reaper {
    pid_t pid;
    ~Reaper() {
      int status = 0;
      ::kill(pid, SIGTERM);
      ::waitpid(pid, &status, 0);
    }
  } reaper{pid};
  auto ready = [](const json& s) {
    return s.value("rows", 0) == 5 && !s.value("busy", true) && s["rects"].contains("cells.A");
  };
  json s = wait_for_state(state_file, ready);
  ASSERT_TRUE(ready(s)) << s.dump() << kvscope::test::read_file(tmp / "app.log");
  const double cols0 = span(s["columns_shown"]), rows0 = span(s["rows_shown"]);
  const Rect cells = rect_of(s, "cells.A");

  // Over the position labels (just above the cells): across only.
  const std::string over_cols = std::to_string(cells.x + cells.w / 2) + " " + std::to_string(cells.y - 6);
  ASSERT_TRUE(xdo("mousemove " + over_cols + " sleep 0.2 click 4 sleep 0.1 click 4 sleep 0.1 click 4"));
  s = wait_for_state(state_file, [&](const json& j) { return span(j["columns_shown"]) < cols0 * 0.8; });
  EXPECT_LT(span(s["columns_shown"]), cols0 * 0.8) << "the wheel over the position labels did not zoom across";
  EXPECT_NEAR(span(s["rows_shown"]), rows0, 1e-6) << "zooming across changed the rows";

  // Home: the fit again.
  ASSERT_TRUE(xdo("key Home"));
  s = wait_for_state(state_file, [&](const json& j) { return std::abs(span(j["columns_shown"]) - cols0) < 1e-6; });
  EXPECT_NEAR(span(s["columns_shown"]), cols0, 1e-6) << "Home did not fit the view";

  // Over the cells: both axes while they can; the rows of a 5-step run are
  // already as tall as they get, and the columns still zoom.
  const std::string over_cells = std::to_string(cells.x + cells.w / 2) + " " + std::to_string(cells.y + cells.h / 2);
  ASSERT_TRUE(xdo("mousemove " + over_cells + " sleep 0.2 click 4 sleep 0.1 click 4 sleep 0.1 click 4"));
  s = wait_for_state(state_file, [&](const json& j) { return span(j["columns_shown"]) < cols0 * 0.8; });
  EXPECT_LT(span(s["columns_shown"]), cols0 * 0.8) << "the wheel over the cells is dead with few rows";
}

}  // namespace
