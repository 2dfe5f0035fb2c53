// The real window under a private Xvfb (llvmpipe): screenshots checked on
// their pixels, the window's exports against the CLI's, and a click and
// keys sent with xdotool. The app tells where its panels are (the
// screenshot's JSON sidecar and --state-file), so nothing here guesses
// coordinates.
//
// A missing Xvfb or xdotool fails these tests with a message saying what to
// install; only with KVSCOPE_ALLOW_NO_XVFB=1 and no Xvfb at all do they skip.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>
#include <stb_image.h>

#include "file_compare.h"
#include "policy/policy_table.h"
#include "test_util.h"
#include "xvfb_display.h"

#include "window_harness.h"

using namespace kvscope::test::window;

namespace {

// Distinct colours inside a rectangle (a blank panel has a handful: its
// background, a border, text).
size_t distinct_colours(const Image& img, Rect r) {
  std::set<unsigned> colours;
  for (int y = std::max(0, r.y); y < std::min(img.h, r.y + r.h); ++y)
    for (int x = std::max(0, r.x); x < std::min(img.w, r.x + r.w); ++x) colours.insert(img.pixel(x, y));
  return colours.size();
}

// A screenshot of `session` after 8 steps: the PNG and its sidecar.
struct Shot {
  Image image;
  json state;
};
Shot screenshot_of(const TempDir& tmp, const std::string& session, const std::string& name) {
  const fs::path png = tmp / (name + ".png");
  std::string out;
  const int rc = run_app(tmp, "--session " + quoted((kSessions / session).string()) + " --steps 8 --size 1600x1000 --screenshot " +
                                  quoted(png.string()) + " --exit", &out);
  EXPECT_EQ(rc, 0) << out;
  Shot s;
  s.image = load_png(png);
  EXPECT_GT(s.image.w, 0) << "no screenshot at " << png << "\n" << out;
  const fs::path sidecar = tmp / (name + ".json");
  EXPECT_TRUE(fs::exists(sidecar)) << out;
  if (fs::exists(sidecar)) s.state = load_json(sidecar);
  return s;
}

TEST(GuiWindow, ScreenshotShowsTheHeatmap) {
  REQUIRE_DISPLAY();
  TempDir tmp;
  const Shot shot = screenshot_of(tmp, "h2o.json", "h2o");
  ASSERT_FALSE(shot.state.is_null());
  EXPECT_EQ(shot.state["rows"], 9);  // the prefill row and 8 steps
  EXPECT_EQ(shot.state["layer"], 2);  // the session file's view block
  EXPECT_EQ(shot.state["head"], 2);
  EXPECT_EQ(shot.state["window"]["width"], 1600);
  EXPECT_EQ(shot.image.w, 1600);
  EXPECT_EQ(shot.image.h, 1000);
  const Rect main = rect_of(shot.state, "panel.main_view");
  EXPECT_GT(main.w, 400);
  EXPECT_GT(main.h, 250);
  // A heatmap through a colormap gives many colours; an empty panel a few.
  EXPECT_GT(distinct_colours(shot.image, main), 200u) << "the main view looks blank";
  // The panels around it are drawn too.
  for (const char* panel : {"panel.controls", "panel.grid", "panel.token_strip", "panel.metrics", "panel.status"})
    EXPECT_GT(distinct_colours(shot.image, rect_of(shot.state, panel)), 8u) << panel;
}

TEST(GuiWindow, AnotherPolicyGivesAnotherHeatmap) {
  REQUIRE_DISPLAY();
  TempDir tmp;
  const Shot h2o = screenshot_of(tmp, "h2o.json", "h2o");
  const Shot window = screenshot_of(tmp, "window.json", "window");
  ASSERT_FALSE(h2o.state.is_null());
  ASSERT_FALSE(window.state.is_null());
  EXPECT_NE(h2o.state["policy"], window.state["policy"]);
  const Rect r = rect_of(h2o.state, "panel.main_view");
  ASSERT_EQ(r.w, rect_of(window.state, "panel.main_view").w);
  size_t differing = 0, total = 0;
  for (int y = r.y; y < std::min({r.y + r.h, h2o.image.h, window.image.h}); ++y)
    for (int x = r.x; x < std::min({r.x + r.w, h2o.image.w, window.image.w}); ++x) {
      ++total;
      differing += h2o.image.pixel(x, y) != window.image.pixel(x, y);
    }
  ASSERT_GT(total, 0u);
  EXPECT_GT(static_cast<double>(differing) / total, 0.01) << differing << " of " << total << " pixels differ";
}

// H2O's summed scores, then TOVA's one row of attention: the score curves
// plot the later range, where H2O's thresholds lie millions of pixels off
// the plot. The dashed threshold line was dashed over all that length (the
// window froze for minutes a frame); it is clipped to the plot first.
TEST(GuiWindow, AThresholdFarOffThePlotDoesNotStallTheFrame) {
  REQUIRE_DISPLAY();
  TempDir tmp;
  const auto start = std::chrono::steady_clock::now();
  const Shot shot = screenshot_of(tmp, "h2o_then_tova.json", "switch");
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_FALSE(shot.state.is_null());
  EXPECT_EQ(shot.state["rows"], 9);
  EXPECT_GT(distinct_colours(shot.image, rect_of(shot.state, "panel.score_curves")), 8u);
  std::printf("8 steps and a screenshot in %.1f s\n", seconds);
}

TEST(GuiWindow, ExportEqualsTheCli) {
  REQUIRE_DISPLAY();
  TempDir tmp;
  const std::string session = (kSessions / "h2o.json").string();
  std::string out;
  ASSERT_EQ(run_app(tmp, "--session " + quoted(session) + " --steps 8 --export " + quoted((tmp / "app").string()) + " --exit", &out), 0)
      << out;
  // One export is one head, the one the window shows (the session's view
  // block: layer 2, head 2): the CLI given that head in the export block
  // writes the same files.
  json same_head = load_json(session);
  same_head["export"]["layer"] = 2;
  same_head["export"]["head"] = 2;
  // (its prompt file is named relative to the session's folder)
  same_head["prompt_file"] = (kSessions / same_head["prompt_file"].get<std::string>()).string();
  const fs::path cli_session = tmp / "same_head.json";
  kvscope::test::write_file(cli_session, same_head.dump(2));
  const std::string cli = quoted(kCli.string()) + " run " + quoted(cli_session.string()) + " --quiet --export " +
                          quoted((tmp / "cli").string()) + " > /dev/null";
  ASSERT_EQ(std::system(cli.c_str()), 0);
  // Every data file the CLI writes, byte for byte (figures are pictures of
  // the same data; nothing exported carries a timestamp).
  size_t compared = 0;
  for (const auto& e : fs::recursive_directory_iterator(tmp / "cli")) {
    if (!e.is_regular_file()) continue;
    const std::string ext = e.path().extension().string();
    if (ext != ".npy" && ext != ".csv" && ext != ".json") continue;
    const fs::path rel = fs::relative(e.path(), tmp / "cli");
    const fs::path app_file = tmp / "app" / rel;
    ASSERT_TRUE(fs::exists(app_file)) << "the app did not export " << rel;
    // The provenance's command line differs on purpose: the window names
    // itself and its action, the CLI its argv.
    auto bytes = [&](const fs::path& f, std::string* command) {
      if (ext != ".json") return kvscope::test::read_file(f);
      json j = json::parse(kvscope::test::read_file(f));
      if (j.contains("provenance")) {
        *command = j["provenance"]["command_line"];
        j["provenance"].erase("command_line");
      }
      return j.dump(2);
    };
    std::string app_command, cli_command;
    const std::string app_bytes = bytes(app_file, &app_command), cli_bytes = bytes(e.path(), &cli_command);
    if (rel.filename() == "manifest.json") {
      // The app's also lists the current view's figures, which it exports too.
      json app_m = json::parse(app_bytes), cli_m = json::parse(cli_bytes);
      const auto app_files = app_m["files"].get<std::vector<std::string>>();
      for (const auto& f : cli_m["files"])
        EXPECT_NE(std::find(app_files.begin(), app_files.end(), f), app_files.end())
            << f << " not in the app's manifest";
      app_m.erase("files");
      cli_m.erase("files");
      EXPECT_EQ(app_m, cli_m) << rel;
    } else {
      EXPECT_EQ(app_bytes, cli_bytes) << rel << " differs";
    }
    if (rel == "manifest.json") {
      EXPECT_EQ(app_command, "kvscope (window): export to " + (tmp / "app").string());
      EXPECT_EQ(cli_command.rfind("kvscope-cli run ", 0), 0u) << cli_command;
    }
    ++compared;
  }
  EXPECT_GE(compared, 6u);
}

bool xdotool(const TempDir& tmp, const std::string& args) {
  const std::string cmd = "DISPLAY=" + shared_display().display() + " xdotool " + args + " > /dev/null 2>&1";
  (void)tmp;
  return std::system(cmd.c_str()) == 0;
}

TEST(GuiWindow, ClicksAndKeysDriveTheWindow) {
  REQUIRE_DISPLAY();
  ASSERT_FALSE(kvscope::test::find_on_path("xdotool").empty())
      << "xdotool not found on PATH: install xdotool (tools/install-deps.sh installs it)";
  TempDir tmp;
  const fs::path state_file = tmp / "state.json";
  const std::string cmd = app_env(tmp) + "exec timeout 60 " + quoted(kApp.string()) + " --session " +
                          quoted((kSessions / "interactive.json").string()) + " --size 1600x1000 --state-file " +
                          quoted(state_file.string()) + " > " + quoted((tmp / "app.log").string()) + " 2>&1";
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  // Stops the window however the test ends.
  struct Reaper {
    pid_t pid;
    ~Reaper() {
      if (pid <= 0) return;
      int status = 0;
      if (::waitpid(pid, &status, WNOHANG) == 0) {
        ::kill(pid, SIGTERM);
        ::waitpid(pid, &status, 0);
      }
    }
  } reaper{pid};

  auto ready = [](const json& s) { return s.value("rows", 0) >= 1 && !s.value("busy", true) && s["rects"].contains("button.step"); };
  json s = wait_for_state(state_file, ready);
  ASSERT_TRUE(ready(s)) << "the window never became ready: " << s.dump() << "\n" << kvscope::test::read_file(tmp / "app.log");
  const int rows0 = s["rows"];

  // Click the Step button where the window says it is.
  const Rect step = rect_of(s, "button.step");
  ASSERT_TRUE(xdotool(tmp, "mousemove " + std::to_string(step.x + step.w / 2) + " " + std::to_string(step.y + step.h / 2) +
                               " sleep 0.2 click 1"));
  s = wait_for_state(state_file, [&](const json& j) { return j.value("rows", 0) == rows0 + 1 && !j.value("busy", true); });
  ASSERT_EQ(s["rows"], rows0 + 1) << "the Step button did not step";

  // Right arrow: one more step. The pointer rests on the window, which
  // has the keyboard focus without a window manager.
  ASSERT_TRUE(xdotool(tmp, "key Right"));
  s = wait_for_state(state_file, [&](const json& j) { return j.value("rows", 0) == rows0 + 2 && !j.value("busy", true); });
  ASSERT_EQ(s["rows"], rows0 + 2) << "Right did not step";

  // Left: the timeline one step back (nothing is recomputed).
  ASSERT_TRUE(xdotool(tmp, "key Left"));
  s = wait_for_state(state_file, [&](const json& j) { return j.value("timeline_row", -1) == rows0; });
  EXPECT_EQ(s["timeline_row"], rows0) << "Left did not scrub back";

  // Space plays (from the scrubbed row), Space again pauses.
  ASSERT_TRUE(xdotool(tmp, "key space"));
  s = wait_for_state(state_file, [&](const json& j) { return j.value("playing", false) && j.value("rows", 0) > rows0 + 3; });
  EXPECT_TRUE(s.value("playing", false)) << "Space did not play";
  EXPECT_GT(s.value("rows", 0), rows0 + 3) << "playing made no progress";
  ASSERT_TRUE(xdotool(tmp, "key space"));
  s = wait_for_state(state_file, [](const json& j) { return !j.value("playing", true); });
  EXPECT_FALSE(s.value("playing", true)) << "Space did not pause";

  // . , [ ]: the layer and head move (within the model's 4 layers, 8 heads).
  const int layer0 = s["layer"], head0 = s["head"];
  ASSERT_TRUE(xdotool(tmp, layer0 < 3 ? "key period" : "key comma"));
  const int layer1 = layer0 < 3 ? layer0 + 1 : layer0 - 1;
  s = wait_for_state(state_file, [&](const json& j) { return j.value("layer", -1) == layer1; });
  EXPECT_EQ(s["layer"], layer1) << "',' / '.' did not change the layer";
  ASSERT_TRUE(xdotool(tmp, head0 < 7 ? "key bracketright" : "key bracketleft"));
  const int head1 = head0 < 7 ? head0 + 1 : head0 - 1;
  s = wait_for_state(state_file, [&](const json& j) { return j.value("head", -1) == head1; });
  EXPECT_EQ(s["head"], head1) << "'[' / ']' did not change the head";

  // A model path that fails to open: the error shows, the session stays,
  // and the model field names the model still loaded (the bundled one:
  // the empty field), not the path that failed.
  const uint64_t generation0 = s["generation"];
  const Rect field = rect_of(s, "field.model");
  ASSERT_TRUE(xdotool(tmp, "mousemove " + std::to_string(field.x + field.w / 2) + " " +
                               std::to_string(field.y + field.h / 2) +
                               " sleep 0.2 click 1 sleep 0.2 type /no/such/model"));
  s = wait_for_state(state_file, [](const json& j) { return j.value("model_field", "") == "/no/such/model"; });
  ASSERT_EQ(s.value("model_field", ""), "/no/such/model") << "typing did not reach the model field";
  // Held over several frames: ImGui's text field reads Enter as a key
  // down at frame time, and a quick tap on a busy machine falls between frames.
  ASSERT_TRUE(xdotool(tmp, "keydown Return sleep 0.4 keyup Return"));
  s = wait_for_state(state_file, [](const json& j) { return !j.value("error", std::string()).empty(); });
  EXPECT_NE(s.value("error", std::string()).find("/no/such/model"), std::string::npos)
      << s.value("error", std::string());
  EXPECT_EQ(s["generation"], generation0) << "the loaded session changed";
  EXPECT_EQ(s.value("model_field", "?"), "") << "the model field keeps the path that failed";
  // Back out of the field, so the keys below go to the window.
  ASSERT_TRUE(xdotool(tmp, "key Escape"));

  // F1 shows the help overlay.
  ASSERT_TRUE(xdotool(tmp, "key F1"));
  s = wait_for_state(state_file, [](const json& j) { return j.value("help", false); });
  EXPECT_TRUE(s.value("help", false)) << "F1 did not open the help";

  // Ctrl+E opens the export controls (File > Export...): the head it
  // exports, the formats, and a folder under the documents or home
  // folder, never the current directory.
  ASSERT_TRUE(xdotool(tmp, "key ctrl+e"));
  s = wait_for_state(state_file, [](const json& j) {
    return j.value("export_window", false) && j["rects"].contains("button.export");
  });
  EXPECT_TRUE(s.value("export_window", false)) << "Ctrl+E did not open the export window";
  ASSERT_TRUE(s["rects"].contains("panel.export"));
  EXPECT_TRUE(s["rects"].contains("export.head"));
  const fs::path export_dir = s.value("export_dir", std::string());
  EXPECT_TRUE(export_dir.is_absolute()) << export_dir;
  EXPECT_EQ(export_dir.filename(), "kvscope-export");
  EXPECT_NE(export_dir.parent_path(), fs::current_path()) << "the default export folder is the current directory";

  // Ctrl+Q closes the window cleanly.
  ASSERT_TRUE(xdotool(tmp, "key ctrl+q"));
  int status = 0;
  bool exited = false;
  for (int i = 0; i < 200 && !exited; ++i) {
    exited = ::waitpid(pid, &status, WNOHANG) == pid;
    if (!exited) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_TRUE(exited) << "Ctrl+Q did not close the window";
  reaper.pid = -1;
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << kvscope::test::read_file(tmp / "app.log");
}

TEST(GuiWindow, BadArgumentsNameTheFlag) {
  // No display needed: arguments are checked before any window opens.
  TempDir tmp;
  for (const std::string args : {"--size 12", "--steps -3", "--view nonsense", "--lesson no_such_lesson", "--bogus"}) {
    const std::string cmd = quoted(kApp.string()) + " " + args + " 2> " + quoted((tmp / "err").string());
    const int rc = std::system(cmd.c_str());
    const std::string err = kvscope::test::read_file(tmp / "err");
    EXPECT_TRUE(WIFEXITED(rc) && WEXITSTATUS(rc) == 2) << args << ": " << err;
    const std::string flag = args.substr(0, args.find(' '));
    EXPECT_NE(err.find(flag), std::string::npos) << args << ": " << err;
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << args << ": " << err;
  }
}

TEST(GuiWindow, MalformedSessionIsReportedNotFatal) {
  REQUIRE_DISPLAY();
  TempDir tmp;
  const fs::path broken = tmp / "broken_session.json";
  kvscope::test::write_file(broken, R"({"format": "kvscope-session", "version": 1, "prompt": "hi", "policy": {"name": "h2o", "budget": "nonsense"}})");
  std::string out;
  const int rc = run_app(tmp, "--session " + quoted(broken.string()) + " --screenshot " + quoted((tmp / "shot.png").string()) + " --exit", &out);
  // The error is a scripted run's result (exit 1, the engine's line on stderr) ...
  EXPECT_EQ(rc, 1) << out;
  EXPECT_NE(out.find("budget"), std::string::npos) << out;
  // ... and the window showed it in its banner rather than closing.
  ASSERT_TRUE(fs::exists(tmp / "shot.json")) << out;
  const json state = load_json(tmp / "shot.json");
  EXPECT_NE(state["error"].get<std::string>().find("budget"), std::string::npos) << state.dump();
  EXPECT_TRUE(state["rects"].contains("banner.error")) << state.dump();
}

// --screenshot OUT.png writes the window's state beside it as OUT.json;
// a user's file there (here the very session being opened) is refused
// before anything is written, and one kvscope wrote is replaced.
TEST(GuiWindow, ScreenshotStateNeverReplacesAUsersFile) {
  REQUIRE_DISPLAY();
  TempDir tmp;
  const fs::path session = tmp / "run.json";
  const std::string text =
      json{{"format", "kvscope-session"}, {"version", 1}, {"prompt", "hi"}, {"max_new_tokens", 2}}.dump();
  kvscope::test::write_file(session, text);
  std::string out;
  int rc = run_app(
      tmp, "--session " + quoted(session.string()) + " --screenshot " + quoted((tmp / "run.png").string()) + " --exit",
      &out);
  EXPECT_EQ(rc, 2) << out;
  EXPECT_NE(out.find("run.json"), std::string::npos) << out;
  EXPECT_EQ(kvscope::test::read_file(session), text) << "the session file was replaced";
  EXPECT_FALSE(fs::exists(tmp / "run.png")) << "a screenshot was written after all";

  // Another name: written; and written again over its own state.
  for (int round = 0; round < 2; ++round) {
    rc = run_app(
        tmp,
        "--session " + quoted(session.string()) + " --screenshot " + quoted((tmp / "shot.png").string()) + " --exit",
        &out);
    EXPECT_EQ(rc, 0) << out;
    ASSERT_TRUE(fs::exists(tmp / "shot.json")) << out;
    EXPECT_EQ(load_json(tmp / "shot.json").value("format", ""), "kvscope-window-state");
  }
  EXPECT_EQ(kvscope::test::read_file(session), text);
}

// The window offers, for each policy, exactly the parameters of the policy
// table that the policy reads (the CLI's flags follow the same table:
// tests/cli/test_cli_policy_table.cpp); the app records each control's
// rectangle as "param.A.<key>" in its screenshot sidecar.
TEST(GuiWindow, PolicyControlsAreThePolicyTables) {
  REQUIRE_DISPLAY();
  TempDir tmp;
  for (const kvscope::PolicySpec& policy : kvscope::policy_specs()) {
    const fs::path session = tmp / ("session_" + std::string(policy.name) + ".json");
    kvscope::test::write_file(session, json{{"format", "kvscope-session"},
                                            {"version", 1},
                                            {"prompt", "The pass key is 4213. Remember it."},
                                            {"max_new_tokens", 2},
                                            {"policy", {{"name", policy.name}, {"budget", "80%"}}}}
                                           .dump());
    const fs::path png = tmp / (std::string(policy.name) + ".png");
    std::string out;
    const int rc = run_app(tmp, "--session " + quoted(session.string()) + " --steps 1 --size 1600x1000 --screenshot " +
                                    quoted(png.string()) + " --exit", &out);
    ASSERT_EQ(rc, 0) << policy.name << ": " << out;
    const json state = load_json(tmp / (std::string(policy.name) + ".json"));  // the screenshot's sidecar
    // Every parameter the policy reads has its control, but the wrappers
    // (AdaKV, ChunkKV, CriticalKV, the decoding schedule), which sit under a
    // header of their own, closed while none is set.
    std::set<std::string> shown, expected;
    for (const auto& [name, rect] : state.at("rects").items())
      if (name.rfind("param.A.", 0) == 0) shown.insert(name.substr(8));
    bool has_wrappers = false;
    for (const kvscope::ParamUse& u : policy.params) {
      const bool wrapper = kvscope::find_param(u.key)->wrapper;
      has_wrappers |= wrapper;
      if (!wrapper) expected.insert(u.key);
    }
    EXPECT_EQ(shown, expected) << policy.name;
    EXPECT_EQ(state.at("rects").contains("wrappers.A"), has_wrappers) << policy.name;
  }
}

// A session that sets a wrapper opens the header on it: its controls show.
TEST(GuiWindow, ASetWrapperOpensItsHeader) {
  REQUIRE_DISPLAY();
  TempDir tmp;
  const fs::path session = tmp / "session_chunk.json";
  kvscope::test::write_file(
      session, json{{"format", "kvscope-session"},
                    {"version", 1},
                    {"prompt", "The pass key is 4213. Remember it."},
                    {"max_new_tokens", 2},
                    {"policy", {{"name", "knorm"}, {"budget", "80%"}, {"granularity", "layer"}, {"chunk_length", 4}}}}
                   .dump());
  const fs::path png = tmp / "chunk.png";
  std::string out;
  ASSERT_EQ(run_app(tmp,
                    "--session " + quoted(session.string()) + " --steps 1 --size 1600x1000 --screenshot " +
                        quoted(png.string()) + " --exit",
                    &out),
            0)
      << out;
  const json state = load_json(tmp / "chunk.json");
  for (const char* key : {"chunk_length", "head_budgets", "critical_kv", "compression_interval"})
    EXPECT_TRUE(state.at("rects").contains(std::string("param.A.") + key)) << key;
}

}  // namespace
