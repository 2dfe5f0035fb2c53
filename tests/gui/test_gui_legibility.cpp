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
    const Rect transport = rect_of(c.state, "content.transport");  // inside the padding: what is drawn
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
  const std::vector<int> ids = pseudo_random_ids(2000);
  const fs::path session = tmp / "long.json";
  kvscope::test::write_file(session,
                            json{{"format", "kvscope-session"},
                                 {"version", 1},
                                 {"model", long_context_model(tmp).string()},
                                 {"prompt_ids", ids},
                                 {"max_new_tokens", 48},
                                 {"stop_at_eos", false},
                                 {"policy", {{"name", "h2o"}, {"budget", "25%"}}},
                                 // The whole run (what Home shows), not the
                                 // legible first view of a long prompt.
                                 {"view", {{"layer", 1}, {"head", 0}, {"mode", "attention"}, {"positions", {0, 2047}}}}}
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
  const LiveWindow app(tmp, "--session " + quoted(session.string()) + " --size 1600x1000");
  ASSERT_TRUE(app.started());
  auto ready = [](const json& s) {
    return s.value("rows", 0) == 5 && !s.value("busy", true) && s["rects"].contains("cells.A");
  };
  json s = app.wait(ready);
  ASSERT_TRUE(ready(s)) << s.dump() << app.log();
  // From the fit (a prompt this long opens on its newest positions).
  auto fitted = [](const json& j) {
    return j["columns_shown"][0] == 0 &&
           std::abs(j["columns_shown"][1].get<double>() - j.value("columns_total", -1)) < 1e-6;
  };
  ASSERT_TRUE(xdo("key Home"));
  s = app.wait(fitted);
  ASSERT_TRUE(fitted(s)) << "Home did not fit the view: " << s.dump();
  const double cols0 = span(s["columns_shown"]), rows0 = span(s["rows_shown"]);
  const Rect cells = rect_of(s, "cells.A");

  // Over the position labels (just above the cells): across only.
  const std::string over_cols = std::to_string(cells.x + cells.w / 2) + " " + std::to_string(cells.y - 6);
  ASSERT_TRUE(xdo("mousemove " + over_cols + " sleep 0.2 click 4 sleep 0.1 click 4 sleep 0.1 click 4"));
  s = app.wait([&](const json& j) { return span(j["columns_shown"]) < cols0 * 0.8; });
  EXPECT_LT(span(s["columns_shown"]), cols0 * 0.8) << "the wheel over the position labels did not zoom across";
  EXPECT_NEAR(span(s["rows_shown"]), rows0, 1e-6) << "zooming across changed the rows";

  // Home: the fit again.
  ASSERT_TRUE(xdo("key Home"));
  s = app.wait([&](const json& j) { return std::abs(span(j["columns_shown"]) - cols0) < 1e-6; });
  EXPECT_NEAR(span(s["columns_shown"]), cols0, 1e-6) << "Home did not fit the view";

  // Over the cells: both axes while they can; the rows of a 5-step run are
  // already as tall as they get, and the columns still zoom.
  const std::string over_cells = std::to_string(cells.x + cells.w / 2) + " " + std::to_string(cells.y + cells.h / 2);
  ASSERT_TRUE(xdo("mousemove " + over_cells + " sleep 0.2 click 4 sleep 0.1 click 4 sleep 0.1 click 4"));
  s = app.wait([&](const json& j) { return span(j["columns_shown"]) < cols0 * 0.8; });
  EXPECT_LT(span(s["columns_shown"]), cols0 * 0.8) << "the wheel over the cells is dead with few rows";
}

}  // namespace

namespace {

// A session of `prompt_ids` on the bundled model (made long enough for it).
fs::path long_prompt_session(const TempDir& tmp, int prompt_tokens, int new_tokens) {
  const fs::path session = tmp / "long_prompt.json";
  kvscope::test::write_file(session, json{{"format", "kvscope-session"},
                                          {"version", 1},
                                          {"model", long_context_model(tmp).string()},
                                          {"prompt_ids", pseudo_random_ids(prompt_tokens)},
                                          {"max_new_tokens", new_tokens},
                                          {"stop_at_eos", false},
                                          {"policy", {{"name", "tova"}, {"budget", "50%"}}}}
                                         .dump());
  return session;
}

// A right-button drag draws a box over the cells; the view then shows about
// the box's columns and rows (a cell either way), and Home the fit again.
TEST(GuiLegibility, RightDragZoomsToTheBox) {
  REQUIRE_DISPLAY();
  ASSERT_FALSE(kvscope::test::find_on_path("xdotool").empty()) << "install xdotool";
  TempDir tmp;
  const LiveWindow app(tmp, "--session " + quoted(long_prompt_session(tmp, 100, 24).string()) + " --size 1600x1000");
  ASSERT_TRUE(app.started());
  auto ready = [](const json& j) {
    return !j.value("busy", true) && j.value("rows", 0) == 25 && j["rects"].contains("cells.A");
  };
  json s = app.wait(ready);
  ASSERT_TRUE(ready(s)) << s.dump() << app.log();
  auto fitted = [](const json& j) {
    return !j.value("busy", true) && j.value("rows", 0) == 25 && j["rects"].contains("cells.A") &&
           j["columns_shown"][0] == 0 && j["rows_shown"][0] == 0 &&
           std::abs(j["columns_shown"][1].get<double>() - j.value("columns_total", -1)) < 1e-6 &&
           std::abs(j["rows_shown"][1].get<double>() - 25) < 1e-6;
  };
  // From the fit (124 positions: small cells, each a few pixels).
  ASSERT_TRUE(xdo("mousemove " + centre_of(rect_of(s, "cells.A")) + " sleep 0.2 key Home"));
  s = app.wait(fitted);
  ASSERT_TRUE(fitted(s)) << "Home did not fit the view: " << s.dump();
  const Rect cells = rect_of(s, "cells.A");
  const double cols = s["columns_total"], rows = 25;

  // The box: across from a quarter to a half of the columns, down from a
  // fifth to four fifths of the rows (each cell then under 64 pixels, the
  // largest a zoom makes it).
  const int x1 = cells.x + cells.w / 4, x2 = cells.x + cells.w / 2;
  const int y1 = cells.y + cells.h / 5, y2 = cells.y + cells.h * 4 / 5;
  ASSERT_TRUE(xdo("mousemove " + std::to_string(x1) + " " + std::to_string(y1) + " sleep 0.3 mousedown 3 sleep 0.3 " +
                  "mousemove " + std::to_string((x1 + x2) / 2) + " " + std::to_string((y1 + y2) / 2) + " sleep 0.3 " +
                  "mousemove " + std::to_string(x2) + " " + std::to_string(y2) + " sleep 0.3 mouseup 3"));
  s = app.wait([&](const json& j) { return span(j["columns_shown"]) < cols * 0.5; });
  const double col_px = cells.w / cols, row_px = cells.h / rows;  // a cell at the fit, in pixels
  EXPECT_NEAR(s["columns_shown"][0].get<double>(), (x1 - cells.x) / col_px, 1.0) << s["columns_shown"];
  EXPECT_NEAR(s["columns_shown"][1].get<double>(), (x2 - cells.x) / col_px, 1.0) << s["columns_shown"];
  EXPECT_NEAR(s["rows_shown"][0].get<double>(), (y1 - cells.y) / row_px, 1.0) << s["rows_shown"];
  EXPECT_NEAR(s["rows_shown"][1].get<double>(), (y2 - cells.y) / row_px, 1.0) << s["rows_shown"];

  ASSERT_TRUE(xdo("key Home"));
  s = app.wait(fitted);
  EXPECT_TRUE(fitted(s)) << "Home did not fit the view: " << s["columns_shown"] << s["rows_shown"];
}

// A 600-token prompt without a lesson: the fit would give its columns under
// two pixels each, where no token can be written. It opens on its newest
// positions at a size that carries their labels (views/first_view.h), all
// five rows; Home shows every position.
TEST(GuiLegibility, LongPromptOpensOnLegibleNewestPositions) {
  REQUIRE_DISPLAY();
  ASSERT_FALSE(kvscope::test::find_on_path("xdotool").empty()) << "install xdotool";
  TempDir tmp;
  const LiveWindow app(tmp, "--session " + quoted(long_prompt_session(tmp, 600, 4).string()) + " --size 1600x1000");
  ASSERT_TRUE(app.started());
  auto ready = [](const json& j) {
    return !j.value("busy", true) && j.value("rows", 0) == 5 && j["rects"].contains("cells.A") &&
           j.value("columns_total", 0) >= 600;
  };
  json s = app.wait(ready);
  ASSERT_TRUE(ready(s)) << s.dump() << app.log();
  const Rect cells = rect_of(s, "cells.A");
  const double cols = s["columns_total"];
  const double min_col_px = s["label_min_px"][0];
  ASSERT_GT(min_col_px, 4.0);
  ASSERT_LT(cells.w / cols, min_col_px) << "the fit would be legible: the prompt is not long enough to test this";
  // The first view: columns wide enough for their tokens, ending at the newest.
  EXPECT_GE(cells.w / span(s["columns_shown"]), min_col_px - 1e-6) << s["columns_shown"];
  EXPECT_NEAR(s["columns_shown"][1].get<double>(), cols, 1e-6) << "not the newest positions";
  EXPECT_NEAR(span(s["rows_shown"]), 5, 1e-6) << "a 5-step run shows all its steps";

  ASSERT_TRUE(xdo("mousemove " + centre_of(cells) + " sleep 0.2 key Home"));
  s = app.wait(
      [&](const json& j) { return j["columns_shown"][0] == 0 && std::abs(span(j["columns_shown"]) - cols) < 1e-6; });
  EXPECT_NEAR(span(s["columns_shown"]), cols, 1e-6) << "Home did not show every position";
  EXPECT_EQ(s["columns_shown"][0], 0);
}

// A short prompt opens on the fit; generating hundreds of tokens grows it
// past what the fit can label, and the view then moves to the newest
// positions at a legible size (views/first_view.h) instead of staying on
// an unreadable fit. A fit the user asks for (Home) stays.
TEST(GuiLegibility, AShortPromptThatGrowsLongMovesToLegibleNewestPositions) {
  REQUIRE_DISPLAY();
  ASSERT_FALSE(kvscope::test::find_on_path("xdotool").empty()) << "install xdotool";
  TempDir tmp;
  // 4 steps at the open (the fit labels all 12 positions), then 160 more with "Run N".
  const LiveWindow app(
      tmp, "--session " + quoted(long_prompt_session(tmp, 8, 200).string()) + " --steps 4 --size 1600x1000");
  ASSERT_TRUE(app.started());
  auto fitted = [](const json& j) {
    return j["columns_shown"][0] == 0 && std::abs(span(j["columns_shown"]) - j.value("columns_total", -1.0)) < 1e-6;
  };
  auto opened = [](const json& j) {
    return !j.value("busy", true) && j.value("rows", 0) == 5 && j["rects"].contains("cells.A");
  };
  json s = app.wait(opened);
  ASSERT_TRUE(opened(s)) << s.dump() << app.log();
  ASSERT_TRUE(fitted(s)) << "a short prompt did not open on the fit: " << s["columns_shown"];
  const Rect cells = rect_of(s, "cells.A");
  const double min_col_px = s["label_min_px"][0];
  ASSERT_TRUE(s["rects"].contains("button.run_n")) << s.dump();
  const std::string run_n = centre_of(rect_of(s, "button.run_n"));
  auto rows_are = [](int n) {
    return [n](const json& j) { return !j.value("busy", true) && j.value("rows", 0) == n; };
  };
  for (int rows = 21; rows <= 165; rows += 16) {
    ASSERT_TRUE(xdo("mousemove " + run_n + " sleep 0.1 click 1"));
    s = app.wait(rows_are(rows));
    ASSERT_TRUE(rows_are(rows)(s)) << "Run N did not reach " << rows << " rows: " << s.dump();
  }
  const double cols = s["columns_total"];
  ASSERT_LT(cells.w / cols, min_col_px) << "the run did not grow past a legible fit: nothing to test";
  EXPECT_GE(cells.w / span(s["columns_shown"]), min_col_px - 1e-6)
      << "still on an illegible fit: " << s["columns_shown"];
  EXPECT_NEAR(s["columns_shown"][1].get<double>(), cols, 1e-6) << "not following the newest positions";

  // Home: the fit, the user's own, which stays as the run grows further.
  ASSERT_TRUE(xdo("mousemove " + centre_of(cells) + " sleep 0.2 key Home"));
  s = app.wait(fitted);
  ASSERT_TRUE(fitted(s)) << "Home did not fit: " << s["columns_shown"];
  ASSERT_TRUE(xdo("mousemove " + run_n + " sleep 0.1 click 1"));
  s = app.wait(rows_are(181));
  ASSERT_TRUE(rows_are(181)(s)) << s.dump();
  EXPECT_TRUE(fitted(s)) << "the user's fit was left as the run grew: " << s["columns_shown"] << " of "
                         << s["columns_total"];
}

// A 1024x600 window: the transport's line (with a fork's "Drop fork") is
// wider than its panel at the default sizes, so it takes its compact forms
// and every button stays whole inside the panel; at 1920x1080 it keeps the
// default sizes.
TEST(GuiLegibility, ANarrowWindowKeepsTheTransportButtonsWhole) {
  REQUIRE_DISPLAY();
  TempDir tmp;
  const fs::path session = tmp / "fork.json";
  std::ofstream(session) << R"({"format": "kvscope-session", "version": 1,
    "prompt": "The quick brown fox jumps over the lazy dog", "max_new_tokens": 8,
    "policy": {"name": "h2o", "budget": "50%"},
    "fork": {"at_step": 3, "policy": {"name": "tova", "budget": "50%"}}})";
  double drop_width[2] = {0, 0};
  int i = 0;
  for (const char* size : {"1024x600", "1920x1080"}) {
    SCOPED_TRACE(size);
    const Capture c =
        capture(tmp, std::string("transport") + size, "--session " + quoted(session.string()) + " --steps 6", size);
    ASSERT_FALSE(c.state.is_null());
    ASSERT_TRUE(c.state["rects"].contains("button.drop_fork")) << "no fork on screen";
    const Rect transport = rect_of(c.state, "content.transport");  // inside the padding: what is drawn
    for (const char* button :
         {"button.step", "button.run_n", "button.play", "button.reset", "button.fork", "button.drop_fork"}) {
      ASSERT_TRUE(c.state["rects"].contains(button)) << button;
      const Rect b = rect_of(c.state, button);
      EXPECT_GE(b.x, transport.x) << button;
      EXPECT_LE(b.x + b.w, transport.x + transport.w) << button << " cut at the transport panel's content edge";
    }
    drop_width[i++] = rect_of(c.state, "button.drop_fork").w;
  }
  EXPECT_LT(drop_width[0], drop_width[1]) << "the narrow window's line is not the compact one";
}

}  // namespace
