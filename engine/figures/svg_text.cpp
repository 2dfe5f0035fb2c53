#include "figures/svg_text.h"

#include <cstdio>

#include "common/error.h"
#include "io/figure_metadata.h"

namespace kvscope {
namespace {

thread_local SvgTextRecorder* current = nullptr;

// A coordinate: three decimals (a thousandth of a point), trailing zeros dropped.
std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.3f", v);
  std::string s = buf;
  while (!s.empty() && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s == "-0" ? "0" : s;
}

double points(int pango_units) { return double(pango_units) / PANGO_SCALE; }

// Text as XML content: escaped, and the C0 control characters XML 1.0
// forbids (a raw byte in a title, say) replaced by U+FFFD, as a viewer
// would refuse the whole file over one.
std::string xml_text(const std::string& s) {
  std::string out;
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    out += u < 0x20 && c != '\t' && c != '\n' && c != '\r' ? std::string("\ufffd") : std::string(1, c);
  }
  return xml_escaped(out);
}

// The font Pango chose for a run, then the figures' own family and the
// generic one, for a viewer that lacks it.
std::string font_families(const char* chosen) {
  const std::string own = "DejaVu Sans";
  std::string out = chosen && own != chosen ? xml_escaped(chosen) + ", " : "";
  return out + own + ", sans-serif";
}

}  // namespace

SvgTextRecorder::SvgTextRecorder() : outer_(current) { current = this; }
SvgTextRecorder::~SvgTextRecorder() { current = outer_; }
SvgTextRecorder* SvgTextRecorder::active() { return current; }

void SvgTextRecorder::add(cairo_t* cr, PangoLayout* layout, Rgb color) {
  double x0 = 0, y0 = 0;
  cairo_get_current_point(cr, &x0, &y0);
  cairo_matrix_t m;
  cairo_get_matrix(cr, &m);
  std::string runs;
  const char* text = pango_layout_get_text(layout);
  PangoLayoutIter* it = pango_layout_get_iter(layout);
  do {
    const PangoLayoutRun* run = pango_layout_iter_get_run_readonly(it);
    if (!run) continue;  // the end of a line
    const PangoItem* item = run->item;
    // An ellipsized label's "…" is a run of its own over the text it hides.
    const bool ellipsis = item->analysis.flags & PANGO_ANALYSIS_FLAG_IS_ELLIPSIS;
    const std::string piece = ellipsis ? "\u2026" : std::string(text + item->offset, item->length);
    if (piece.find_first_not_of(' ') == std::string::npos && !ellipsis) continue;
    PangoRectangle logical;
    pango_layout_iter_get_run_extents(it, nullptr, &logical);
    const double baseline = points(pango_layout_iter_get_baseline(it)) - points(run->y_offset);
    PangoFontDescription* fd = pango_font_describe(item->analysis.font);
    const char* family = pango_font_description_get_family(fd);
    const double size = points(pango_font_description_get_size(fd));
    const bool bold = pango_font_description_get_weight(fd) >= PANGO_WEIGHT_SEMIBOLD;
    const bool italic = pango_font_description_get_style(fd) != PANGO_STYLE_NORMAL;
    runs += "<text x=\"" + num(x0 + points(logical.x)) + "\" y=\"" + num(y0 + baseline) + "\" font-family=\"" +
            font_families(family) + "\" font-size=\"" + num(size) + "\"" + (bold ? " font-weight=\"bold\"" : "") +
            (italic ? " font-style=\"italic\"" : "") + ((item->analysis.level & 1) ? " direction=\"rtl\"" : "") +
            " textLength=\"" + num(points(logical.width)) +
            "\" lengthAdjust=\"spacingAndGlyphs\" xml:space=\"preserve\">" + xml_text(piece) + "</text>";
    pango_font_description_free(fd);
  } while (pango_layout_iter_next_run(it));
  pango_layout_iter_free(it);
  if (runs.empty()) return;
  char fill[16];
  std::snprintf(fill, sizeof(fill), "#%02x%02x%02x", color.r, color.g, color.b);
  elements_ += "<g fill=\"" + std::string(fill) + "\" transform=\"matrix(" + num(m.xx) + " " + num(m.yx) + " " +
               num(m.xy) + " " + num(m.yy) + " " + num(m.x0) + " " + num(m.y0) + ")\">" + runs + "</g>\n";
}

std::string SvgTextRecorder::insert_into(const std::string& svg) const {
  if (elements_.empty()) return svg;
  const std::size_t close = svg.rfind("</svg>");
  if (close == std::string::npos) throw Error("svg", "", "no closing </svg>");
  return svg.substr(0, close) + "<g id=\"kvscope-text\">\n" + elements_ + "</g>\n" + svg.substr(close);
}

}  // namespace kvscope
