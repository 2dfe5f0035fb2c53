// Helpers shared by the test suites: data paths, temporary directories,
// running the CLI, and tolerance checks that report where they failed.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <span>
#include <string>
#include <vector>

namespace kvscope::test {

inline std::filesystem::path data_dir() { return std::filesystem::path(KVSCOPE_TEST_DATA); }
inline std::filesystem::path model_dir(const std::string& name) { return data_dir() / "models" / name; }

// A fresh directory removed at the end of the test.
class TempDir {
 public:
  TempDir() {
    static std::mt19937_64 rng{std::random_device{}()};
    path_ = std::filesystem::temp_directory_path() / ("kvscope-test-" + std::to_string(rng()));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

// Kilobytes resident in the mapping that starts at `start` (the "Rss:" line
// of the /proc/self/smaps entry whose address range begins there: the
// kernel's own count, which a page of the file in the page cache but not
// mapped does not add to); -1 when no entry starts there.
inline long resident_kb_of_mapping(const void* start) {
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  const auto want = reinterpret_cast<std::uintptr_t>(start);
  bool in_entry = false;
  while (std::getline(smaps, line)) {
    std::uintptr_t lo = 0, hi = 0;
    char dash = 0;
    std::istringstream head(line);
    if (head >> std::hex >> lo >> dash >> hi && dash == '-') {
      in_entry = lo == want;
      continue;
    }
    if (in_entry && line.rfind("Rss:", 0) == 0) return std::stol(line.substr(4));
  }
  return -1;
}

inline void write_file(const std::filesystem::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

inline std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

struct CommandResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

// Runs a shell command; `output` holds what it printed to stdout.
inline CommandResult run_shell(const std::string& cmd) {
  CommandResult r;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), p)) > 0) r.output.append(buf, n);
  const int status = ::pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// Runs kvscope-cli with `args` (already shell-quoted by the caller);
// `output` holds stdout and, unless with_stderr is false (for commands
// whose stdout is JSON), stderr too.
inline CommandResult run_cli(const std::string& args, bool with_stderr = true) {
  return run_shell(std::string(KVSCOPE_CLI_PATH) + " " + args + (with_stderr ? " 2>&1" : " 2>/dev/null"));
}

inline std::string quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// A test model's folder as a shell argument for the CLI.
inline std::string model_arg(const std::string& name) { return quote(model_dir(name).string()); }

// max |a - b| / max |b| over the whole array (the "relative to the largest
// |logit|" measure the goldens are judged by).
inline double max_rel_error(std::span<const float> a, std::span<const float> b) {
  double maxabs = 0, maxdiff = 0;
  for (std::size_t i = 0; i < b.size(); ++i) {
    maxabs = std::max(maxabs, std::abs(double(b[i])));
    maxdiff = std::max(maxdiff, std::abs(double(a[i]) - double(b[i])));
  }
  return maxabs > 0 ? maxdiff / maxabs : maxdiff;
}

inline double max_abs_error(std::span<const float> a, std::span<const float> b) {
  double m = 0;
  for (std::size_t i = 0; i < b.size(); ++i) m = std::max(m, std::abs(double(a[i]) - double(b[i])));
  return m;
}

}  // namespace kvscope::test
