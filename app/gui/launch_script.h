// What the command line asks the window to do by itself: open the model,
// session or lesson, run N steps, then export, capture the window and quit.
// It never blocks the UI thread: each frame it looks whether the worker is
// idle and moves on when it is, so the window keeps drawing throughout.
#pragma once

#include <string>

#include "app_settings.h"
#include "app_state.h"
#include "launch_options.h"

namespace kvscope::gui {

class LaunchScript {
 public:
  explicit LaunchScript(LaunchOptions o) : opts_(std::move(o)) {}

  // Posts the first commands: the session file, the lesson, the last
  // session or the demo (bundled model, passkey prompt), then the steps.
  void start(AppState& s, const AppSettings& settings);
  // After each frame is rendered, before the swap: moves on when the worker
  // is idle; takes the screenshot. Returns true when the window should close.
  bool after_render(AppState& s, int framebuffer_width, int framebuffer_height);
  // Still waiting for something: keep frames coming instead of sleeping.
  bool active() const { return phase_ != Phase::Done; }
  int exit_code() const { return exit_code_; }

 private:
  enum class Phase { WaitForRun, WaitForExport, Settle, Done };
  void apply_selection(AppState& s);
  void finish(AppState& s, int fb_w, int fb_h);

  LaunchOptions opts_;
  Phase phase_ = Phase::WaitForRun;
  int settle_frames_ = 0, waited_frames_ = 0;
  int exit_code_ = 0;
  uint64_t errors_at_start_ = 0;
};

}  // namespace kvscope::gui
