// A private X server for the window tests: Xvfb started by the test
// itself on a display number it picks (-displayfd: the server chooses a
// free one and says which once it accepts connections), stopped when the
// test ends. Tests of the real window never depend on a desktop.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>

namespace kvscope::test {

// The full path of `program` on PATH, "" when absent.
inline std::string find_on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/bin:/bin";
  size_t start = 0;
  while (start <= dirs.size()) {
    const size_t end = dirs.find(':', start);
    const std::string dir = dirs.substr(start, end == std::string::npos ? std::string::npos : end - start);
    const std::filesystem::path candidate = std::filesystem::path(dir.empty() ? "." : dir) / program;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate.string();
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return "";
}

class XvfbDisplay {
 public:
  // Starts Xvfb with a 1600x1000x24 screen; display() is "" and error()
  // says why when it could not.
  XvfbDisplay() {
    const std::string xvfb = find_on_path("Xvfb");
    if (xvfb.empty()) {
      error_ = "Xvfb not found on PATH: install xvfb (tools/install-deps.sh installs it)";
      return;
    }
    int fds[2];
    if (::pipe(fds) != 0) {
      error_ = "pipe() failed";
      return;
    }
    pid_ = ::fork();
    if (pid_ == 0) {
      ::close(fds[0]);
      const std::string fd = std::to_string(fds[1]);
      // Quiet: Xvfb's own chatter (xkbcomp warnings) is not the test's.
      const int devnull = ::open("/dev/null", O_WRONLY);
      if (devnull >= 0) {
        ::dup2(devnull, 1);
        ::dup2(devnull, 2);
      }
      ::execl(xvfb.c_str(), "Xvfb", "-displayfd", fd.c_str(), "-screen", "0", "1600x1000x24", "-nolisten", "tcp",
              "-noreset", static_cast<char*>(nullptr));
      ::_exit(127);
    }
    ::close(fds[1]);
    if (pid_ < 0) {
      ::close(fds[0]);
      error_ = "fork() failed";
      return;
    }
    // The display number arrives once the server is ready; give it 20 s.
    std::string number;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    ::fcntl(fds[0], F_SETFL, O_NONBLOCK);
    while (std::chrono::steady_clock::now() < deadline) {
      char buf[16];
      const ssize_t n = ::read(fds[0], buf, sizeof buf);
      if (n > 0) {
        number.append(buf, buf + n);
        if (number.find('\n') != std::string::npos) break;
      } else if (n == 0) {
        break;  // the server exited
      } else {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
    }
    ::close(fds[0]);
    while (!number.empty() && (number.back() == '\n' || number.back() == ' ')) number.pop_back();
    if (number.empty()) {
      error_ = "Xvfb did not start (no display number within 20 s)";
      stop();
      return;
    }
    display_ = ":" + number;
  }
  ~XvfbDisplay() { stop(); }
  XvfbDisplay(const XvfbDisplay&) = delete;
  XvfbDisplay& operator=(const XvfbDisplay&) = delete;

  const std::string& display() const { return display_; }
  const std::string& error() const { return error_; }

 private:
  void stop() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGTERM);
    int status = 0;
    for (int i = 0; i < 100 && ::waitpid(pid_, &status, WNOHANG) == 0; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (::waitpid(pid_, &status, WNOHANG) == 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, &status, 0);
    }
    pid_ = -1;
  }

  pid_t pid_ = -1;
  std::string display_, error_;
};

}  // namespace kvscope::test
