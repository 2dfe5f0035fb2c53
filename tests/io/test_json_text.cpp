// JSON as kvscope writes it: nlohmann's layout byte for byte, numbers as the
// shortest decimal that reads back to the same value — floats by their own
// shortest form (0.2f -> 0.2), doubles by theirs.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>

#include "io/json_file.h"

namespace kvscope {
namespace {

// A short string that reads back to `v` as T, found without std::to_chars:
// printf's %.*e with the fewest significant digits that round-trip. What
// kvscope writes must be no longer than it.
template <class T>
std::string printf_shortest(T v) {
  for (int p = 1; p <= 17; ++p) {
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%.*e", p - 1, double(v));
    if (static_cast<T>(std::strtod(buf, nullptr)) == v && (sizeof(T) == 8 || std::strtof(buf, nullptr) == v))
      return buf;
  }
  return "";
}

// A number JSON readers take for a float, not an integer.
bool reads_as_float(const std::string& text) { return text.find_first_of(".e") != std::string::npos; }

TEST(JsonText, LaysOutLikeNlohmann) {
  const nlohmann::json j = {{"b", {1, 2, {{"x", nullptr}}}},
                            {"a", "tab\t quote\" back\\ nl\n ctl\x01 caf\xc3\xa9 \xe2\x86\x92"},
                            {"empty_object", nlohmann::json::object()},
                            {"empty_array", nlohmann::json::array()},
                            {"flags", {true, false}},
                            {"ints", {0, -7, 123456789012345LL, 18446744073709551615ULL}}};
  for (int indent : {-1, 0, 1, 2, 4}) EXPECT_EQ(json_text(j, indent), j.dump(indent)) << "indent " << indent;
  // Bytes that are not UTF-8: an error, or U+FFFD when asked.
  const nlohmann::json bad = {{"t", std::string("a\xff"
                                                "b")}};
  EXPECT_THROW((void)json_text(bad), nlohmann::json::exception);
  EXPECT_EQ(json_text(bad, 1, true), bad.dump(1, ' ', false, nlohmann::json::error_handler_t::replace));
}

TEST(JsonText, FloatsAreTheirShortestDecimal) {
  EXPECT_EQ(json_text(json_float(0.2f), -1), "0.2");
  EXPECT_EQ(json_text(nlohmann::json(double(0.2f)), -1), "0.20000000298023224")
      << "the float's exact value as a double";
  EXPECT_EQ(json_text({{"alpha", json_float(0.2f)}, {"tau", json_float(1.0f)}}, -1), "{\"alpha\":0.2,\"tau\":1.0}");
  EXPECT_EQ(json_text(json_float(-0.0f), -1), "-0.0");
  EXPECT_EQ(json_text(json_float(std::numeric_limits<float>::quiet_NaN()), -1), "null");
  // Every float class: normal, subnormal, large, tiny, random bit patterns.
  std::mt19937 rng(7);
  std::vector<float> values = {0.1f, 1.0f / 3, 3.4028235e38f, 1e-45f, 1.17549435e-38f, 16777216.0f, 123456.789f, 1e-5f};
  for (int i = 0; i < 20000; ++i) {
    const uint32_t bits = rng();
    float f;
    std::memcpy(&f, &bits, 4);
    if (std::isfinite(f)) values.push_back(f);
  }
  for (float f : values) {
    const std::string text = json_text(json_float(f), -1);
    // A reader parses a double and narrows it to float: the same float.
    const double back = nlohmann::json::parse(text).get<double>();
    ASSERT_EQ(static_cast<float>(back), f) << text;
    ASSERT_TRUE(reads_as_float(text)) << text;
    ASSERT_LE(text.size(), printf_shortest(f).size()) << text << " is longer than " << printf_shortest(f);
  }
}

TEST(JsonText, DoublesAreTheirShortestDecimal) {
  EXPECT_EQ(json_text(0.1 + 0.2, -1), "0.30000000000000004");
  EXPECT_EQ(json_text(0.5, -1), "0.5");
  EXPECT_EQ(json_text(3.0, -1), "3.0");
  EXPECT_EQ(json_text(1e300, -1), "1e+300");
  EXPECT_EQ(json_text(1e22, -1), "1e+22") << "not 10000000000000000000000.0";
  EXPECT_EQ(json_text(json_float(90282311680.0f), -1), "9.028231e+10");
  EXPECT_EQ(json_text(std::numeric_limits<double>::infinity(), -1), "null");
  std::mt19937_64 rng(11);
  for (int i = 0; i < 20000; ++i) {
    const uint64_t bits = rng();
    double d;
    std::memcpy(&d, &bits, 8);
    if (!std::isfinite(d)) continue;
    const std::string text = json_text(d, -1);
    ASSERT_EQ(nlohmann::json::parse(text).get<double>(), d) << text;
    ASSERT_TRUE(reads_as_float(text)) << text;
    ASSERT_LE(text.size(), printf_shortest(d).size()) << text << " is longer than " << printf_shortest(d);
  }
}

}  // namespace
}  // namespace kvscope
