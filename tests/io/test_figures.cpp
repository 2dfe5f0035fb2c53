// Figure and table writers: CSV quoting, PNG encoding, colormaps, the bitmap
// font, heatmap and line-chart layouts (checked through the pixels they
// promise), SVG structure, and that failed writes leave no file behind.
#include <stb_image.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

#include "common/error.h"
#include "io/bitmap_font.h"
#include "io/colormap.h"
#include "io/csv_writer.h"
#include "io/heatmap.h"
#include "io/image.h"
#include "io/line_chart.h"
#include "io/png_writer.h"
#include "io/svg_writer.h"
#include "test_util.h"

namespace kvscope {
namespace {

namespace fs = std::filesystem;
using test::TempDir;

// ---- helpers ------------------------------------------------------------------

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

Rgb pixel(const Image& img, int x, int y) {
  EXPECT_TRUE(x >= 0 && y >= 0 && x < img.width && y < img.height) << x << "," << y;
  return img.at(x, y);
}

Rgb centre(const Image& img, Rect r) { return pixel(img, r.x + r.w / 2, r.y + r.h / 2); }

std::ostream& operator<<(std::ostream& os, Rgb c) { return os << "rgb(" << +c.r << "," << +c.g << "," << +c.b << ")"; }

bool overlap(Rect a, Rect b) { return a.x < b.right() && b.x < a.right() && a.y < b.bottom() && b.y < a.bottom(); }

// Text stays inside the image and no two text items overlap.
void expect_clean_text(const std::vector<TextItem>& texts, int scale, int width, int height) {
  for (std::size_t i = 0; i < texts.size(); ++i) {
    const Rect a = text_item_box(texts[i], scale);
    EXPECT_TRUE(a.x >= 0 && a.y >= 0 && a.right() <= width && a.bottom() <= height)
        << "\"" << texts[i].text << "\" is clipped";
    for (std::size_t j = i + 1; j < texts.size(); ++j)
      EXPECT_FALSE(overlap(a, text_item_box(texts[j], scale))) << "\"" << texts[i].text << "\" overlaps \"" << texts[j].text << "\"";
  }
}

// Minimal XML structure check: declaration, balanced and properly nested
// tags, quoted attributes; returns the count of each element name.
std::map<std::string, int> check_xml(const std::string& xml) {
  std::map<std::string, int> count;
  std::vector<std::string> stack;
  std::size_t i = 0;
  EXPECT_EQ(xml.rfind("<?xml", 0), 0u);
  while ((i = xml.find('<', i)) != std::string::npos) {
    const std::size_t end = xml.find('>', i);
    if (end == std::string::npos) {
      ADD_FAILURE() << "unterminated tag at " << i;
      break;
    }
    std::string tag = xml.substr(i + 1, end - i - 1);
    i = end + 1;
    if (tag.starts_with("?")) continue;
    int quotes = 0;
    for (char c : tag) quotes += c == '"';
    EXPECT_EQ(quotes % 2, 0) << "unbalanced quotes in <" << tag << ">";
    if (tag.starts_with("/")) {
      const std::string name = tag.substr(1);
      if (stack.empty() || stack.back() != name) {
        ADD_FAILURE() << "</" << name << "> closes " << (stack.empty() ? "nothing" : "<" + stack.back() + ">");
        return count;
      }
      stack.pop_back();
      continue;
    }
    const bool self_closing = tag.ends_with("/");
    const std::string name = tag.substr(0, tag.find_first_of(" \n/"));
    ++count[name];
    if (!self_closing) stack.push_back(name);
  }
  EXPECT_TRUE(stack.empty()) << "unclosed <" << (stack.empty() ? "" : stack.back()) << ">";
  EXPECT_EQ(count["svg"], 1);
  return count;
}

int count_of(const std::string& text, const std::string& what) {
  int n = 0;
  for (std::size_t i = 0; (i = text.find(what, i)) != std::string::npos; i += what.size()) ++n;
  return n;
}

// An attention-like causal matrix: row i attends to keys 0..i (NaN after),
// softmax-normalised, with a heavy first token ("attention sink").
std::vector<float> causal_attention(int n, int offset = 0) {
  std::vector<float> m(std::size_t(n) * n, NAN);
  for (int i = 0; i < n; ++i) {
    double sum = 0;
    std::vector<double> w(i + 1);
    for (int j = 0; j <= i; ++j) {
      w[j] = std::exp(-0.15 * (i - j) + 1.5 * std::sin(0.7 * j + offset) * std::cos(0.3 * i)) + (j == 0 ? 6.0 : 0.0);
      sum += w[j];
    }
    for (int j = 0; j <= i; ++j) m[std::size_t(i) * n + j] = float(w[j] / sum);
  }
  return m;
}

// ---- CSV ----------------------------------------------------------------------

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

// ---- PNG ----------------------------------------------------------------------

uint32_t be32(const std::string& s, std::size_t at) {
  return uint32_t(uint8_t(s[at])) << 24 | uint32_t(uint8_t(s[at + 1])) << 16 | uint32_t(uint8_t(s[at + 2])) << 8 |
         uint8_t(s[at + 3]);
}

TEST(Png, SignatureHeaderAndPixelsRoundTrip) {
  for (int channels : {3, 4}) {
    const int w = 37, h = 11;
    std::vector<uint8_t> px(std::size_t(w) * h * channels);
    for (std::size_t i = 0; i < px.size(); ++i) px[i] = uint8_t((i * 97 + i / 7) & 0xff);
    TempDir dir;
    const fs::path path = dir / "x.png";
    write_png(path, px, w, h, channels);
    const std::string bytes = test::read_file(path);
    ASSERT_GT(bytes.size(), 33u);
    EXPECT_EQ(bytes.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
    EXPECT_EQ(be32(bytes, 8), 13u);  // IHDR length
    EXPECT_EQ(bytes.substr(12, 4), "IHDR");
    EXPECT_EQ(be32(bytes, 16), uint32_t(w));
    EXPECT_EQ(be32(bytes, 20), uint32_t(h));
    EXPECT_EQ(uint8_t(bytes[24]), 8);                            // bit depth
    EXPECT_EQ(uint8_t(bytes[25]), channels == 3 ? 2 : 6);        // colour type RGB / RGBA
    int dw = 0, dh = 0, dc = 0;
    uint8_t* decoded = stbi_load_from_memory(reinterpret_cast<const stbi_uc*>(bytes.data()), int(bytes.size()), &dw,
                                             &dh, &dc, channels);
    ASSERT_NE(decoded, nullptr);
    EXPECT_EQ(dw, w);
    EXPECT_EQ(dh, h);
    EXPECT_EQ(dc, channels);
    EXPECT_TRUE(std::equal(px.begin(), px.end(), decoded));
    stbi_image_free(decoded);
  }
}

TEST(Png, ImageOverloadWritesRgb) {
  Image img(5, 4, {1, 2, 3});
  img.set(4, 3, {200, 100, 50});
  TempDir dir;
  write_png(dir / "i.png", img);
  const std::string bytes = test::read_file(dir / "i.png");
  int w, h, c;
  uint8_t* d = stbi_load_from_memory(reinterpret_cast<const stbi_uc*>(bytes.data()), int(bytes.size()), &w, &h, &c, 3);
  ASSERT_NE(d, nullptr);
  EXPECT_TRUE(std::equal(img.pixels.begin(), img.pixels.end(), d));
  stbi_image_free(d);
}

// ---- failed writes ---------------------------------------------------------------

template <typename F>
void expect_error_naming(const std::string& name, F write) {
  try {
    write();
    ADD_FAILURE() << "no error for " << name;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
  }
}

TEST(Writers, LeaveNoFileWhenTheyThrow) {
  TempDir dir;
  const fs::path missing = dir / "no-such-dir";
  const std::vector<uint8_t> px(3 * 4 * 4, 0);
  CsvTable t;
  t.header = {"a"};
  const std::vector<LineSeries> series = {{"s", {0, 1}, {0, 1}}};
  const std::vector<float> m(4, 1.0f);

  expect_error_naming("a.png", [&] { write_png(missing / "a.png", px, 4, 4, 3); });
  expect_error_naming("a.csv", [&] { write_csv(missing / "a.csv", t); });
  expect_error_naming("a.svg", [&] { write_line_chart_svg(missing / "a.svg", series, {}); });
  expect_error_naming("h.svg", [&] { write_heatmap_svg(missing / "h.svg", m, 2, 2, {}); });
  EXPECT_FALSE(fs::exists(missing));
  // Invalid content into a directory that exists: nothing appears there.
  expect_error_naming("b.png", [&] { write_png(dir / "b.png", px, 4, 4, 2); });
  expect_error_naming("c.png", [&] { write_png(dir / "c.png", px, 5, 4, 3); });
  const std::vector<float> big(257 * 256, 0.5f);
  expect_error_naming("big.svg", [&] { write_heatmap_svg(dir / "big.svg", big, 257, 256, {}); });
  const std::vector<LineSeries> bad = {{"s", {0, 1, 2}, {0, 1}}};
  expect_error_naming("bad.svg", [&] { write_line_chart_svg(dir / "bad.svg", bad, {}); });
  EXPECT_TRUE(dir_is_empty(dir.path()));
}

TEST(Writers, SvgRefusesLargeHeatmapsSuggestingPng) {
  const std::vector<float> big(300 * 300, 0.5f);
  try {
    heatmap_svg(big, 300, 300, {});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("PNG"), std::string::npos) << e.what();
  }
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

// ---- font -----------------------------------------------------------------------

TEST(Font, EveryPrintableCharacterStaysInItsBox) {
  for (int scale : {1, 2, 3}) {
    for (int c = 32; c <= 126; ++c) {
      const std::string s(1, char(c));
      const int w = text_width(s, scale), h = text_height(scale);
      Image img(w + 20, h + 20, kWhite);
      draw_text(img, 10, 10, s, kBlack, scale);
      int inked = 0;
      for (int y = 0; y < img.height; ++y)
        for (int x = 0; x < img.width; ++x)
          if (img.at(x, y) != kWhite) {
            ++inked;
            EXPECT_TRUE(x >= 10 && x < 10 + w && y >= 10 && y < 10 + h) << "'" << s << "' at scale " << scale;
          }
      EXPECT_EQ(inked > 0, c != ' ') << "'" << s << "'";
      // Rotated text: a text_height() x text_width() box.
      Image up(h + 20, w + 20, kWhite);
      draw_text_up(up, 10, 10, s, kBlack, scale);
      for (int y = 0; y < up.height; ++y)
        for (int x = 0; x < up.width; ++x)
          if (up.at(x, y) != kWhite) EXPECT_TRUE(x >= 10 && x < 10 + h && y >= 10 && y < 10 + w) << "'" << s << "' up";
    }
  }
}

TEST(Font, GlyphsAreDistinctAndDigitsTabular) {
  std::map<std::string, char> seen;
  for (int c = 33; c <= 126; ++c) {
    const auto& g = bitmap_font::glyph(char(c));
    std::string key(g.rows.begin(), g.rows.end());
    key += char(g.width);
    EXPECT_TRUE(seen.emplace(key, char(c)).second) << "'" << char(c) << "' looks like '" << seen[key] << "'";
  }
  for (char d = '0'; d <= '9'; ++d) EXPECT_EQ(bitmap_font::glyph(d).advance, bitmap_font::glyph('0').advance);
  EXPECT_EQ(&bitmap_font::glyph('\x01'), &bitmap_font::glyph('?'));
  EXPECT_EQ(text_width("", 2), 0);
}

// ---- ticks ------------------------------------------------------------------------

TEST(Ticks, NiceStepsAndLabels) {
  EXPECT_DOUBLE_EQ(nice_step(100, 5), 20);
  EXPECT_DOUBLE_EQ(nice_step(1, 10), 0.1);
  EXPECT_DOUBLE_EQ(nice_step(0.9, 4), 0.5);
  EXPECT_DOUBLE_EQ(nice_step(7, 3), 5);
  EXPECT_EQ(ticks_in(-0.1, 0.35, 0.1), (std::vector<double>{-0.1, 0, 0.1, 0.2, 0.30000000000000004}));
  EXPECT_EQ(tick_label(0.30000000000000004, 0.1), "0.3");
  EXPECT_EQ(tick_label(20, 20), "20");
  EXPECT_EQ(tick_label(0.05, 0.05), "0.05");
  using Labels = std::vector<std::pair<std::string, std::string>>;
  EXPECT_EQ(decade_labels({-2, 0, 3}), (Labels{{"0.01", ""}, {"1", ""}, {"1000", ""}}));
  EXPECT_EQ(decade_labels({-6, -3, 0}), (Labels{{"10", "-6"}, {"10", "-3"}, {"10", "0"}}));
}

// ---- heatmap ------------------------------------------------------------------------

TEST(Heatmap, MinimumAndMaximumGetTheColormapEnds) {
  const int rows = 6, cols = 9;
  std::vector<float> m(rows * cols);
  for (int i = 0; i < rows * cols; ++i) m[i] = std::sin(0.37f * i) * 3 + 0.5f;
  const auto [mn, mx] = std::minmax_element(m.begin(), m.end());
  HeatmapOptions opt;
  opt.title = "test";
  opt.colormap = "magma";
  const Heatmap h = render_heatmap(m, rows, cols, opt);
  const Colormap& cm = colormap("magma");
  const int imin = int(mn - m.begin()), imax = int(mx - m.begin());
  const Rect rmin = h.layout.cell_rect(imin / cols, imin % cols), rmax = h.layout.cell_rect(imax / cols, imax % cols);
  EXPECT_EQ(centre(h.image, rmin), cm.table[0]);
  EXPECT_EQ(centre(h.image, rmax), cm.table[255]);
  // Every pixel of a cell has the cell's colour.
  for (int y = rmax.y; y < rmax.bottom(); ++y)
    for (int x = rmax.x; x < rmax.right(); ++x) EXPECT_EQ(h.image.at(x, y), cm.table[255]);
  // The colorbar runs from the last entry (top) to the first (bottom).
  const Rect& B = h.layout.colorbar;
  EXPECT_EQ(centre(h.image, {B.x, B.y, B.w, 1}), cm.table[255]);
  EXPECT_EQ(centre(h.image, {B.x, B.bottom() - 1, B.w, 1}), cm.table[0]);
  EXPECT_EQ(h.layout.colorbar_row(*mx), B.y);
  EXPECT_EQ(h.layout.colorbar_row(*mn), B.bottom() - 1);
  // A value's colour on the bar is the colour of its cells.
  const int k = 17;
  EXPECT_EQ(centre(h.image, {B.x, h.layout.colorbar_row(m[k]), B.w, 1}),
            centre(h.image, h.layout.cell_rect(k / cols, k % cols)));
  expect_clean_text(h.layout.texts, h.layout.font_scale, h.image.width, h.image.height);
}

TEST(Heatmap, ExplicitRangeClamps) {
  const std::vector<float> m = {-5, 0, 0.5, 1, 9, 0.25};
  HeatmapOptions opt;
  opt.vmin = 0;
  opt.vmax = 1;
  const Heatmap h = render_heatmap(m, 2, 3, opt);
  const Colormap& cm = colormap("viridis");
  EXPECT_EQ(centre(h.image, h.layout.cell_rect(0, 0)), cm.table[0]);
  EXPECT_EQ(centre(h.image, h.layout.cell_rect(0, 1)), cm.table[0]);
  EXPECT_EQ(centre(h.image, h.layout.cell_rect(0, 2)), cm.at(0.5));
  EXPECT_EQ(centre(h.image, h.layout.cell_rect(1, 0)), cm.table[255]);
  EXPECT_EQ(centre(h.image, h.layout.cell_rect(1, 1)), cm.table[255]);
  EXPECT_EQ(centre(h.image, h.layout.cell_rect(1, 2)), cm.at(0.25));
}

TEST(Heatmap, LogScaleSpacesDecadesEqually) {
  const std::vector<float> m = {1e-5f, 1e-4f, 1e-3f, 1e-2f, 1e-1f, 1.0f, 0.0f, -1.0f};
  HeatmapOptions opt;
  opt.scale = HeatmapScale::log;
  opt.log_floor = 1e-5;
  const Heatmap h = render_heatmap(m, 2, 4, opt);
  const HeatmapLayout& L = h.layout;
  EXPECT_NEAR(L.vmin, 1e-5, 1e-12);
  EXPECT_NEAR(L.vmax, 1.0, 1e-6);
  ASSERT_EQ(L.colorbar_ticks.size(), 6u);
  for (std::size_t i = 0; i < 6; ++i) EXPECT_NEAR(std::log10(L.colorbar_ticks[i].value), -5.0 + double(i), 1e-9);
  const double spacing = double(L.colorbar_ticks[0].pos - L.colorbar_ticks[5].pos) / 5;
  EXPECT_GT(spacing, 10);
  for (std::size_t i = 0; i < 6; ++i)
    EXPECT_NEAR(L.colorbar_ticks[i].pos, L.colorbar_ticks[0].pos - spacing * double(i), 1.0) << i;
  EXPECT_EQ(L.colorbar_ticks[0].pos, L.colorbar.bottom() - 1);
  EXPECT_EQ(L.colorbar_ticks[5].pos, L.colorbar.y);
  // Cells: each decade a fifth further along the colormap; zero and
  // negatives clamp to the floor.
  const Colormap& cm = colormap("viridis");
  for (int k = 0; k < 6; ++k) EXPECT_EQ(centre(h.image, L.cell_rect(k / 4, k % 4)), cm.at(k / 5.0)) << k;
  EXPECT_EQ(centre(h.image, L.cell_rect(1, 2)), cm.table[0]);
  EXPECT_EQ(centre(h.image, L.cell_rect(1, 3)), cm.table[0]);
  // Labels are the decades.
  std::vector<std::string> labels;
  for (const auto& t : L.colorbar_ticks) labels.push_back(t.label + "^" + t.sup);
  EXPECT_EQ(labels, (std::vector<std::string>{"10^-5", "10^-4", "10^-3", "10^-2", "10^-1", "10^0"}));
}

TEST(Heatmap, NanCellsGetTheNanColour) {
  const int n = 5;
  std::vector<float> m(n * n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) m[i * n + j] = j <= i ? float(i + j) : NAN;
  HeatmapOptions opt;
  opt.nan_color = {201, 202, 203};
  const Heatmap h = render_heatmap(m, n, n, opt);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      const Rgb c = centre(h.image, h.layout.cell_rect(i, j));
      if (j > i) EXPECT_EQ(c, opt.nan_color) << i << "," << j;
      else EXPECT_NE(c, opt.nan_color) << i << "," << j;
    }
  EXPECT_EQ(h.layout.vmin, 0);
  EXPECT_EQ(h.layout.vmax, 8);
}

TEST(Heatmap, OverlayMarksAreVisible) {
  const int n = 12;
  std::vector<float> m(n * n, 0.5f);
  std::vector<uint8_t> ov(n * n, kOverlayKept);
  ov[3 * n + 4] = kOverlayEvicted;
  ov[5 * n + 6] = kOverlayEvictedNow;
  for (int j = 0; j < 3; ++j) ov[8 * n + j] = kOverlayProtected;  // a 1x3 protected block
  for (auto style : {EvictedStyle::hatch, EvictedStyle::dim}) {
    HeatmapOptions opt;
    opt.vmin = 0;
    opt.vmax = 1;
    opt.evicted_style = style;
    const Heatmap h = render_heatmap(m, n, n, opt, ov);
    const HeatmapLayout& L = h.layout;
    const Rgb base = colormap("viridis").at(0.5);
    auto changed = [&](Rect r) {
      int k = 0;
      for (int y = r.y; y < r.bottom(); ++y)
        for (int x = r.x; x < r.right(); ++x) k += h.image.at(x, y) != base;
      return k;
    };
    EXPECT_EQ(changed(L.cell_rect(0, 0)), 0);  // kept: untouched
    const Rect ev = L.cell_rect(3, 4), now = L.cell_rect(5, 6);
    EXPECT_GE(changed(ev), ev.w * ev.h / 8);
    EXPECT_GT(changed(now), 0);
    // The protected block is framed as one region: outer edges drawn,
    // inner edges between its cells not.
    const Rect p0 = L.cell_rect(8, 0), p1 = L.cell_rect(8, 1);
    EXPECT_EQ(h.image.at(p0.x, p0.y + p0.h / 2), opt.protected_color);       // left edge
    EXPECT_EQ(h.image.at(p1.x + p1.w / 2, p1.y), opt.protected_color);       // top edge
    EXPECT_EQ(h.image.at(p1.x, p1.y + p1.h / 2), base);                      // between cells 0 and 1
    EXPECT_EQ(centre(h.image, p1), base);
    // Legend lists the three marks.
    EXPECT_EQ(L.legend.size(), 3u);
    expect_clean_text(L.texts, L.font_scale, h.image.width, h.image.height);
  }
  std::vector<uint8_t> short_overlay(3);
  EXPECT_THROW(render_heatmap(m, n, n, {}, short_overlay), Error);
}

TEST(Heatmap, RejectsBadInput) {
  const std::vector<float> m(6, 1.0f);
  EXPECT_THROW(layout_heatmap(m, 2, 2, {}), Error);
  EXPECT_THROW(layout_heatmap(m, 0, 6, {}), Error);
  HeatmapOptions opt;
  opt.colormap = "nope";
  EXPECT_THROW(layout_heatmap(m, 2, 3, opt), Error);
  opt = {};
  opt.vmin = 2;
  opt.vmax = 1;
  EXPECT_THROW(layout_heatmap(m, 2, 3, opt), Error);
}

TEST(Heatmap, SmallMatricesAreScaledUp) {
  const std::vector<float> m(4 * 4, 1.0f);
  const HeatmapLayout L = layout_heatmap(m, 4, 4, {});
  EXPECT_EQ(L.cell_w, 128);
  EXPECT_EQ(L.cell_h, 128);
  // A thin matrix keeps its short side readable.
  const std::vector<float> thin(2 * 512, 1.0f);
  const HeatmapLayout T = layout_heatmap(thin, 2, 512, {});
  EXPECT_EQ(T.cell_w, 1);
  EXPECT_GE(T.cell_h * 2, 128);
}

TEST(Heatmap, GridSharesRangeAndColorbar) {
  const int n = 16;
  std::vector<std::vector<float>> data;
  std::vector<HeatmapPanel> panels;
  for (int p = 0; p < 8; ++p) data.push_back(causal_attention(n, p));
  data[5][0] = 2.0f;  // the maximum lives in one panel only
  for (int p = 0; p < 8; ++p) panels.push_back({data[p], {}, "L2 H" + std::to_string(p)});
  HeatmapOptions opt;
  opt.title = "layer 2";
  const Heatmap h = render_heatmap_grid(panels, n, n, 4, opt);
  const HeatmapLayout& L = h.layout;
  ASSERT_EQ(L.panels.size(), 8u);
  EXPECT_FLOAT_EQ(float(L.vmax), 2.0f);
  for (std::size_t a = 0; a < 8; ++a)
    for (std::size_t b = a + 1; b < 8; ++b) EXPECT_FALSE(overlap(L.panels[a], L.panels[b])) << a << " " << b;
  EXPECT_EQ(L.panels[0].y, L.panels[3].y);
  EXPECT_GT(L.panels[4].y, L.panels[0].bottom());
  EXPECT_EQ(centre(h.image, L.cell_rect(0, 0, 5)), colormap("viridis").table[255]);
  int titles = 0;
  for (const auto& t : L.texts) titles += t.text.starts_with("L2 H");
  EXPECT_EQ(titles, 8);
  expect_clean_text(L.texts, L.font_scale, h.image.width, h.image.height);
  EXPECT_THROW(render_heatmap_grid(std::span<const HeatmapPanel>(), n, n, 4, opt), Error);
}

// ---- line chart -----------------------------------------------------------------------

std::vector<LineSeries> sweep_series() {
  const std::vector<double> budget = {10, 20, 30, 50, 70, 100};
  return {{"h2o", budget, {0.52, 0.71, 0.80, 0.88, 0.92, 0.95}},
          {"tova", budget, {0.48, 0.69, 0.79, 0.87, 0.93, 0.95}},
          {"window", budget, {0.21, 0.35, 0.49, 0.68, 0.83, 0.95}}};
}

TEST(LineChart, DataPointsLandWhereTheAxesSay) {
  const auto series = sweep_series();
  LineChartOptions opt;
  opt.title = "accuracy vs KV budget";
  opt.x_label = "KV budget (%)";
  opt.y_label = "accuracy";
  const LineChart c = render_line_chart(series, opt);
  const LineChartLayout& L = c.layout;
  // Ranges contain the data and end on ticks; ticks are a 1/2/5 step.
  EXPECT_LE(L.x_lo, 10);
  EXPECT_GE(L.x_hi, 100);
  EXPECT_LE(L.y_lo, 0.21);
  EXPECT_GE(L.y_hi, 0.95);
  ASSERT_GE(L.x_ticks.size(), 3u);
  ASSERT_GE(L.y_ticks.size(), 3u);
  EXPECT_DOUBLE_EQ(L.x_ticks.front().value, L.x_lo);
  EXPECT_DOUBLE_EQ(L.x_ticks.back().value, L.x_hi);
  for (const auto& t : L.x_ticks) EXPECT_EQ(t.pos, int(std::floor(L.x_to_px(t.value))));
  for (const auto& t : L.y_ticks) EXPECT_EQ(t.pos, int(std::floor(L.y_to_px(t.value))));
  // The mapping is affine and inside the plot.
  EXPECT_GT(L.x_to_px(L.x_lo), L.plot.x);
  EXPECT_LT(L.x_to_px(L.x_hi), L.plot.right());
  EXPECT_LT(L.y_to_px(L.y_hi), L.y_to_px(L.y_lo));
  EXPECT_NEAR(L.x_to_px(55), (L.x_to_px(10) + L.x_to_px(100)) / 2, 1e-9);
  // The last series drawn is on top at its own points (first points of
  // the others differ).
  const std::size_t last = series.size() - 1;
  for (std::size_t i = 0; i < series[last].x.size() - 1; ++i) {
    const int px = int(std::floor(L.x_to_px(series[last].x[i]))), py = int(std::floor(L.y_to_px(series[last].y[i])));
    EXPECT_EQ(c.image.at(px, py), series_color(last)) << "point " << i;
  }
  const int qx = int(std::floor(L.x_to_px(10))), qy = int(std::floor(L.y_to_px(0.52)));
  EXPECT_EQ(c.image.at(qx, qy), series_color(0));
  EXPECT_EQ(L.legend.size(), 3u);
  expect_clean_text(L.texts, L.font_scale, c.image.width, c.image.height);
}

TEST(LineChart, LogYUsesDecades) {
  std::vector<LineSeries> s = {{"kl", {1, 2, 3, 4}, {0.003, 0.02, 0.4, 0}}};
  LineChartOptions opt;
  opt.log_y = true;
  const LineChartLayout L = layout_line_chart(s, opt);
  EXPECT_NEAR(L.y_lo, 1e-3, 1e-15);
  EXPECT_NEAR(L.y_hi, 1.0, 1e-12);
  ASSERT_EQ(L.y_ticks.size(), 4u);
  const double d = L.y_ticks[0].pos - L.y_ticks[1].pos;
  for (std::size_t i = 1; i < 4; ++i) EXPECT_NEAR(L.y_ticks[i - 1].pos - L.y_ticks[i].pos, d, 1.0);
  EXPECT_TRUE(std::isnan(L.y_to_px(0)));
  EXPECT_FALSE(L.visible(4, 0));
  EXPECT_THROW(layout_line_chart(s, LineChartOptions{.log_y = true, .y_min = 0.0}), Error);
}

TEST(LineChart, ExplicitRangesAndErrors) {
  const auto series = sweep_series();
  LineChartOptions opt;
  opt.x_min = 0;
  opt.x_max = 100;
  opt.y_min = 0;
  opt.y_max = 1;
  const LineChartLayout L = layout_line_chart(series, opt);
  EXPECT_EQ(L.x_lo, 0);
  EXPECT_EQ(L.x_hi, 100);
  EXPECT_EQ(L.y_lo, 0);
  EXPECT_EQ(L.y_hi, 1);
  opt.width = 60;
  EXPECT_THROW(layout_line_chart(series, opt), Error);
  EXPECT_NO_THROW(render_line_chart(std::vector<LineSeries>{}, {}));  // empty chart: axes only
}

// ---- SVG -----------------------------------------------------------------------------

TEST(Svg, LineChartIsWellFormedWithOnePolylinePerSeries) {
  const auto series = sweep_series();
  LineChartOptions opt;
  opt.title = "A & B <test>";
  opt.x_label = "KV budget (%)";
  const std::string svg = line_chart_svg(series, opt);
  auto count = check_xml(svg);
  EXPECT_EQ(count["polyline"], int(series.size()));
  EXPECT_EQ(count_of(svg, "A &amp; B &lt;test&gt;"), 1);
  for (std::size_t i = 0; i < series.size(); ++i) {
    char color[8];
    const Rgb c = series_color(i);
    std::snprintf(color, sizeof(color), "#%02x%02x%02x", c.r, c.g, c.b);
    EXPECT_GE(count_of(svg, std::string("stroke=\"") + color + "\""), 2) << "line and legend of series " << i;
  }
  // Same layout as the PNG: the first polyline starts at the first point.
  const LineChartLayout L = layout_line_chart(series, opt);
  const std::size_t at = svg.find("points=\"");
  ASSERT_NE(at, std::string::npos);
  double x = 0, y = 0;
  ASSERT_EQ(std::sscanf(svg.c_str() + at, "points=\"%lf,%lf", &x, &y), 2);
  EXPECT_NEAR(x, L.x_to_px(10), 0.006);
  EXPECT_NEAR(y, L.y_to_px(0.52), 0.006);
}

TEST(Svg, HeatmapIsWellFormed) {
  const int n = 20;
  const auto m = causal_attention(n);
  std::vector<uint8_t> ov(n * n, kOverlayKept);
  ov[5 * n + 2] = kOverlayEvicted;
  ov[9 * n + 0] = kOverlayProtected;
  HeatmapOptions opt;
  opt.title = "L0 H0";
  opt.scale = HeatmapScale::log;
  const std::string svg = heatmap_svg(m, n, n, opt, ov);
  auto count = check_xml(svg);
  EXPECT_GT(count["rect"], n);
  EXPECT_GE(count_of(svg, "url(#evicted)"), 2);  // the cell and its legend swatch
  EXPECT_EQ(count["pattern"], 2);
}

// ---- sample figures -------------------------------------------------------------------

// Writes the sample figures a reviewer looks at, when KVSCOPE_FIGURE_DIR
// names a directory (skipped otherwise).
TEST(Figures, WriteSamples) {
  const char* env = std::getenv("KVSCOPE_FIGURE_DIR");
  if (!env || !*env) GTEST_SKIP() << "set KVSCOPE_FIGURE_DIR to write sample figures";
  const fs::path dir = env;
  fs::create_directories(dir);
  const int n = 64;
  const auto attn = causal_attention(n);
  std::vector<uint8_t> ov(n * n, kOverlayKept);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j <= i; ++j) {
      if (j < 4 || j > i - 8) ov[i * n + j] = kOverlayProtected;            // sinks + recent window
      else if (i >= 32 && (j * 7 + 3) % 5 < 2) ov[i * n + j] = j % 9 == 0 && i % 6 == 0 ? kOverlayEvictedNow : kOverlayEvicted;
    }
  HeatmapOptions opt;
  opt.title = "Layer 2, head 5 - H2O, budget 50%";
  opt.value_label = "attention weight";
  opt.x_first = 100;
  write_png(dir / "heatmap_linear.png", render_heatmap(attn, n, n, opt, ov).image);
  opt.scale = HeatmapScale::log;
  opt.colormap = "magma";
  write_png(dir / "heatmap_log.png", render_heatmap(attn, n, n, opt, ov).image);
  opt.evicted_style = EvictedStyle::dim;
  opt.colormap = "inferno";
  write_png(dir / "heatmap_log_dim.png", render_heatmap(attn, n, n, opt, ov).image);
  write_heatmap_svg(dir / "heatmap_log.svg", attn, n, n, opt, ov);

  std::vector<std::vector<float>> heads;
  std::vector<HeatmapPanel> panels;
  for (int h = 0; h < 8; ++h) heads.push_back(causal_attention(32, h));
  for (int h = 0; h < 8; ++h) panels.push_back({heads[h], {}, "L2 H" + std::to_string(h)});
  HeatmapOptions gopt;
  gopt.title = "Layer 2, all heads";
  gopt.value_label = "attention weight";
  gopt.scale = HeatmapScale::log;
  write_png(dir / "heatmap_grid.png", render_heatmap_grid(panels, 32, 32, 4, gopt).image);

  LineChartOptions lopt;
  lopt.title = "Accuracy vs KV budget";
  lopt.x_label = "KV budget (%)";
  lopt.y_label = "accuracy";
  const auto series = sweep_series();
  write_png(dir / "line_chart.png", render_line_chart(series, lopt).image);
  write_line_chart_svg(dir / "line_chart.svg", series, lopt);
  std::vector<LineSeries> kl = {{"h2o", {10, 20, 30, 50, 70, 100}, {0.9, 0.3, 0.12, 0.03, 0.008, 0.0004}},
                                {"window", {10, 20, 30, 50, 70, 100}, {2.5, 1.4, 0.8, 0.2, 0.05, 0.0004}}};
  LineChartOptions kopt{.title = "KL to the full cache", .x_label = "KV budget (%)", .y_label = "KL (nats)", .log_y = true};
  write_png(dir / "line_chart_log.png", render_line_chart(kl, kopt).image);

  Image font(760, 140, kWhite);
  std::string all;
  for (int c = 32; c <= 126; ++c) all += char(c);
  draw_text(font, 10, 10, all.substr(0, 48), kBlack, 2);
  draw_text(font, 10, 40, all.substr(48), kBlack, 2);
  draw_text(font, 10, 80, "The quick brown fox jumps over the lazy dog: 0.125, 1e-3", kBlack, 2);
  draw_text(font, 10, 110, "Layer 2 head 5 - key position", kBlack, 1);
  write_png(dir / "font.png", font);
}

}  // namespace
}  // namespace kvscope
