#include "figures/text.h"

#include <glib.h>
#include <pango/pangocairo.h>

#include <algorithm>
#include <cmath>
#include <memory>

#include "figures/svg_text.h"

namespace kvscope {
namespace {

// Family list: DejaVu Sans first; fontconfig substitutes for it when it is
// not installed and falls back per character for scripts it does not cover.
constexpr const char* kFamily = "DejaVu Sans,sans-serif";

struct LayoutDeleter {
  void operator()(PangoLayout* l) const { g_object_unref(l); }
};
using Layout = std::unique_ptr<PangoLayout, LayoutDeleter>;

// Same settings on every surface: 1 unit = 1 point, no hinting.
void configure(PangoContext* ctx) {
  pango_cairo_context_set_resolution(ctx, 72);
  cairo_font_options_t* fo = cairo_font_options_create();
  cairo_font_options_set_hint_style(fo, CAIRO_HINT_STYLE_NONE);
  cairo_font_options_set_hint_metrics(fo, CAIRO_HINT_METRICS_OFF);
  cairo_font_options_set_antialias(fo, CAIRO_ANTIALIAS_GRAY);
  pango_cairo_context_set_font_options(ctx, fo);
  cairo_font_options_destroy(fo);
}

Layout make_layout(cairo_t* cr, std::string_view text, const TextStyle& style) {
  Layout l(pango_cairo_create_layout(cr));
  configure(pango_layout_get_context(l.get()));
  pango_layout_context_changed(l.get());
  PangoFontDescription* fd = pango_font_description_from_string(kFamily);
  pango_font_description_set_size(fd, static_cast<int>(std::lround(style.size * PANGO_SCALE)));
  pango_font_description_set_weight(fd, style.bold ? PANGO_WEIGHT_BOLD : PANGO_WEIGHT_NORMAL);
  pango_layout_set_font_description(l.get(), fd);
  pango_font_description_free(fd);
  if (style.markup) pango_layout_set_markup(l.get(), text.data(), static_cast<int>(text.size()));
  else pango_layout_set_text(l.get(), text.data(), static_cast<int>(text.size()));
  if (style.max_width > 0) {
    pango_layout_set_width(l.get(), static_cast<int>(style.max_width * PANGO_SCALE));
    pango_layout_set_ellipsize(l.get(), PANGO_ELLIPSIZE_END);
  } else if (style.wrap_width > 0) {
    pango_layout_set_width(l.get(), static_cast<int>(style.wrap_width * PANGO_SCALE));
    pango_layout_set_wrap(l.get(), PANGO_WRAP_WORD_CHAR);
    pango_layout_set_alignment(l.get(), PANGO_ALIGN_CENTER);
  }
  return l;
}

// A context for measuring only (a 1x1 image surface, never shown).
cairo_t* measuring_context() {
  thread_local struct Holder {
    cairo_surface_t* s = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, 1, 1);
    cairo_t* cr = cairo_create(s);
    ~Holder() {
      cairo_destroy(cr);
      cairo_surface_destroy(s);
    }
  } h;
  return h.cr;
}

TextExtent extent_of(PangoLayout* l) {
  PangoRectangle logical;
  pango_layout_get_extents(l, nullptr, &logical);
  return {double(logical.width) / PANGO_SCALE, double(logical.height) / PANGO_SCALE,
          double(pango_layout_get_baseline(l)) / PANGO_SCALE, double(logical.x) / PANGO_SCALE};
}

void append_utf8(std::string& out, uint32_t cp) {
  char buf[8];
  const int n = g_unichar_to_utf8(cp, buf);
  out.append(buf, static_cast<std::size_t>(n));
}

thread_local double smallest_drawn = INFINITY;

}  // namespace

void reset_smallest_text_drawn() { smallest_drawn = INFINITY; }
double smallest_text_drawn() { return smallest_drawn; }

TextExtent measure_text(std::string_view text, const TextStyle& style) {
  return extent_of(make_layout(measuring_context(), text, style).get());
}

void draw_text(cairo_t* cr, std::string_view text, double x, double y, const TextStyle& style, HAlign h, VAlign v,
               double angle) {
  if (text.empty()) return;
  Layout l = make_layout(cr, text, style);
  const TextExtent e = extent_of(l.get());
  const double dx = -e.x + (h == HAlign::left ? 0 : h == HAlign::center ? -e.width / 2 : -e.width);
  const double dy = v == VAlign::top        ? 0
                    : v == VAlign::middle   ? -e.height / 2
                    : v == VAlign::baseline ? -e.baseline
                                            : -e.height;
  cairo_save(cr);
  cairo_translate(cr, x, y);
  if (angle != 0) cairo_rotate(cr, -angle * M_PI / 180.0);
  cairo_move_to(cr, dx, dy);
  {
    // The font's size on the device: one point of user space measured there.
    double ux = 0, uy = 1;
    cairo_user_to_device_distance(cr, &ux, &uy);
    smallest_drawn = std::min(smallest_drawn, style.size * std::hypot(ux, uy));
  }
  pango_cairo_update_layout(cr, l.get());
  if (SvgTextRecorder* svg = SvgTextRecorder::active()) {
    svg->add(cr, l.get(), style.color);  // text as text (figures/svg_text.h)
  } else {
    cairo_set_source_rgb(cr, style.color.r / 255.0, style.color.g / 255.0, style.color.b / 255.0);
    pango_cairo_show_layout(cr, l.get());
  }
  cairo_restore(cr);
}

std::string printable_token(std::string_view text, int max_chars) {
  // Invalid UTF-8 becomes U+FFFD first, so the walk below sees code points.
  gchar* valid = g_utf8_make_valid(text.data(), static_cast<gssize>(text.size()));
  std::string out;
  int n = 0;
  bool cut = false, all_spaces = *valid != 0;
  for (const gchar* p = valid; *p; ++p) all_spaces = all_spaces && *p == ' ';
  // (g_utf8_next_char reads GLib's g_utf8_skip table, a variable, which the
  // libraries opened on first use cannot lend: drawing_library.h.)
  const auto next_char = [](const gchar* p) {
    const auto lead = static_cast<unsigned char>(*p);
    return p + (lead < 0xC0 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4);
  };
  for (const gchar* p = valid; *p; p = next_char(p)) {
    const gunichar c = g_utf8_get_char(p);
    if (n == max_chars) {
      cut = true;
      break;
    }
    if (c == '\n') append_utf8(out, 0x21B5);                      // ↵
    else if (c == '\r') append_utf8(out, 0x240D);                 // ␍
    else if (c == '\t') append_utf8(out, 0x2192);                 // →
    else if (c < 0x20) append_utf8(out, 0x2400 + c);              // ␀..␟
    else if (c == 0x7f) append_utf8(out, 0x2421);                 // ␡
    else if (c == ' ' && all_spaces) append_utf8(out, 0x2423);    // ␣: a token of spaces shows
    else append_utf8(out, c);
    ++n;
  }
  g_free(valid);
  if (cut) append_utf8(out, 0x2026);  // …
  if (out.empty()) append_utf8(out, 0x2205);  // ∅: an empty piece
  return out;
}

std::string markup_escape(std::string_view text) {
  gchar* e = g_markup_escape_text(text.data(), static_cast<gssize>(text.size()));
  std::string out(e);
  g_free(e);
  return out;
}

int missing_glyphs(std::string_view text, const TextStyle& style) {
  return pango_layout_get_unknown_glyphs_count(make_layout(measuring_context(), text, style).get());
}

}  // namespace kvscope
