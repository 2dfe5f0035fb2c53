// What a figure file says about what made it (reports/provenance.h fills
// it), and where each format keeps it: a PNG in text chunks, an SVG in a
// <metadata> element, a PDF in its document information (figures/canvas.cpp
// sets that one through Cairo). The readers are here too, so tests and
// users' tools read back exactly what was written.
#pragma once

#include <map>
#include <string>

namespace kvscope {

struct FigureMetadata {
  std::string software;    // "kvscope 0.1.0 (abc1234)": PNG Software, PDF Creator
  std::string provenance;  // one line of JSON: PNG "kvscope.provenance", SVG <metadata>, PDF Subject
  bool empty() const { return software.empty() && provenance.empty(); }
};

// The PNG keyword of the provenance text chunk.
inline constexpr const char* kPngProvenanceKey = "kvscope.provenance";

// `png` with a text chunk per non-empty field, placed after IHDR: tEXt when
// the text is ASCII, iTXt (UTF-8) otherwise. Throws kvscope::Error when
// `png` is not a PNG.
std::string with_png_text(const std::string& png, const FigureMetadata& m);
// Every tEXt and uncompressed iTXt chunk of a PNG, keyword -> text.
std::map<std::string, std::string> png_text_chunks(const std::string& png);

// `svg` with <metadata id="kvscope-provenance">...</metadata> as the first
// child of its <svg> element (the provenance, XML-escaped).
std::string with_svg_metadata(const std::string& svg, const FigureMetadata& m);
// The provenance text an SVG carries; "" when none.
std::string svg_provenance(const std::string& svg);

// Text for XML content or a double-quoted attribute: & < > " escaped.
std::string xml_escaped(const std::string& s);

}  // namespace kvscope
