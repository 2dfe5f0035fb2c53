// The command line of the window (CLI11):
//   kvscope [--model DIR] [--session FILE] [--lesson NAME] [--steps N]
//           [--screenshot OUT.png] [--exit] [--state-file OUT.json]
//           [--export DIR] [--presenter] [--size WxH] [--layer L --head H]
//           [--view MODE]
// Bad arguments print one line naming the flag and exit 2.
#pragma once

#include <optional>
#include <string>

#include "app_state.h"

namespace kvscope::gui {

struct LaunchOptions {
  std::optional<std::string> model;
  std::string session;     // a session file
  std::string lesson_path; // --lesson NAME resolved to its file
  int steps = -1;          // -1: none asked (a session file runs to its view.step)
  std::string screenshot;  // PNG, with a JSON sidecar beside it
  bool exit_when_done = false;
  std::string state_file;
  std::string export_dir;
  bool presenter = false;
  int width = 0, height = 0;  // 0: the remembered size
  std::optional<int> layer, head;
  std::optional<int> lesson_step;  // --lesson-step N: the lesson's step N (1-based) on screen
  std::optional<ViewMode> view_mode;
  int bench_frames = 0;  // --bench-frames N: frame times after the run (frame_bench.h)

  // A run driven from the command line: it waits for the engine, then
  // exports / captures / exits, and leaves the user's settings alone.
  bool scripted() const {
    return steps >= 0 || !screenshot.empty() || exit_when_done || !export_dir.empty() || bench_frames > 0;
  }
};

// Returns the exit code when the program should stop now (--help: 0, bad
// arguments: 2), nullopt to go on.
std::optional<int> parse_launch_options(int argc, char** argv, LaunchOptions& out);

}  // namespace kvscope::gui
