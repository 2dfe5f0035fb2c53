#include "io/figure_metadata.h"

#include <array>
#include <cstdint>

#include "common/error.h"

namespace kvscope {
namespace {

constexpr char kPngSignature[] = "\x89PNG\r\n\x1a\n";
constexpr const char* kSvgOpen = "<metadata id=\"kvscope-provenance\">";

// CRC-32 as PNG defines it (ISO 3309, polynomial 0xEDB88320 reflected),
// over a chunk's type and data.
uint32_t crc32(const std::string& bytes) {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t n = 0; n < 256; ++n) {
      uint32_t c = n;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[n] = c;
    }
    return t;
  }();
  uint32_t c = 0xFFFFFFFFu;
  for (unsigned char b : bytes) c = table[(c ^ b) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

void put_u32(std::string& out, uint32_t v) {
  for (int i = 3; i >= 0; --i) out += char((v >> (8 * i)) & 0xFF);
}

uint32_t get_u32(const std::string& s, std::size_t at) {
  return uint32_t(uint8_t(s[at])) << 24 | uint32_t(uint8_t(s[at + 1])) << 16 | uint32_t(uint8_t(s[at + 2])) << 8 |
         uint32_t(uint8_t(s[at + 3]));
}

std::string chunk(const std::string& type, const std::string& data) {
  std::string body = type + data, out;
  put_u32(out, uint32_t(data.size()));
  out += body;
  put_u32(out, crc32(body));
  return out;
}

bool ascii(const std::string& s) {
  for (unsigned char c : s)
    if (c >= 0x80) return false;
  return true;
}

std::string text_chunk(const std::string& key, const std::string& text) {
  if (ascii(text)) return chunk("tEXt", key + '\0' + text);
  // keyword, NUL, compression flag 0, method 0, empty language tag and
  // translated keyword (each NUL-terminated), the UTF-8 text.
  return chunk("iTXt", key + '\0' + '\0' + '\0' + '\0' + '\0' + text);
}

std::string xml_unescaped(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '&') {
      out += s[i];
      continue;
    }
    const std::size_t end = s.find(';', i);
    const std::string name = end == std::string::npos ? "" : s.substr(i + 1, end - i - 1);
    if (name == "amp") out += '&';
    else if (name == "lt") out += '<';
    else if (name == "gt") out += '>';
    else if (name == "quot") out += '"';
    else if (name == "apos") out += '\'';
    else {
      out += s[i];
      continue;
    }
    i = end;
  }
  return out;
}

}  // namespace

std::string with_png_text(const std::string& png, const FigureMetadata& m) {
  const std::size_t sig = sizeof(kPngSignature) - 1;
  // The signature, then IHDR (length 13): 8 + 4 + 4 + 13 + 4 bytes.
  if (png.size() < sig + 25 || png.compare(0, sig, kPngSignature) != 0 || png.compare(sig + 4, 4, "IHDR") != 0)
    throw Error("png", "", "not a PNG image");
  const std::size_t after_ihdr = sig + 12 + get_u32(png, sig);
  std::string text;
  if (!m.software.empty()) text += text_chunk("Software", m.software);
  if (!m.provenance.empty()) text += text_chunk(kPngProvenanceKey, m.provenance);
  return png.substr(0, after_ihdr) + text + png.substr(after_ihdr);
}

std::map<std::string, std::string> png_text_chunks(const std::string& png) {
  std::map<std::string, std::string> out;
  std::size_t at = sizeof(kPngSignature) - 1;
  while (at + 12 <= png.size()) {
    const uint32_t len = get_u32(png, at);
    if (at + 12 + len > png.size()) break;
    const std::string type = png.substr(at + 4, 4), data = png.substr(at + 8, len);
    const std::size_t nul = data.find('\0');
    if (type == "tEXt" && nul != std::string::npos) {
      out[data.substr(0, nul)] = data.substr(nul + 1);
    } else if (type == "iTXt" && nul != std::string::npos && nul + 2 < data.size() && data[nul + 1] == 0) {
      // Skip the flag, the method, the language tag and the translated keyword.
      std::size_t p = data.find('\0', nul + 3);
      if (p != std::string::npos) p = data.find('\0', p + 1);
      if (p != std::string::npos) out[data.substr(0, nul)] = data.substr(p + 1);
    }
    at += 12 + len;
  }
  return out;
}

std::string with_svg_metadata(const std::string& svg, const FigureMetadata& m) {
  if (m.provenance.empty()) return svg;
  const std::size_t open = svg.find("<svg");
  const std::size_t end = open == std::string::npos ? open : svg.find('>', open);
  if (end == std::string::npos) throw Error("svg", "", "no <svg> element");
  return svg.substr(0, end + 1) + "\n" + kSvgOpen + xml_escaped(m.provenance) + "</metadata>" + svg.substr(end + 1);
}

std::string xml_escaped(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '&') out += "&amp;";
    else if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '"') out += "&quot;";
    else out += c;
  }
  return out;
}

std::string svg_provenance(const std::string& svg) {
  const std::size_t start = svg.find(kSvgOpen);
  if (start == std::string::npos) return "";
  const std::size_t from = start + std::string(kSvgOpen).size();
  const std::size_t end = svg.find("</metadata>", from);
  return end == std::string::npos ? "" : xml_unescaped(svg.substr(from, end - from));
}

}  // namespace kvscope
