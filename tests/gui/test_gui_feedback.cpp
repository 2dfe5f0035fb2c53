// The window is never silent: an error shows on top of every panel, the
// second time as the first; an edit of the policy says it is not applied
// yet until Apply, and the run then takes it; a number of new tokens that
// will not fit the memory says so before the run is opened. Driven with xdotool; the
// state file says what is drawn (the window on top at the banner's centre,
// the "Not applied yet" line's rectangle).
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include <nlohmann/json.hpp>

#include "test_util.h"
#include "window_harness.h"

using namespace kvscope::test::window;

namespace {

bool has_rect(const json& s, const char* name) { return s.contains("rects") && s["rects"].contains(name); }

// Types `path` into the model field and presses Enter: the open fails.
void open_missing_model(const json& s, const std::string& path) {
  ASSERT_TRUE(has_rect(s, "field.model"));
  ASSERT_TRUE(xdo("mousemove " + centre_of(rect_of(s, "field.model")) + " sleep 0.2 click 1 sleep 0.2 type " + path));
  // Held over several frames: ImGui's text field reads Enter at frame time.
  ASSERT_TRUE(xdo("sleep 0.3 keydown Return sleep 0.4 keyup Return sleep 0.2 key Escape"));
}

// After the first banner is dismissed and the main view clicked (brought
// to the front), a second error opened behind the main view: it seemed to
// do nothing. Both must be drawn on top of everything at the banner.
TEST(GuiFeedback, EveryErrorShowsOnTop) {
  REQUIRE_DISPLAY();
  ASSERT_FALSE(kvscope::test::find_on_path("xdotool").empty()) << "install xdotool";
  TempDir tmp;
  const LiveWindow app(tmp, "--session " + quoted((kSessions / "interactive.json").string()) + " --size 1600x1000");
  ASSERT_TRUE(app.started());
  auto ready = [](const json& j) {
    return j.value("rows", 0) >= 1 && !j.value("busy", true) && has_rect(j, "field.model") && has_rect(j, "cells.A");
  };
  json s = app.wait(ready);
  ASSERT_TRUE(ready(s)) << s.dump() << app.log();
  const Rect cells = rect_of(s, "cells.A"), main_view = rect_of(s, "panel.main_view");

  auto banner_for = [](const std::string& path) {
    return [path](const json& j) {
      return j.value("error", std::string()).find(path) != std::string::npos && has_rect(j, "banner.error") &&
             has_rect(j, "button.dismiss_error");
    };
  };
  open_missing_model(s, "/no/such/model-one");
  s = app.wait(banner_for("model-one"));
  ASSERT_TRUE(banner_for("model-one")(s)) << s.dump();
  s = app.wait([](const json& j) { return j.value("window_over_error", "") == "##error"; });
  EXPECT_EQ(s.value("window_over_error", ""), "##error") << "the first error is hidden";

  // Dismiss it, then click the main view (a plain click: nothing changes
  // but the window in front).
  ASSERT_TRUE(xdo("mousemove " + centre_of(rect_of(s, "button.dismiss_error")) + " sleep 0.2 click 1"));
  s = app.wait([](const json& j) { return j.value("error", "x").empty() && !has_rect(j, "banner.error"); });
  ASSERT_TRUE(s.value("error", "x").empty()) << "Dismiss did not dismiss";
  ASSERT_TRUE(xdo("mousemove " + centre_of(cells) + " sleep 0.2 click 1 sleep 0.3"));

  open_missing_model(s, "/no/such/model-two");
  s = app.wait(banner_for("model-two"));
  ASSERT_TRUE(banner_for("model-two")(s)) << s.dump();
  // Over the main view, and drawn above it.
  const Rect banner = rect_of(s, "banner.error");
  EXPECT_GE(banner.x, main_view.x);
  EXPECT_LE(banner.x + banner.w, main_view.x + main_view.w);
  EXPECT_GE(banner.y, main_view.y);
  s = app.wait([](const json& j) { return j.value("window_over_error", "") == "##error"; });
  EXPECT_EQ(s.value("window_over_error", ""), "##error") << "the second error opened behind another window";
}

// An edit in the policy panel says "Not applied yet" (and what Apply will
// do) before Apply; after Apply the note is gone and the run has taken the
// change (a policy change from the next step on).
TEST(GuiFeedback, EditsSayNotAppliedUntilApply) {
  REQUIRE_DISPLAY();
  ASSERT_FALSE(kvscope::test::find_on_path("xdotool").empty()) << "install xdotool";
  TempDir tmp;
  const LiveWindow app(tmp, "--session " + quoted((kSessions / "interactive.json").string()) + " --size 1600x1000");
  ASSERT_TRUE(app.started());
  auto ready = [](const json& j) {
    return j.value("rows", 0) >= 1 && !j.value("busy", true) && has_rect(j, "param.A.budget") &&
           has_rect(j, "button.apply");
  };
  json s = app.wait(ready);
  ASSERT_TRUE(ready(s)) << s.dump() << app.log();
  EXPECT_FALSE(s.value("unapplied", true));
  EXPECT_FALSE(has_rect(s, "note.unapplied"));
  const std::string policy0 = s["policy"];
  const int changes0 = s["policy_changes"];

  // The budget's unit switch (the control's last widget): 30% -> 32 tokens.
  ASSERT_TRUE(xdo("mousemove " + centre_of(rect_of(s, "param.A.budget")) + " sleep 0.2 click 1"));
  s = app.wait([](const json& j) { return j.value("unapplied", false) && has_rect(j, "note.unapplied"); });
  ASSERT_TRUE(s.value("unapplied", false)) << "an edited budget is not shown as unapplied";
  EXPECT_TRUE(has_rect(s, "note.unapplied")) << "no \"Not applied yet\" line";
  EXPECT_EQ(s["policy"], policy0) << "the edit took effect before Apply";
  EXPECT_EQ(s["policy_changes"], changes0);

  ASSERT_TRUE(xdo("mousemove " + centre_of(rect_of(s, "button.apply")) + " sleep 0.2 click 1"));
  s = app.wait([&](const json& j) {
    return !j.value("unapplied", true) && !j.value("busy", true) && j.value("policy_changes", 0) == changes0 + 1;
  });
  EXPECT_FALSE(s.value("unapplied", true)) << "still \"Not applied yet\" after Apply";
  EXPECT_FALSE(has_rect(s, "note.unapplied"));
  EXPECT_EQ(s["policy_changes"], changes0 + 1) << "from this step on: one policy change in effect";
  // The shown step ran under the old policy: the title and the status bar
  // name it until the next step runs under the new one.
  EXPECT_EQ(s["policy"], policy0) << "the label names a policy the shown step did not run under";
  ASSERT_TRUE(xdo("key Right"));
  s = app.wait([&](const json& j) { return !j.value("busy", true) && j.value("policy", policy0) != policy0; });
  EXPECT_NE(s["policy"], policy0) << "the step after Apply did not run under the new policy";
}

// The prompt panel plans the memory of the edited settings: a number of
// new tokens that will not fit (KVSCOPE_MEMORY_MB stands in for a 5 MiB
// machine) turns the line into the reason, naming the control and what fits.
TEST(GuiFeedback, TooManyNewTokensSayTheyWillNotFitBeforeTheRun) {
  REQUIRE_DISPLAY();
  ASSERT_FALSE(kvscope::test::find_on_path("xdotool").empty()) << "install xdotool";
  TempDir tmp;
  ::setenv("KVSCOPE_MEMORY_MB", "5", 1);  // the window inherits it
  struct Unset {
    ~Unset() { ::unsetenv("KVSCOPE_MEMORY_MB"); }
  } unset;
  const LiveWindow app(tmp, "--session " + quoted((kSessions / "interactive.json").string()) + " --size 1600x1000");
  ASSERT_TRUE(app.started());
  auto ready = [](const json& j) {
    return j.value("rows", 0) >= 1 && !j.value("busy", true) && has_rect(j, "field.max_new_tokens") &&
           has_rect(j, "text.memory");
  };
  json s = app.wait(ready);
  ASSERT_TRUE(ready(s)) << s.dump() << app.log();
  EXPECT_TRUE(s["memory"].value("fits", false)) << s["memory"].dump();
  EXPECT_EQ(s["memory"].value("line", "").rfind("memory: ", 0), 0u) << s["memory"].dump();
  EXPECT_NE(s["memory"].value("line", "").find("of 5.0 MiB available"), std::string::npos) << s["memory"].dump();

  // 64 -> 340 new tokens (503 positions, within the model's 512).
  const Rect field = rect_of(s, "field.max_new_tokens");
  ASSERT_TRUE(xdo("mousemove " + std::to_string(field.x + 12) + " " + std::to_string(field.y + field.h / 2) +
                  " sleep 0.2 click 1 sleep 0.2 key ctrl+a sleep 0.1 type 340"));
  s = app.wait([](const json& j) { return !j["memory"].value("fits", true); });
  ASSERT_FALSE(s["memory"].value("fits", true)) << s["memory"].dump();
  const std::string line = s["memory"].value("line", "");
  EXPECT_EQ(line.rfind("will not run: max new tokens: ", 0), 0u) << line;
  EXPECT_NE(line.find("new tokens fit"), std::string::npos) << line;
  EXPECT_EQ(s["rows"], 1) << "the open run is not touched";
  ASSERT_TRUE(xdo("key Escape"));
}

}  // namespace
