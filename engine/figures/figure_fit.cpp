#include "figures/figure_fit.h"

#include <cairo.h>

#include <cmath>
#include <cstdio>

#include "common/error.h"

namespace kvscope {

FigureFit fit_figure(const FigureSizeSpec& spec, const std::function<FigureSize(const LayoutFit&)>& layout_at) {
  FigureFit fit;
  if (spec.kind == FigureSizeSpec::Kind::natural) {
    fit.page = layout_at(fit.layout);
    return fit;
  }
  const double W = spec.width, H = spec.height;  // H == 0: any height
  auto fits = [&](const FigureSize& s) { return s.width <= W + 1e-9 && (H <= 0 || s.height <= H + 1e-9); };
  LayoutFit lf{1, true, W};
  FigureSize size = layout_at(lf);
  if (!fits(size)) {
    // The largest shrink that fits, by bisection (the layout's size grows
    // with the shrink, in steps where labels are thinned or dropped).
    LayoutFit lo{kMinShrink, true, W};
    const FigureSize smallest = layout_at(lo);
    if (!fits(smallest)) {
      char buf[200];
      std::snprintf(
          buf, sizeof(buf),
          "the figure needs at least %.0f x %.0f pt to keep its text at %g pt or more; %.0f x %.0f pt asked for",
          smallest.width, smallest.height, kMinFontPt, W, H > 0 ? H : smallest.height);
      throw Error::setting("export.figure_size", spec.str() + ": " + buf);
    }
    double good = kMinShrink, bad = 1;
    for (int i = 0; i < 18 && bad - good > 1e-3; ++i) {
      const double mid = (good + bad) / 2;
      (fits(layout_at({mid, true, W})) ? good : bad) = mid;
    }
    lf.shrink = good;
    size = layout_at(lf);
  }
  fit.layout = lf;
  fit.scale = W / size.width;
  if (H > 0) fit.scale = std::min(fit.scale, H / size.height);
  fit.page = {W, H > 0 ? H : size.height * fit.scale};
  fit.dx = (fit.page.width - size.width * fit.scale) / 2;
  fit.dy = (fit.page.height - size.height * fit.scale) / 2;
  return fit;
}

DrawFigure fitted_drawing(const FigureFit& fit, const DrawFigure& draw) {
  return [fit, &draw](cairo_t* cr) {
    cairo_save(cr);
    cairo_translate(cr, fit.dx, fit.dy);
    cairo_scale(cr, fit.scale, fit.scale);
    draw(cr);
    cairo_restore(cr);
  };
}

std::vector<std::filesystem::path> write_fitted_figure(const std::filesystem::path& stem, const FigureFit& fit,
                                                       const DrawFigure& draw, const FigureOutput& out) {
  return write_figure(stem, fit.page, fitted_drawing(fit, draw), out);
}

}  // namespace kvscope
