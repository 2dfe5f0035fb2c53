// What every kvscope fuzz harness shares: the input as a string or a file
// (the loaders under test read files, as users' inputs are files), and the
// rule for what counts as a finding. A kvscope::Error (one message naming
// the file and field) is the expected answer to bad input; anything else escaping a loader — another exception type, a
// crash, a sanitizer report — is a bug.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "common/error.h"

namespace kvscope::fuzz {

inline std::string as_string(const uint8_t* data, size_t size) { return {reinterpret_cast<const char*>(data), size}; }

// A per-process scratch file holding the input (libFuzzer runs one input
// at a time per process, so one path per process is enough).
inline std::filesystem::path as_file(const uint8_t* data, size_t size, const char* name) {
  const auto dir = std::filesystem::temp_directory_path() / ("kvscope-fuzz-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto path = dir / name;
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(reinterpret_cast<const char*>(data), std::streamsize(size));
  return path;
}

// Runs `load`; returns normally for the expected errors, aborts (a finding)
// for anything else, with what escaped on stderr.
template <class F>
void expect_clean(F&& load) {
  try {
    load();
  } catch (const Error&) {
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kvscope fuzz: an exception other than kvscope::Error escaped: %s\n", e.what());
    std::abort();
  }
}

}  // namespace kvscope::fuzz
