// What the X server shows is what a whole redraw shows. Under llvmpipe the
// window reaches the screen as the rectangles that changed
// (app/gui/frame_present.h): a rectangle left out (a tooltip's old place,
// the heatmap after a zoom) would stay on screen, stale, while the app's
// own screenshots (its back buffer) look right. So the window's pixels are
// read from the X server (XGetImage) after hovering and zooming, then
// again after an unmap and map has made the window draw itself whole.
#include <gtest/gtest.h>

#include <X11/Xlib.h>
#include <X11/Xutil.h>

#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "test_util.h"
#include "window_harness.h"

using namespace kvscope::test::window;

namespace {

// The window titled "kvscope" on the test display (xdotool finds it).
unsigned long kvscope_window() {
  const std::string cmd =
      "DISPLAY=" + shared_display().display() + " xdotool search --sync --name '^kvscope$' 2>/dev/null";
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return 0;
  unsigned long id = 0;
  if (std::fscanf(p, "%lu", &id) != 1) id = 0;
  ::pclose(p);
  return id;
}

// The window's pixels as the X server holds them (0xRRGGBB each).
std::vector<unsigned> server_pixels(Display* dpy, unsigned long window, int w, int h) {
  std::vector<unsigned> out;
  XImage* img = XGetImage(dpy, window, 0, 0, unsigned(w), unsigned(h), AllPlanes, ZPixmap);
  if (!img) return out;
  out.reserve(std::size_t(w) * h);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) out.push_back(unsigned(XGetPixel(img, x, y)) & 0xffffffu);
  XDestroyImage(img);
  return out;
}

TEST(GuiPresent, WhatTheServerShowsEqualsAWholeRedraw) {
  REQUIRE_DISPLAY();
  ASSERT_FALSE(kvscope::test::find_on_path("xdotool").empty()) << "install xdotool";
  TempDir tmp;
  const fs::path session = tmp / "present.json";
  kvscope::test::write_file(session, json{{"format", "kvscope-session"},
                                          {"version", 1},
                                          {"prompt_file", (kAssets / "prompts" / "passkey.txt").string()},
                                          {"max_new_tokens", 6},
                                          {"policy", {{"name", "h2o"}, {"budget", "40%"}}}}
                                         .dump());
  const LiveWindow app(tmp, "--session " + quoted(session.string()) + " --size 1600x1000");
  ASSERT_TRUE(app.started());
  auto ready = [](const json& s) {
    return s.value("rows", 0) == 7 && !s.value("busy", true) && s["rects"].contains("cells.A");
  };
  json s = app.wait(ready);
  ASSERT_TRUE(ready(s)) << s.dump() << app.log();
  // Xvfb's GLX is Mesa's with llvmpipe: the partial presents are what is tested here.
  ASSERT_TRUE(s.value("partial_present", false))
      << "the window swaps whole frames under Xvfb; nothing partial to check";

  // A tooltip that follows the pointer over the cells, zooms, the tooltip
  // gone again: each frame presents only what it changed.
  const Rect cells = rect_of(s, "cells.A");
  auto at = [&](double fx, double fy) {
    return std::to_string(cells.x + int(cells.w * fx)) + " " + std::to_string(cells.y + int(cells.h * fy));
  };
  ASSERT_TRUE(xdo("mousemove " + at(0.3, 0.3) + " sleep 0.3 mousemove " + at(0.5, 0.6) +
                  " sleep 0.3 click 4 sleep 0.2 click 4" + " sleep 0.2 mousemove " + at(0.7, 0.4) +
                  " sleep 0.3 click 5 sleep 0.3 mousemove 5 995 sleep 0.8"));

  Display* dpy = XOpenDisplay(shared_display().display().c_str());
  ASSERT_NE(dpy, nullptr);
  const unsigned long window = kvscope_window();
  ASSERT_NE(window, 0u) << "no window named kvscope";
  s = app.wait([](const json&) { return true; });
  const int w = s["window"].value("width", 0), h = s["window"].value("height", 0);
  ASSERT_GT(w * h, 0) << s.dump();
  const std::vector<unsigned> shown = server_pixels(dpy, window, w, h);
  ASSERT_EQ(shown.size(), std::size_t(w) * h);

  // Unmapped and mapped again: the contents are gone, the next frame is
  // drawn and presented whole (FrameDamage::invalidate).
  ASSERT_TRUE(
      xdo("windowunmap --sync " + std::to_string(window) + " windowmap --sync " + std::to_string(window) + " sleep 1"));
  const std::vector<unsigned> whole = server_pixels(dpy, window, w, h);
  XCloseDisplay(dpy);
  ASSERT_EQ(whole.size(), shown.size());

  // The status bar shows the last frame's time, which may differ.
  const Rect status = rect_of(s, "panel.status");
  int differing = 0, first_x = -1, first_y = -1;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      if (y >= status.y && y < status.y + status.h) continue;
      if (shown[std::size_t(y) * w + x] != whole[std::size_t(y) * w + x] && differing++ == 0) {
        first_x = x;
        first_y = y;
      }
    }
  EXPECT_EQ(differing, 0) << "pixels on screen differ from a whole redraw, the first at (" << first_x << ", " << first_y
                          << "): a changed rectangle was not presented";
}

}  // namespace
