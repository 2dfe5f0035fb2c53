// Comparing exported files in tests without printing them whole: a failure
// names the file and the first difference, an array element with its index
// and both values (.npy), a line with both texts (CSV, JSON), or a byte.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "io/npy.h"
#include "test_util.h"

namespace kvscope::test {

namespace detail {

inline std::string index_text(int64_t flat, const std::vector<int64_t>& shape) {
  std::vector<int64_t> idx(shape.size());
  for (std::size_t d = shape.size(); d-- > 0;) {
    idx[d] = shape[d] > 0 ? flat % shape[d] : 0;
    flat = shape[d] > 0 ? flat / shape[d] : 0;
  }
  std::string s = "[";
  for (std::size_t d = 0; d < idx.size(); ++d) s += (d ? ", " : "") + std::to_string(idx[d]);
  return s + "]";
}

inline std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (std::size_t d = 0; d < shape.size(); ++d) s += (d ? ", " : "") + std::to_string(shape[d]);
  return s + "]";
}

// Exact text of a float: enough digits to tell two neighbours apart.
inline std::string float_text(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.9g", v);
  return buf;
}

inline ::testing::AssertionResult compare_npy(const std::filesystem::path& a, const std::filesystem::path& b) {
  const NpyArray x = read_npy(a), y = read_npy(b);
  if (x.descr != y.descr || x.shape != y.shape)
    return ::testing::AssertionFailure() << a << " is " << x.descr << " " << shape_text(x.shape) << ", " << b
                                         << " is " << y.descr << " " << shape_text(y.shape);
  const std::size_t width = x.numel() > 0 ? x.bytes.size() / static_cast<std::size_t>(x.numel()) : 1;
  int64_t differing = 0, first = -1;
  for (int64_t i = 0; i < x.numel(); ++i)
    if (std::memcmp(&x.bytes[i * width], &y.bytes[i * width], width) != 0) {
      if (first < 0) first = i;
      ++differing;
    }
  if (first < 0) return ::testing::AssertionSuccess();
  const std::vector<float> xv = x.as_f32(), yv = y.as_f32();
  return ::testing::AssertionFailure() << a.filename().string() << ": " << differing << " of " << x.numel()
                                       << " elements differ; the first at " << index_text(first, x.shape) << ": "
                                       << float_text(xv[first]) << " in " << a << " vs " << float_text(yv[first])
                                       << " in " << b;
}

inline ::testing::AssertionResult compare_text(const std::filesystem::path& a, const std::filesystem::path& b) {
  std::istringstream x(read_file(a)), y(read_file(b));
  std::string lx, ly;
  for (int line = 1;; ++line) {
    const bool gx = static_cast<bool>(std::getline(x, lx)), gy = static_cast<bool>(std::getline(y, ly));
    if (!gx && !gy) return ::testing::AssertionSuccess();
    if (gx != gy || lx != ly) {
      auto cut = [](const std::string& s) { return s.size() > 300 ? s.substr(0, 300) + "..." : s; };
      return ::testing::AssertionFailure() << a.filename().string() << ": line " << line << " differs:\n  " << a
                                           << ": " << (gx ? cut(lx) : "(end of file)") << "\n  " << b << ": "
                                           << (gy ? cut(ly) : "(end of file)");
    }
  }
}

}  // namespace detail

// Success when the two files hold the same bytes; otherwise the first
// difference, read the way the file's format reads.
inline ::testing::AssertionResult same_file(const std::filesystem::path& a, const std::filesystem::path& b) {
  for (const auto& p : {a, b})
    if (!std::filesystem::exists(p)) return ::testing::AssertionFailure() << p << " does not exist";
  const std::string x = read_file(a), y = read_file(b);
  if (x == y) return ::testing::AssertionSuccess();
  const std::string ext = a.extension().string();
  if (ext == ".npy") {
    auto r = detail::compare_npy(a, b);
    if (!r) return r;
  }
  if (ext == ".csv" || ext == ".json" || ext == ".txt" || ext == ".svg") {
    auto r = detail::compare_text(a, b);
    if (!r) return r;
  }
  std::size_t i = 0;
  while (i < x.size() && i < y.size() && x[i] == y[i]) ++i;
  return ::testing::AssertionFailure() << a.filename().string() << ": " << x.size() << " vs " << y.size()
                                       << " bytes, first difference at byte " << i << " (" << a << " vs " << b << ")";
}

}  // namespace kvscope::test
