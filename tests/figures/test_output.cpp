// Output formats and the pieces around the figures: PNG size follows the
// DPI, SVG and PDF keep text (glyph references; the PDF's fonts and Unicode
// maps) and embed one image for the cells, so a 2048 x 2048 heatmap stays
// small; failed writes leave nothing; format, DPI, range and style names.
#include <gtest/gtest.h>
#include <zlib.h>

#include <cmath>
#include <cstdlib>
#include <set>

#include "common/error.h"
#include "figure_test_util.h"
#include "figures/color_scale.h"
#include "figures/heatmap.h"
#include "figures/text.h"
#include "figures/ticks.h"
#include "test_util.h"

namespace kvscope {
namespace {

namespace fs = std::filesystem;

HeatmapData attention(int rows, int cols, bool labels) {
  HeatmapData d;
  d.rows = rows;
  d.cols = cols;
  d.values = test::causal_attention(rows, cols);
  if (labels) {
    for (int j = 0; j < cols; ++j) d.col_labels.push_back(" w" + std::to_string(j));
    for (int i = 0; i < rows; ++i) d.row_labels.push_back(" q" + std::to_string(i));
  }
  return d;
}

HeatmapFigureOptions options(const std::string& title) {
  HeatmapFigureOptions o;
  o.title = title;
  o.scale = {ScaleKind::linear, 0, 1};
  return o;
}

int count_of(const std::string& text, const std::string& what) {
  int n = 0;
  for (std::size_t i = 0; (i = text.find(what, i)) != std::string::npos; i += what.size()) ++n;
  return n;
}

// Every FlateDecode stream of a PDF, inflated.
std::vector<std::string> pdf_streams(const std::string& pdf) {
  std::vector<std::string> out;
  for (std::size_t at = 0; (at = pdf.find("stream", at)) != std::string::npos;) {
    std::size_t start = at + 6;
    if (pdf.compare(at - 3, 3, "end") == 0) {  // "endstream"
      at = start;
      continue;
    }
    if (pdf[start] == '\r') ++start;
    if (pdf[start] == '\n') ++start;
    const std::size_t end = pdf.find("endstream", start);
    if (end == std::string::npos) break;
    std::string inflated(1 << 22, '\0');
    uLongf len = inflated.size();
    if (uncompress(reinterpret_cast<Bytef*>(inflated.data()), &len, reinterpret_cast<const Bytef*>(pdf.data() + start),
                   end - start) == Z_OK)
      out.push_back(inflated.substr(0, len));
    at = end + 9;
  }
  return out;
}

// The Unicode characters a PDF's ToUnicode maps name (bfchar entries and
// single-character bfrange starts), as UTF-16 code units.
std::set<unsigned> pdf_unicode(const std::string& pdf) {
  std::set<unsigned> out;
  for (const auto& s : pdf_streams(pdf)) {
    if (s.find("begincmap") == std::string::npos) continue;
    for (std::size_t at = 0; (at = s.find("beginbfchar", at)) != std::string::npos;) {
      const std::size_t end = s.find("endbfchar", at);
      std::size_t p = at;
      while ((p = s.find('<', p)) != std::string::npos && p < end) {
        const std::size_t q = s.find('>', p);
        const std::size_t r = s.find('<', q);
        const std::size_t t = s.find('>', r);
        const std::string dst = s.substr(r + 1, t - r - 1);
        for (std::size_t k = 0; k + 4 <= dst.size(); k += 4) out.insert(std::stoul(dst.substr(k, 4), nullptr, 16));
        p = t + 1;
      }
      at = end;
    }
  }
  return out;
}

TEST(Output, PngSizeFollowsTheDpi) {
  const HeatmapData d = attention(8, 40, true);
  test::TempDir dir;
  write_heatmap(dir / "a", d, options("dpi"), {{FigureFormat::png}, 72});
  write_heatmap(dir / "b", d, options("dpi"), {{FigureFormat::png}, 216});
  const Raster a = test::read_png(dir / "a.png"), b = test::read_png(dir / "b.png");
  const HeatmapLayout L = layout_heatmap(d, options("dpi"));
  EXPECT_EQ(a.width, pixels_for(L.size.width, 72));
  EXPECT_EQ(b.width, pixels_for(L.size.width, 216));
  EXPECT_NEAR(double(b.width) / a.width, 3.0, 0.01);
  EXPECT_NEAR(double(b.height) / a.height, 3.0, 0.01);
}

TEST(Output, SvgAndPdfKeepTheTextAndOneImageForTheCells) {
  const HeatmapData d = attention(8, 40, true);
  test::TempDir dir;
  const std::string title = "Quixotic zebra jumps";
  const auto files = write_heatmap(dir / "h", d, options(title), {{FigureFormat::svg, FigureFormat::pdf}, 150});
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(files[0].extension(), ".svg");
  EXPECT_EQ(files[1].extension(), ".pdf");
  const std::string svg = test::read_file(dir / "h.svg");
  EXPECT_EQ(svg.rfind("<?xml", 0), 0u);
  // Text stays text (figures/svg_text.h): no glyph outlines, a <text> per
  // label run, the title whole, in the figure's font and size.
  EXPECT_EQ(count_of(svg, "<symbol"), 0);
  EXPECT_EQ(count_of(svg, "#glyph"), 0);
  EXPECT_GT(count_of(svg, "<text "), 48) << "title, 48 labels, ticks and legend";
  EXPECT_NE(svg.find(">" + title + "</text>"), std::string::npos);
  EXPECT_NE(svg.find("font-family=\"DejaVu Sans, sans-serif\""), std::string::npos);
  EXPECT_LT(svg.find("<g id=\"kvscope-text\">"), svg.rfind("</svg>")) << "the text inside the <svg>";
  // The cells are one embedded image (plus the colorbar's ramp), not a
  // rectangle each, kept crisp when a viewer scales them up.
  EXPECT_EQ(count_of(svg, "<image "), 2);
  EXPECT_EQ(count_of(svg, "style=\"image-rendering:pixelated\""), 2);
  const std::string pdf = test::read_file(dir / "h.pdf");
  EXPECT_EQ(pdf.rfind("%PDF-", 0), 0u);
  EXPECT_NE(pdf.find("DejaVuSans"), std::string::npos) << "the font is embedded by name";
  EXPECT_GE(count_of(pdf, "/ToUnicode"), 1);
  const std::set<unsigned> chars = pdf_unicode(pdf);
  for (char c : title)
    if (c != ' ') EXPECT_TRUE(chars.count(static_cast<unsigned char>(c))) << "'" << c << "' is not in the PDF's text";
  EXPECT_EQ(count_of(pdf, "/Subtype /Image"), 2);
}

// Each label's <text> is placed where Pango laid it out: a title drawn at
// a known point carries that point in its group's transform, and its
// measured width as textLength, so a viewer with other fonts keeps the
// layout. Markup-free superscripts, XML escaping and an ellipsized label's
// "…" come through as characters.
TEST(Output, SvgTextIsPlacedAndSizedAsPangoLaidItOut) {
  test::TempDir dir;
  const TextStyle style{.size = 10};
  const std::string label = "a < b & \"c\" 10\u207b\u2076";
  const TextExtent e = measure_text(label, style);
  TextStyle cut = style;
  cut.max_width = 30;
  write_figure(dir / "t", {200, 100},
               [&](cairo_t* cr) {
                 draw_text(cr, label, 20, 40, style, HAlign::left, VAlign::baseline);
                 draw_text(cr, "a label far too long for thirty points", 20, 80, cut);
                 draw_text(cr, std::string("bell\x07"), 20, 95, style);
               },
               {{FigureFormat::svg}, 150});
  const std::string svg = test::read_file(dir / "t.svg");
  EXPECT_NE(svg.find("transform=\"matrix(1 0 0 1 20 40)\""), std::string::npos) << svg;
  EXPECT_NE(svg.find(">a &lt; b &amp; &quot;c&quot; 10\u207b\u2076</text>"), std::string::npos) << svg;
  char length[64];
  std::snprintf(length, sizeof(length), "textLength=\"%g\"", std::round(e.width * 1000) / 1000);
  EXPECT_NE(svg.find(length), std::string::npos) << length << " in " << svg;
  EXPECT_NE(svg.find("\u2026</text>"), std::string::npos) << "the ellipsis of the cut label: " << svg;
  EXPECT_EQ(svg.find("thirty points"), std::string::npos) << "the hidden words are not in the text";
  EXPECT_EQ(svg.find('\x07'), std::string::npos) << "a control character XML forbids";
}

TEST(Output, LargeHeatmapVectorFilesStaySmall) {
  const HeatmapData d = attention(2048, 2048, false);
  test::TempDir dir;
  write_heatmap(dir / "big", d, options("2048 x 2048"), {{FigureFormat::svg, FigureFormat::pdf}, 150});
  const auto svg = fs::file_size(dir / "big.svg"), pdf = fs::file_size(dir / "big.pdf");
  std::printf("2048 x 2048 heatmap: SVG %ju bytes, PDF %ju bytes\n", uintmax_t(svg), uintmax_t(pdf));
  // One rectangle per cell would be 4M elements (well over 100 MB).
  EXPECT_LT(svg, 6u << 20);
  EXPECT_LT(pdf, 4u << 20);
}

// The metadata goes into valid chunks (every CRC as zlib computes it), the
// picture is unchanged, and SVG and PDF carry it too.
TEST(Output, MetadataIsWrittenIntoEveryFormat) {
  test::TempDir dir;
  const HeatmapData d = attention(6, 6, true);
  FigureOutput out{{FigureFormat::png, FigureFormat::svg, FigureFormat::pdf}, 72};
  write_heatmap(dir / "plain", d, options("m"), out);
  out.metadata = {"kvscope 9.9 (abc)", "{\"model\":\"caf\xc3\xa9\"}"};
  write_heatmap(dir / "tagged", d, options("m"), out);
  const std::string png = test::read_file(dir / "tagged.png");
  int chunks = 0;
  for (std::size_t at = 8; at + 12 <= png.size(); ++chunks) {
    const auto u32 = [&](std::size_t i) {
      return uint32_t(uint8_t(png[i])) << 24 | uint32_t(uint8_t(png[i + 1])) << 16 |
             uint32_t(uint8_t(png[i + 2])) << 8 | uint32_t(uint8_t(png[i + 3]));
    };
    const uint32_t len = u32(at);
    ASSERT_LE(at + 12 + len, png.size());
    const auto crc = crc32(0, reinterpret_cast<const Bytef*>(png.data() + at + 4), len + 4);
    EXPECT_EQ(crc, u32(at + 8 + len)) << png.substr(at + 4, 4) << " chunk";
    at += 12 + len;
  }
  EXPECT_GE(chunks, 5);  // IHDR, two text chunks, IDAT, IEND
  EXPECT_EQ(png_text_chunks(png).at("Software"), out.metadata.software);
  EXPECT_EQ(png_text_chunks(png).at(kPngProvenanceKey), out.metadata.provenance);
  EXPECT_EQ(png.size(), test::read_file(dir / "plain.png").size() + (12 + 9 + 17) + (12 + 23 + 17))
      << "only the two chunks added";
  EXPECT_EQ(svg_provenance(test::read_file(dir / "tagged.svg")), out.metadata.provenance);
  EXPECT_EQ(svg_provenance(test::read_file(dir / "plain.svg")), "");
  const std::string pdf = test::read_file(dir / "tagged.pdf");
  // Cairo writes text with parentheses or non-ASCII as UTF-16BE hex: "kv" is 006B 0076.
  EXPECT_NE(pdf.find("/Creator <FEFF006B0076"), std::string::npos)
      << pdf.substr(std::min(pdf.find("/Creator"), pdf.size()), 120);
  EXPECT_NE(pdf.find("/Subject <FEFF"), std::string::npos) << "non-ASCII text as UTF-16";
}

TEST(Output, FailedWritesLeaveNoFile) {
  test::TempDir dir;
  const HeatmapData d = attention(4, 6, false);
  try {
    write_heatmap(dir / "missing" / "h", d, options("x"), {{FigureFormat::png, FigureFormat::pdf}, 100});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("h.png"), std::string::npos) << e.what();
  }
  // A drawing that fails halfway: nothing appears, no temporary file stays.
  EXPECT_THROW(write_figure(dir / "f", {100, 100}, [](cairo_t*) { throw Error("test", "", "drawing failed"); },
                            {{FigureFormat::svg}, 100}),
               Error);
  EXPECT_THROW(write_figure(dir / "g", {100, 100}, [](cairo_t*) { throw Error("test", "", "drawing failed"); },
                            {{FigureFormat::png}, 100}),
               Error);
  EXPECT_TRUE(fs::directory_iterator(dir.path()) == fs::directory_iterator());
  EXPECT_THROW(write_figure(dir / "h", {100, 100}, [](cairo_t*) {}, {{FigureFormat::png}, 5000}), Error);
}

TEST(Output, NamesOfFormatsRangesAndStyles) {
  EXPECT_EQ(check_figure_formats({"png", "svg", "pdf"}), "");
  EXPECT_NE(check_figure_formats({"png", "gif"}).find("'gif'"), std::string::npos);
  EXPECT_NE(check_figure_formats({}), "");
  EXPECT_EQ(parse_figure_formats({"pdf", "png", "pdf"}), (std::vector<FigureFormat>{FigureFormat::pdf, FigureFormat::png}));
  EXPECT_EQ(check_dpi(150), "");
  EXPECT_NE(check_dpi(10), "");
  EXPECT_NE(check_dpi(NAN), "");
  EXPECT_EQ(check_range("shared", ScaleKind::linear), "");
  EXPECT_EQ(check_range("auto", ScaleKind::log), "");
  EXPECT_EQ(check_range("-1:2.5", ScaleKind::linear), "");
  EXPECT_NE(check_range("2:1", ScaleKind::linear), "");
  EXPECT_NE(check_range("0:1", ScaleKind::log), "") << "a log scale needs LO > 0";
  EXPECT_NE(check_range("1:", ScaleKind::linear), "");
  EXPECT_NE(check_range("wide", ScaleKind::linear), "");
  EXPECT_THROW(RangeSpec::parse("x", "--range"), Error);
  EXPECT_EQ(RangeSpec::parse("0.1:0.5", "--range").str(), "0.1:0.5");
  EXPECT_EQ(check_evicted_style("strip"), "");
  EXPECT_NE(check_evicted_style("hatch"), "");
}

TEST(Output, AutomaticRanges) {
  ValueExtent e;
  const std::vector<float> v = {0.1f, 0.4f, NAN, 0.0f};
  e.add(v);
  const ColorScale lin = resolve_color_scale(ScaleKind::linear, RangeSpec::parse("auto", ""), e, e);
  EXPECT_EQ(lin.lo, 0);
  EXPECT_FLOAT_EQ(lin.hi, 0.4f);
  const ColorScale log = resolve_color_scale(ScaleKind::log, RangeSpec::parse("auto", ""), e, e);
  EXPECT_FLOAT_EQ(log.hi, 0.4f);
  EXPECT_FLOAT_EQ(log.lo, 0.1f);  // the smallest positive value, within four decades
  EXPECT_EQ(log.normalize(0), 0);
  ValueExtent none;
  const ColorScale empty = resolve_color_scale(ScaleKind::linear, RangeSpec::parse("auto", ""), none, none);
  EXPECT_LT(empty.lo, empty.hi);
}

TEST(Text, TokensBecomeVisibleLabels) {
  EXPECT_EQ(printable_token("\n"), "\u21b5");
  EXPECT_EQ(printable_token("a\tb"), "a\u2192b");
  EXPECT_EQ(printable_token(" "), "\u2423");
  EXPECT_EQ(printable_token(" fox"), " fox");
  EXPECT_EQ(printable_token(std::string("\x01", 1)), "\u2401");
  EXPECT_EQ(printable_token(""), "\u2205");
  EXPECT_EQ(printable_token("abcdefghijklmnopqrstuvwxyz", 5), "abcde\u2026");
  EXPECT_EQ(printable_token("\xff"), "\ufffd");
  EXPECT_EQ(printable_token("日本語", 2), "日本\u2026");
  EXPECT_EQ(markup_escape("<a&b>"), "&lt;a&amp;b&gt;");
}

TEST(Text, MeasuresGrowWithTheText) {
  const TextStyle t{.size = 10};
  const TextExtent a = measure_text("ab", t), b = measure_text("abab", t);
  EXPECT_GT(a.width, 0);
  EXPECT_NEAR(b.width, 2 * a.width, 0.5);
  EXPECT_NEAR(a.height, measure_text("x", TextStyle{.size = 10}).height, 1e-9);
  EXPECT_GT(measure_text("ab", TextStyle{.size = 20}).height, 1.8 * a.height);
  EXPECT_LE(measure_text("a very long label indeed", TextStyle{.size = 10, .max_width = 30}).width, 30.5);
}

TEST(Ticks, StridesAndPlacementNeverOverlap) {
  EXPECT_EQ(label_stride(10, 8, 1), 1);
  EXPECT_EQ(label_stride(4, 8, 1), 5);
  EXPECT_EQ(label_stride(1, 8, 1), 10);
  EXPECT_EQ(nice_step(1, 5), 0.2);
  EXPECT_EQ(tick_label(0.25, 0.05), "0.25");
  // A caller's own ticks (a sweep's budgets) are never rounded: 0.25 and
  // 0.75 stay apart from 0.2 and 0.8, 12.5% is not 12%.
  for (double v : {0.25, 0.75, 0.5, 12.5, 64.0, 0.1, 1.0 / 3.0})
    EXPECT_EQ(std::strtod(exact_tick_label(v).c_str(), nullptr), v) << exact_tick_label(v);
  EXPECT_EQ(exact_tick_label(0.25), "0.25");
  EXPECT_EQ(exact_tick_label(12.5), "12.5");
  EXPECT_EQ(exact_tick_label(64), "64");
  EXPECT_EQ(exact_tick_label(10), "10");
  EXPECT_EQ(exact_tick_label(2048), "2048");
  EXPECT_EQ(decade_label(-2), "0.01");
  EXPECT_EQ(decade_label(-6), "10\u207b\u2076");
  EXPECT_EQ(decade_label(10), "10\u00b9\u2070");
  std::vector<double> centres, extents;
  for (int i = 0; i < 50; ++i) centres.push_back(i * 7.0), extents.push_back(10 + (i % 3) * 5);
  const auto kept = place_labels(centres, extents, 2, {49});
  EXPECT_TRUE(std::find(kept.begin(), kept.end(), 49) != kept.end());
  EXPECT_TRUE(std::find(kept.begin(), kept.end(), 0) != kept.end());
  for (std::size_t i = 1; i < kept.size(); ++i) {
    const int a = kept[i - 1], b = kept[i];
    EXPECT_GE(centres[b] - extents[b] / 2 - (centres[a] + extents[a] / 2), 2 - 1e-9) << a << " and " << b << " overlap";
  }
}

}  // namespace
}  // namespace kvscope
