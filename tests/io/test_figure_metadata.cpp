// A figure's metadata written into PNG and SVG bytes and read back: ASCII
// text in tEXt, other text in iTXt, XML-escaped text in SVG.
#include <gtest/gtest.h>

#include "common/error.h"
#include "io/figure_metadata.h"

namespace kvscope {
namespace {

std::string u32(uint32_t v) { return {char(v >> 24), char(v >> 16), char(v >> 8), char(v)}; }

// A PNG's frame without pixels: signature, IHDR, IEND (CRCs not checked here).
std::string bare_png() {
  std::string ihdr = u32(2) + u32(3) + std::string("\x08\x06\x00\x00\x00", 5);
  return std::string("\x89PNG\r\n\x1a\n", 8) + u32(13) + "IHDR" + ihdr + u32(0) + u32(0) + "IEND" + u32(0);
}

TEST(FigureMetadata, PngTextChunksReadBack) {
  const FigureMetadata m{"kvscope 0.1.0 (abc)", "{\"command_line\":\"kvscope-cli run 'caf\xc3\xa9.json'\"}"};
  const std::string png = with_png_text(bare_png(), m);
  const auto chunks = png_text_chunks(png);
  ASSERT_EQ(chunks.size(), 2u);
  EXPECT_EQ(chunks.at("Software"), m.software);
  EXPECT_EQ(chunks.at(kPngProvenanceKey), m.provenance) << "UTF-8 text goes through iTXt";
  EXPECT_NE(png.find("iTXt"), std::string::npos);
  EXPECT_NE(png.find("tEXt"), std::string::npos);
  // Right after IHDR, before the image data; nothing else moves.
  EXPECT_EQ(png.compare(0, 33, bare_png(), 0, 33), 0);
  EXPECT_EQ(png.substr(png.size() - 12), bare_png().substr(bare_png().size() - 12));
  EXPECT_EQ(with_png_text(bare_png(), {}), bare_png());
  EXPECT_THROW((void)with_png_text("GIF89a", m), Error);
}

TEST(FigureMetadata, SvgMetadataReadsBack) {
  const std::string svg =
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" "
      "width=\"10pt\">\n<g/>\n</svg>\n";
  const FigureMetadata m{"kvscope", "{\"a\":\"<b> & 'c'\"}"};
  const std::string out = with_svg_metadata(svg, m);
  EXPECT_EQ(svg_provenance(out), m.provenance);
  EXPECT_EQ(out.find("<b>"), std::string::npos) << "escaped";
  EXPECT_LT(out.find("<metadata"), out.find("<g/>"));
  EXPECT_EQ(svg_provenance(svg), "");
  EXPECT_EQ(with_svg_metadata(svg, {}), svg);
}

}  // namespace
}  // namespace kvscope
