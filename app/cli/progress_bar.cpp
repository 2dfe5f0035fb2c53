#include "progress_bar.h"

#include <unistd.h>

#include <cstdio>

namespace kvscope::cli {

ProgressBar::ProgressBar(std::string label, int total)
    : label_(std::move(label)), total_(total), tty_(::isatty(2)), start_(std::chrono::steady_clock::now()) {}

void ProgressBar::update(int done) {
  if (!tty_) return;
  const int width = 30;
  const int fill = total_ ? done * width / total_ : width;
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const double eta = done ? s / done * (total_ - done) : 0;
  std::fprintf(stderr, "\r%s [%.*s%*s] %d/%d  %.0fs elapsed, %.0fs left ", label_.c_str(), fill,
               "==============================", width - fill, "", done, total_, s, eta);
  std::fflush(stderr);
}

void ProgressBar::finish() {
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  std::fprintf(stderr, "%s%s: %d done in %.1f s\n", tty_ ? "\r" : "", label_.c_str(), total_, s);
}

void ProgressBar::abandon() {
  if (tty_) std::fprintf(stderr, "\n");
}

}  // namespace kvscope::cli
