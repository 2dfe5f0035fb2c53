#include "figures/drawing_library.h"

#include <dlfcn.h>

#include <cairo-pdf.h>
#include <cairo-svg.h>
#include <cairo.h>
#include <glib.h>
#include <pango/pangocairo.h>

#include <string>

#include "common/error.h"

namespace kvscope {
namespace {

// The Debian soname of Pango's Cairo binding, whose dependencies are the
// other four libraries; dlsym on its handle searches them too.
constexpr const char* kLibrary = "libpangocairo-1.0.so.0";

void* library() {
  static void* const handle = [] {
    void* h = dlopen(kLibrary, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      const char* why = dlerror();
      throw Error(kLibrary, "",
                  std::string("cannot open it (figures are drawn with Pango and Cairo; on Debian: apt-get install "
                              "libpangocairo-1.0-0): ") +
                      (why ? why : "unknown error"));
    }
    return h;
  }();
  return handle;
}

void* symbol(const char* name) {
  void* s = dlsym(library(), name);
  if (!s) throw Error(kLibrary, name, "the function is missing from the library");
  return s;
}

}  // namespace

bool drawing_library_is_mapped() {
  void* h = dlopen(kLibrary, RTLD_NOW | RTLD_NOLOAD);
  if (!h) return false;
  dlclose(h);  // RTLD_NOLOAD took a reference
  return true;
}

}  // namespace kvscope

// The function `name` of the libraries, looked up on its first call
// (thread-safe: a function-local static).
#define KVSCOPE_DRAWING_CALL(name)                                                        \
  ([] {                                                                                   \
    static const auto fn = reinterpret_cast<decltype(&::name)>(::kvscope::symbol(#name)); \
    return fn;                                                                            \
  }())

// Each function under its own name and its header's signature, by library.
// clang-format off
extern "C" {

// Cairo
void cairo_arc(cairo_t* a0, double a1, double a2, double a3, double a4, double a5) { KVSCOPE_DRAWING_CALL(cairo_arc)(a0, a1, a2, a3, a4, a5); }
void cairo_clip(cairo_t* a0) { KVSCOPE_DRAWING_CALL(cairo_clip)(a0); }
void cairo_close_path(cairo_t* a0) { KVSCOPE_DRAWING_CALL(cairo_close_path)(a0); }
cairo_t* cairo_create(cairo_surface_t* a0) { return KVSCOPE_DRAWING_CALL(cairo_create)(a0); }
void cairo_destroy(cairo_t* a0) { KVSCOPE_DRAWING_CALL(cairo_destroy)(a0); }
void cairo_fill(cairo_t* a0) { KVSCOPE_DRAWING_CALL(cairo_fill)(a0); }
cairo_font_options_t* cairo_font_options_create() { return KVSCOPE_DRAWING_CALL(cairo_font_options_create)(); }
void cairo_font_options_destroy(cairo_font_options_t* a0) { KVSCOPE_DRAWING_CALL(cairo_font_options_destroy)(a0); }
void cairo_font_options_set_antialias(cairo_font_options_t* a0, cairo_antialias_t a1) { KVSCOPE_DRAWING_CALL(cairo_font_options_set_antialias)(a0, a1); }
void cairo_font_options_set_hint_metrics(cairo_font_options_t* a0, cairo_hint_metrics_t a1) { KVSCOPE_DRAWING_CALL(cairo_font_options_set_hint_metrics)(a0, a1); }
void cairo_font_options_set_hint_style(cairo_font_options_t* a0, cairo_hint_style_t a1) { KVSCOPE_DRAWING_CALL(cairo_font_options_set_hint_style)(a0, a1); }
void cairo_get_current_point(cairo_t* a0, double* a1, double* a2) { KVSCOPE_DRAWING_CALL(cairo_get_current_point)(a0, a1, a2); }
void cairo_get_matrix(cairo_t* a0, cairo_matrix_t* a1) { KVSCOPE_DRAWING_CALL(cairo_get_matrix)(a0, a1); }
cairo_pattern_t* cairo_get_source(cairo_t* a0) { return KVSCOPE_DRAWING_CALL(cairo_get_source)(a0); }
cairo_surface_t* cairo_get_target(cairo_t* a0) { return KVSCOPE_DRAWING_CALL(cairo_get_target)(a0); }
cairo_surface_t* cairo_image_surface_create(cairo_format_t a0, int a1, int a2) { return KVSCOPE_DRAWING_CALL(cairo_image_surface_create)(a0, a1, a2); }
unsigned char* cairo_image_surface_get_data(cairo_surface_t* a0) { return KVSCOPE_DRAWING_CALL(cairo_image_surface_get_data)(a0); }
int cairo_image_surface_get_height(cairo_surface_t* a0) { return KVSCOPE_DRAWING_CALL(cairo_image_surface_get_height)(a0); }
int cairo_image_surface_get_stride(cairo_surface_t* a0) { return KVSCOPE_DRAWING_CALL(cairo_image_surface_get_stride)(a0); }
int cairo_image_surface_get_width(cairo_surface_t* a0) { return KVSCOPE_DRAWING_CALL(cairo_image_surface_get_width)(a0); }
void cairo_line_to(cairo_t* a0, double a1, double a2) { KVSCOPE_DRAWING_CALL(cairo_line_to)(a0, a1, a2); }
void cairo_move_to(cairo_t* a0, double a1, double a2) { KVSCOPE_DRAWING_CALL(cairo_move_to)(a0, a1, a2); }
void cairo_paint(cairo_t* a0) { KVSCOPE_DRAWING_CALL(cairo_paint)(a0); }
void cairo_pattern_set_filter(cairo_pattern_t* a0, cairo_filter_t a1) { KVSCOPE_DRAWING_CALL(cairo_pattern_set_filter)(a0, a1); }
cairo_surface_t* cairo_pdf_surface_create_for_stream(cairo_write_func_t a0, void* a1, double a2, double a3) { return KVSCOPE_DRAWING_CALL(cairo_pdf_surface_create_for_stream)(a0, a1, a2, a3); }
void cairo_pdf_surface_set_metadata(cairo_surface_t* a0, cairo_pdf_metadata_t a1, const char* a2) { KVSCOPE_DRAWING_CALL(cairo_pdf_surface_set_metadata)(a0, a1, a2); }
void cairo_rectangle(cairo_t* a0, double a1, double a2, double a3, double a4) { KVSCOPE_DRAWING_CALL(cairo_rectangle)(a0, a1, a2, a3, a4); }
void cairo_restore(cairo_t* a0) { KVSCOPE_DRAWING_CALL(cairo_restore)(a0); }
void cairo_rotate(cairo_t* a0, double a1) { KVSCOPE_DRAWING_CALL(cairo_rotate)(a0, a1); }
void cairo_save(cairo_t* a0) { KVSCOPE_DRAWING_CALL(cairo_save)(a0); }
void cairo_scale(cairo_t* a0, double a1, double a2) { KVSCOPE_DRAWING_CALL(cairo_scale)(a0, a1, a2); }
void cairo_set_dash(cairo_t* a0, const double* a1, int a2, double a3) { KVSCOPE_DRAWING_CALL(cairo_set_dash)(a0, a1, a2, a3); }
void cairo_set_line_cap(cairo_t* a0, cairo_line_cap_t a1) { KVSCOPE_DRAWING_CALL(cairo_set_line_cap)(a0, a1); }
void cairo_set_line_join(cairo_t* a0, cairo_line_join_t a1) { KVSCOPE_DRAWING_CALL(cairo_set_line_join)(a0, a1); }
void cairo_set_line_width(cairo_t* a0, double a1) { KVSCOPE_DRAWING_CALL(cairo_set_line_width)(a0, a1); }
void cairo_set_source_rgb(cairo_t* a0, double a1, double a2, double a3) { KVSCOPE_DRAWING_CALL(cairo_set_source_rgb)(a0, a1, a2, a3); }
void cairo_set_source_rgba(cairo_t* a0, double a1, double a2, double a3, double a4) { KVSCOPE_DRAWING_CALL(cairo_set_source_rgba)(a0, a1, a2, a3, a4); }
void cairo_set_source_surface(cairo_t* a0, cairo_surface_t* a1, double a2, double a3) { KVSCOPE_DRAWING_CALL(cairo_set_source_surface)(a0, a1, a2, a3); }
cairo_status_t cairo_status(cairo_t* a0) { return KVSCOPE_DRAWING_CALL(cairo_status)(a0); }
const char* cairo_status_to_string(cairo_status_t a0) { return KVSCOPE_DRAWING_CALL(cairo_status_to_string)(a0); }
void cairo_stroke(cairo_t* a0) { KVSCOPE_DRAWING_CALL(cairo_stroke)(a0); }
void cairo_surface_destroy(cairo_surface_t* a0) { KVSCOPE_DRAWING_CALL(cairo_surface_destroy)(a0); }
void cairo_surface_finish(cairo_surface_t* a0) { KVSCOPE_DRAWING_CALL(cairo_surface_finish)(a0); }
void cairo_surface_flush(cairo_surface_t* a0) { KVSCOPE_DRAWING_CALL(cairo_surface_flush)(a0); }
cairo_surface_type_t cairo_surface_get_type(cairo_surface_t* a0) { return KVSCOPE_DRAWING_CALL(cairo_surface_get_type)(a0); }
void cairo_surface_mark_dirty(cairo_surface_t* a0) { KVSCOPE_DRAWING_CALL(cairo_surface_mark_dirty)(a0); }
cairo_status_t cairo_surface_status(cairo_surface_t* a0) { return KVSCOPE_DRAWING_CALL(cairo_surface_status)(a0); }
cairo_status_t cairo_surface_write_to_png_stream(cairo_surface_t* a0, cairo_write_func_t a1, void* a2) { return KVSCOPE_DRAWING_CALL(cairo_surface_write_to_png_stream)(a0, a1, a2); }
cairo_surface_t* cairo_svg_surface_create_for_stream(cairo_write_func_t a0, void* a1, double a2, double a3) { return KVSCOPE_DRAWING_CALL(cairo_svg_surface_create_for_stream)(a0, a1, a2, a3); }
void cairo_translate(cairo_t* a0, double a1, double a2) { KVSCOPE_DRAWING_CALL(cairo_translate)(a0, a1, a2); }
void cairo_user_to_device_distance(cairo_t* a0, double* a1, double* a2) { KVSCOPE_DRAWING_CALL(cairo_user_to_device_distance)(a0, a1, a2); }

// Pango
PangoFontDescription* pango_font_describe(PangoFont* a0) { return KVSCOPE_DRAWING_CALL(pango_font_describe)(a0); }
void pango_font_description_free(PangoFontDescription* a0) { KVSCOPE_DRAWING_CALL(pango_font_description_free)(a0); }
PangoFontDescription* pango_font_description_from_string(const char* a0) { return KVSCOPE_DRAWING_CALL(pango_font_description_from_string)(a0); }
const char* pango_font_description_get_family(const PangoFontDescription* a0) { return KVSCOPE_DRAWING_CALL(pango_font_description_get_family)(a0); }
gint pango_font_description_get_size(const PangoFontDescription* a0) { return KVSCOPE_DRAWING_CALL(pango_font_description_get_size)(a0); }
PangoStyle pango_font_description_get_style(const PangoFontDescription* a0) { return KVSCOPE_DRAWING_CALL(pango_font_description_get_style)(a0); }
PangoWeight pango_font_description_get_weight(const PangoFontDescription* a0) { return KVSCOPE_DRAWING_CALL(pango_font_description_get_weight)(a0); }
void pango_font_description_set_size(PangoFontDescription* a0, gint a1) { KVSCOPE_DRAWING_CALL(pango_font_description_set_size)(a0, a1); }
void pango_font_description_set_weight(PangoFontDescription* a0, PangoWeight a1) { KVSCOPE_DRAWING_CALL(pango_font_description_set_weight)(a0, a1); }
void pango_layout_context_changed(PangoLayout* a0) { KVSCOPE_DRAWING_CALL(pango_layout_context_changed)(a0); }
int pango_layout_get_baseline(PangoLayout* a0) { return KVSCOPE_DRAWING_CALL(pango_layout_get_baseline)(a0); }
PangoContext* pango_layout_get_context(PangoLayout* a0) { return KVSCOPE_DRAWING_CALL(pango_layout_get_context)(a0); }
void pango_layout_get_extents(PangoLayout* a0, PangoRectangle* a1, PangoRectangle* a2) { KVSCOPE_DRAWING_CALL(pango_layout_get_extents)(a0, a1, a2); }
PangoLayoutIter* pango_layout_get_iter(PangoLayout* a0) { return KVSCOPE_DRAWING_CALL(pango_layout_get_iter)(a0); }
const char* pango_layout_get_text(PangoLayout* a0) { return KVSCOPE_DRAWING_CALL(pango_layout_get_text)(a0); }
int pango_layout_get_unknown_glyphs_count(PangoLayout* a0) { return KVSCOPE_DRAWING_CALL(pango_layout_get_unknown_glyphs_count)(a0); }
void pango_layout_iter_free(PangoLayoutIter* a0) { KVSCOPE_DRAWING_CALL(pango_layout_iter_free)(a0); }
int pango_layout_iter_get_baseline(PangoLayoutIter* a0) { return KVSCOPE_DRAWING_CALL(pango_layout_iter_get_baseline)(a0); }
void pango_layout_iter_get_run_extents(PangoLayoutIter* a0, PangoRectangle* a1, PangoRectangle* a2) { KVSCOPE_DRAWING_CALL(pango_layout_iter_get_run_extents)(a0, a1, a2); }
PangoLayoutRun* pango_layout_iter_get_run_readonly(PangoLayoutIter* a0) { return KVSCOPE_DRAWING_CALL(pango_layout_iter_get_run_readonly)(a0); }
gboolean pango_layout_iter_next_run(PangoLayoutIter* a0) { return KVSCOPE_DRAWING_CALL(pango_layout_iter_next_run)(a0); }
void pango_layout_set_alignment(PangoLayout* a0, PangoAlignment a1) { KVSCOPE_DRAWING_CALL(pango_layout_set_alignment)(a0, a1); }
void pango_layout_set_ellipsize(PangoLayout* a0, PangoEllipsizeMode a1) { KVSCOPE_DRAWING_CALL(pango_layout_set_ellipsize)(a0, a1); }
void pango_layout_set_font_description(PangoLayout* a0, const PangoFontDescription* a1) { KVSCOPE_DRAWING_CALL(pango_layout_set_font_description)(a0, a1); }
void pango_layout_set_markup(PangoLayout* a0, const char* a1, int a2) { KVSCOPE_DRAWING_CALL(pango_layout_set_markup)(a0, a1, a2); }
void pango_layout_set_text(PangoLayout* a0, const char* a1, int a2) { KVSCOPE_DRAWING_CALL(pango_layout_set_text)(a0, a1, a2); }
void pango_layout_set_width(PangoLayout* a0, int a1) { KVSCOPE_DRAWING_CALL(pango_layout_set_width)(a0, a1); }
void pango_layout_set_wrap(PangoLayout* a0, PangoWrapMode a1) { KVSCOPE_DRAWING_CALL(pango_layout_set_wrap)(a0, a1); }

// PangoCairo
void pango_cairo_context_set_font_options(PangoContext* a0, const cairo_font_options_t* a1) { KVSCOPE_DRAWING_CALL(pango_cairo_context_set_font_options)(a0, a1); }
void pango_cairo_context_set_resolution(PangoContext* a0, double a1) { KVSCOPE_DRAWING_CALL(pango_cairo_context_set_resolution)(a0, a1); }
PangoLayout* pango_cairo_create_layout(cairo_t* a0) { return KVSCOPE_DRAWING_CALL(pango_cairo_create_layout)(a0); }
void pango_cairo_show_layout(cairo_t* a0, PangoLayout* a1) { KVSCOPE_DRAWING_CALL(pango_cairo_show_layout)(a0, a1); }
void pango_cairo_update_layout(cairo_t* a0, PangoLayout* a1) { KVSCOPE_DRAWING_CALL(pango_cairo_update_layout)(a0, a1); }

// GObject
void g_object_unref(gpointer a0) { KVSCOPE_DRAWING_CALL(g_object_unref)(a0); }

// GLib
void g_free(gpointer a0) { KVSCOPE_DRAWING_CALL(g_free)(a0); }
gchar* g_markup_escape_text(const gchar* a0, gssize a1) { return KVSCOPE_DRAWING_CALL(g_markup_escape_text)(a0, a1); }
gint g_unichar_to_utf8(gunichar a0, gchar* a1) { return KVSCOPE_DRAWING_CALL(g_unichar_to_utf8)(a0, a1); }
gunichar g_utf8_get_char(const gchar* a0) { return KVSCOPE_DRAWING_CALL(g_utf8_get_char)(a0); }
gchar* g_utf8_make_valid(const gchar* a0, gssize a1) { return KVSCOPE_DRAWING_CALL(g_utf8_make_valid)(a0, a1); }
}  // extern "C"
// clang-format on
