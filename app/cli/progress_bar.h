// A progress bar on stderr for long CLI runs (sweeps, evals); silent when
// stderr is not a terminal, apart from the final line.
#pragma once

#include <chrono>
#include <string>

namespace kvscope::cli {

class ProgressBar {
 public:
  ProgressBar(std::string label, int total);
  void update(int done);
  void finish();
  // Stopped before the end (Ctrl-C): ends the bar's line, claims nothing done.
  void abandon();

 private:
  std::string label_;
  int total_;
  bool tty_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace kvscope::cli
