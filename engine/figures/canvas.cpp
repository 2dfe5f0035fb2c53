#include "figures/canvas.h"

#include <cairo-pdf.h>
#include <cairo-svg.h>

#include <cmath>
#include <memory>
#include <optional>
#include <ostream>
#include <sstream>
#include <string>

#include "common/error.h"
#include "figures/svg_text.h"
#include "io/atomic_file.h"

namespace kvscope {
namespace {

struct SurfaceDeleter {
  void operator()(cairo_surface_t* s) const { cairo_surface_destroy(s); }
};
struct ContextDeleter {
  void operator()(cairo_t* c) const { cairo_destroy(c); }
};
using Surface = std::unique_ptr<cairo_surface_t, SurfaceDeleter>;
using Context = std::unique_ptr<cairo_t, ContextDeleter>;

cairo_status_t write_to_stream(void* closure, const unsigned char* data, unsigned int length) {
  auto* out = static_cast<std::ostream*>(closure);
  out->write(reinterpret_cast<const char*>(data), length);
  return *out ? CAIRO_STATUS_SUCCESS : CAIRO_STATUS_WRITE_ERROR;
}

void check(cairo_status_t st, const std::filesystem::path& path, const char* what) {
  if (st != CAIRO_STATUS_SUCCESS) throw Error(path.string(), "", std::string(what) + ": " + cairo_status_to_string(st));
}

// Runs `draw` on `surface` (points as user units after `scale`) on a white
// ground, and checks that Cairo drew without error.
void draw_on(cairo_surface_t* surface, double scale, FigureSize size, const DrawFigure& draw,
             const std::filesystem::path& path) {
  Context cr(cairo_create(surface));
  cairo_scale(cr.get(), scale, scale);
  cairo_set_source_rgb(cr.get(), 1, 1, 1);
  cairo_rectangle(cr.get(), 0, 0, size.width, size.height);
  cairo_fill(cr.get());
  draw(cr.get());
  check(cairo_status(cr.get()), path, "drawing failed");
}

// The images a figure embeds are cells (a heatmap, a colorbar's 256
// entries), each texel a value: drawn scaled up, they must keep hard
// edges. PNG and PDF do (nearest filtering); Cairo's SVG says nothing, and
// viewers smooth the cells into each other. Both spellings: the SVG 1.1
// attribute and the CSS property browsers read.
std::string crisp_images(std::string svg) {
  const std::string tag = "<image ",
                    crisp = "<image image-rendering=\"optimizeSpeed\" style=\"image-rendering:pixelated\" ";
  for (std::size_t at = 0; (at = svg.find(tag, at)) != std::string::npos; at += crisp.size())
    svg.replace(at, tag.size(), crisp);
  return svg;
}

Surface raster_surface(FigureSize size, double dpi) {
  const int w = pixels_for(size.width, dpi), h = pixels_for(size.height, dpi);
  // Cairo's image surfaces stop at 32767 pixels a side.
  if (w > 32767 || h > 32767 || double(w) * h > 400e6)
    throw Error("figure", "dpi", std::to_string(w) + " x " + std::to_string(h) + " pixels is too large a PNG; lower the DPI");
  return Surface(cairo_image_surface_create(CAIRO_FORMAT_ARGB32, w, h));
}

}  // namespace

int pixels_for(double points, double dpi) { return std::max(1, static_cast<int>(std::ceil(points * dpi / 72.0 - 1e-9))); }

std::vector<std::filesystem::path> write_figure(const std::filesystem::path& stem, FigureSize size,
                                                const DrawFigure& draw, const FigureOutput& out) {
  if (const std::string bad = check_dpi(out.dpi); !bad.empty()) throw Error(stem.string(), "dpi", bad);
  std::vector<std::filesystem::path> written;
  for (FigureFormat f : out.formats) {
    std::filesystem::path path = stem;
    path += std::string(".") + figure_format_name(f);
    write_file_atomically(path, [&](std::ostream& os) {
      // PNG and SVG are drawn into memory and get their metadata added
      // after (Cairo has no API for either); the PDF takes it from Cairo.
      std::ostringstream mem;
      if (f == FigureFormat::png) {
        Surface s = raster_surface(size, out.dpi);
        check(cairo_surface_status(s.get()), path, "cannot make the image");
        draw_on(s.get(), out.dpi / 72.0, size, draw, path);
        check(cairo_surface_write_to_png_stream(s.get(), write_to_stream, &mem), path, "cannot write the PNG");
        os << with_png_text(mem.str(), out.metadata);
        return;
      }
      const bool svg = f == FigureFormat::svg;
      Surface s(svg ? cairo_svg_surface_create_for_stream(write_to_stream, &mem, size.width, size.height)
                    : cairo_pdf_surface_create_for_stream(write_to_stream, &os, size.width, size.height));
      check(cairo_surface_status(s.get()), path, "cannot start the file");
      if (!svg) {
        const std::string& creator = out.metadata.software;
        cairo_pdf_surface_set_metadata(s.get(), CAIRO_PDF_METADATA_CREATOR,
                                       creator.empty() ? "kvscope" : creator.c_str());
        if (!out.metadata.provenance.empty())
          cairo_pdf_surface_set_metadata(s.get(), CAIRO_PDF_METADATA_SUBJECT, out.metadata.provenance.c_str());
      }
      // An SVG's labels are recorded as <text> while it is drawn (figures/svg_text.h).
      std::optional<SvgTextRecorder> svg_text;
      if (svg) svg_text.emplace();
      draw_on(s.get(), 1.0, size, draw, path);
      cairo_surface_finish(s.get());  // writes everything out through the stream
      check(cairo_surface_status(s.get()), path, "cannot write the file");
      if (svg) os << with_svg_metadata(svg_text->insert_into(crisp_images(mem.str())), out.metadata);
    });
    written.push_back(path);
  }
  return written;
}

Rgb Raster::at(int x, int y) const {
  const uint32_t p = argb.at(std::size_t(y) * width + x);
  return {uint8_t(p >> 16), uint8_t(p >> 8), uint8_t(p)};
}

Raster render_raster(FigureSize size, double dpi, const DrawFigure& draw) {
  Surface s = raster_surface(size, dpi);
  check(cairo_surface_status(s.get()), "figure", "cannot make the image");
  draw_on(s.get(), dpi / 72.0, size, draw, "figure");
  cairo_surface_flush(s.get());
  Raster r;
  r.width = cairo_image_surface_get_width(s.get());
  r.height = cairo_image_surface_get_height(s.get());
  const int stride = cairo_image_surface_get_stride(s.get());
  const unsigned char* data = cairo_image_surface_get_data(s.get());
  r.argb.resize(std::size_t(r.width) * r.height);
  for (int y = 0; y < r.height; ++y)
    for (int x = 0; x < r.width; ++x)
      r.argb[std::size_t(y) * r.width + x] = reinterpret_cast<const uint32_t*>(data + std::size_t(y) * stride)[x];
  return r;
}

void set_color(cairo_t* cr, Rgb c, double alpha) { cairo_set_source_rgba(cr, c.r / 255.0, c.g / 255.0, c.b / 255.0, alpha); }

void fill_box(cairo_t* cr, const Box& b, Rgb c) {
  set_color(cr, c);
  cairo_rectangle(cr, b.x, b.y, b.w, b.h);
  cairo_fill(cr);
}

void stroke_box(cairo_t* cr, const Box& b, Rgb c, double width) {
  set_color(cr, c);
  cairo_set_line_width(cr, width);
  cairo_rectangle(cr, b.x, b.y, b.w, b.h);
  cairo_stroke(cr);
}

void line(cairo_t* cr, double x0, double y0, double x1, double y1, Rgb c, double width) {
  set_color(cr, c);
  cairo_set_line_width(cr, width);
  cairo_move_to(cr, x0, y0);
  cairo_line_to(cr, x1, y1);
  cairo_stroke(cr);
}

}  // namespace kvscope
