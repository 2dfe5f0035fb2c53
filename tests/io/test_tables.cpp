// Table and colour writers: CSV quoting and atomic writes, and the colormap
// tables the figures and the app's shaders share.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "common/error.h"
#include "io/colormap.h"
#include "io/csv_writer.h"
#include "test_util.h"

namespace kvscope {
namespace {

namespace fs = std::filesystem;
using test::TempDir;

// A strict RFC 4180 reader (LF or CRLF record ends), for round trips.
std::vector<std::vector<std::string>> parse_csv(const std::string& text) {
  std::vector<std::vector<std::string>> rows(1, std::vector<std::string>(1));
  bool quoted = false, was_quoted = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    std::string& field = rows.back().back();
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') field += '"', ++i;
      else if (c == '"') quoted = false;
      else field += c;
    } else if (c == '"') {
      EXPECT_TRUE(field.empty() && !was_quoted) << "quote inside an unquoted field at byte " << i;
      quoted = was_quoted = true;
    } else if (c == ',') {
      rows.back().emplace_back(), was_quoted = false;
    } else if (c == '\n' || (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n')) {
      if (c == '\r') ++i;
      rows.emplace_back(1), was_quoted = false;
    } else {
      EXPECT_FALSE(was_quoted) << "text after a closing quote at byte " << i;
      field += c;
    }
  }
  EXPECT_FALSE(quoted) << "unterminated quoted field";
  if (rows.back().size() == 1 && rows.back()[0].empty()) rows.pop_back();  // after the last record end
  return rows;
}

bool dir_is_empty(const fs::path& dir) { return fs::directory_iterator(dir) == fs::directory_iterator(); }

TEST(Csv, QuotingRoundTrips) {
  const std::vector<std::string> fields = {"plain", "a,b", "say \"hi\"", "line\nbreak", "cr\rhere", "crlf\r\n",
                                           " padded ", "", "\"", ",", "tab\tok"};
  CsvTable t;
  t.header = {"policy, name", "budget", "nll"};
  for (std::size_t i = 0; i < fields.size(); ++i) t.add_row({fields[i], int64_t(i), double(i) / 3});
  const auto rows = parse_csv(to_csv(t));
  ASSERT_EQ(rows.size(), fields.size() + 1);
  EXPECT_EQ(rows[0], t.header);
  for (std::size_t i = 0; i < fields.size(); ++i) {
    ASSERT_EQ(rows[i + 1].size(), 3u);
    EXPECT_EQ(rows[i + 1][0], fields[i]);
    EXPECT_EQ(rows[i + 1][1], std::to_string(i));
  }
  EXPECT_EQ(csv_quote("plain"), "plain");
  EXPECT_EQ(csv_quote("a\"b"), "\"a\"\"b\"");
}

TEST(Csv, NumbersRoundTripAsFloat) {
  const float values[] = {0.1f, 1.0f / 3, 3.4028235e38f, 1.17549435e-38f, 1e-45f, -2.5f, 123456789.0f, 0.0f};
  for (float v : values) EXPECT_EQ(std::strtof(csv_number(v).c_str(), nullptr), v) << csv_number(v);
  EXPECT_EQ(csv_number(NAN), "nan");
  EXPECT_EQ(csv_number(-NAN), "nan");
  EXPECT_EQ(csv_number(INFINITY), "inf");
  EXPECT_EQ(csv_number(-INFINITY), "-inf");
  EXPECT_EQ(csv_cell(int64_t(-9007199254740993)), "-9007199254740993");
}

TEST(Csv, WritesFileAtomically) {
  TempDir dir;
  CsvTable t;
  t.header = {"x", "y"};
  t.add_row({int64_t(1), 0.5});
  t.add_row({std::string("two"), NAN});
  write_csv(dir / "t.csv", t);
  EXPECT_EQ(test::read_file(dir / "t.csv"), "x,y\n1,0.5\ntwo,nan\n");
}

TEST(Csv, RowLengthMustMatchHeader) {
  CsvTable t;
  t.header = {"a", "b"};
  EXPECT_THROW(t.add_row({int64_t(1)}), Error);
  t.rows.push_back({int64_t(1)});  // bypassing add_row: the writer checks too
  TempDir dir;
  try {
    write_csv(dir / "bad.csv", t);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("bad.csv"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("row 1"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(dir_is_empty(dir.path()));
}

TEST(Csv, FailedWriteLeavesNoFile) {
  TempDir dir;
  CsvTable t;
  t.header = {"a"};
  try {
    write_csv(dir / "no-such-dir" / "a.csv", t);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("a.csv"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(dir_is_empty(dir.path()));
}

// ---- colormaps ------------------------------------------------------------------

TEST(Colormap, KnownNamesAndErrors) {
  EXPECT_EQ(colormap_names(), (std::vector<std::string>{"viridis", "magma", "inferno", "gray", "coolwarm"}));
  EXPECT_EQ(colormap("viridis").table[0], (Rgb{68, 1, 84}));
  EXPECT_EQ(colormap("gray").table[255], (Rgb{255, 255, 255}));
  try {
    colormap("jet");
    FAIL() << "no error";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("jet"), std::string::npos) << m;
    for (const auto& n : colormap_names()) EXPECT_NE(m.find(n), std::string::npos) << m;
  }
  const Colormap& v = colormap("viridis");
  EXPECT_EQ(v.at(0), v.table[0]);
  EXPECT_EQ(v.at(1), v.table[255]);
  EXPECT_EQ(v.at(-3), v.table[0]);
  EXPECT_EQ(v.at(7), v.table[255]);
  EXPECT_EQ(v.at(0.5), v.table[128]);
}

// The compiled tables and assets/colormaps/*.csv come from one script and
// must agree.
TEST(Colormap, CompiledTablesMatchAssetFiles) {
  for (const auto& name : colormap_names()) {
    std::ifstream in(fs::path(KVSCOPE_SOURCE_DIR) / "assets" / "colormaps" / (name + ".csv"));
    ASSERT_TRUE(in) << name;
    const Colormap& cm = colormap(name);
    std::string line;
    int i = 0;
    while (std::getline(in, line)) {
      int r, g, b;
      ASSERT_EQ(std::sscanf(line.c_str(), "%d,%d,%d", &r, &g, &b), 3) << name << " line " << i;
      ASSERT_LT(i, 256);
      EXPECT_EQ(cm.table[i], (Rgb{uint8_t(r), uint8_t(g), uint8_t(b)})) << name << " entry " << i;
      ++i;
    }
    EXPECT_EQ(i, 256) << name;
  }
}

}  // namespace
}  // namespace kvscope
