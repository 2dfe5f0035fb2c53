// The settings a figure is asked for by name — file formats, PNG DPI, the
// colour scale and its range, how evicted cells show — with their checks,
// apart from the drawing in figures/: a session file's export block is
// checked where the file is read (session/session_config.cpp), and the step
// loop does not link Cairo for it. Names and numbers only, like colormap.h.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kvscope {

enum class FigureFormat { png, svg, pdf };

// "png" -> png; std::nullopt for anything else.
std::optional<FigureFormat> parse_figure_format(std::string_view name);
const char* figure_format_name(FigureFormat f);  // also the file extension
// "" when every name is a format and there is at least one, else what is wrong
// ("unknown format 'gif' (known: png, svg, pdf)"), for callers that name the
// flag or field themselves.
std::string check_figure_formats(const std::vector<std::string>& names);
std::vector<FigureFormat> parse_figure_formats(const std::vector<std::string>& names);  // after the check

inline constexpr double kMinDpi = 36, kMaxDpi = 600, kDefaultDpi = 150;
// "" for a DPI kvscope draws at, else what is wrong.
std::string check_dpi(double dpi);

enum class ScaleKind { linear, log };

// "" for linear/log, else what is wrong.
std::string check_scale_name(std::string_view name);
ScaleKind parse_scale(std::string_view name);  // after the check

// Where a colour range comes from (figures/color_scale.h): each figure's own
// data (auto), one range over every figure drawn together (shared), or fixed
// ends (LO:HI).
struct RangeSpec {
  enum class Kind { automatic, shared, fixed };
  Kind kind = Kind::shared;
  double lo = 0, hi = 1;  // fixed only

  // "auto", "shared" or "LO:HI" (LO < HI, finite). Throws
  // kvscope::Error(field, ...) for anything else.
  static RangeSpec parse(std::string_view text, const std::string& field);
  std::string str() const;
};
// "" when `text` parses as a range usable with `scale` (a log scale needs
// LO > 0), else what is wrong; for callers that name the flag or field.
std::string check_range(std::string_view text, ScaleKind scale);

// How evicted cells show (figures/heatmap_panel.h draws them): a strip of
// the mask under the heatmap, outlines on it, or nothing.
enum class EvictedStyle { outline, strip, none };
std::string check_evicted_style(std::string_view name);   // "" or what is wrong
EvictedStyle parse_evicted_style(std::string_view name);  // after the check
const char* evicted_style_name(EvictedStyle s);

// The printed size of a figure. `column` is a journal's single column
// (3.3 in wide), `page` a full page width (6.9 in); both take their height
// from the figure's own aspect. WxH with a unit (in, pt, cm, mm: "3.3x2.5in",
// "240x180pt") fixes both sides. `natural` (the default) is the size the
// figure's content asks for. Whatever the size, no text is printed smaller
// than kMinFontPt: the layout shrinks (plot area, cells, labels thinned),
// never the fonts (figures/figure_fit.h). The one definition of these sizes;
// the CLI, session files and docs read them from here.
inline constexpr double kColumnWidthIn = 3.3, kPageWidthIn = 6.9, kMinFontPt = 6;
inline constexpr double kMinFigureSidePt = 72, kMaxFigureSidePt = 40 * 72;  // 1 in .. 40 in
struct FigureSizeSpec {
  enum class Kind { natural, column, page, exact };
  Kind kind = Kind::natural;
  double width = 0, height = 0;  // points; height 0: from the figure's aspect

  // "natural", "column", "page" or WxH with a unit. Throws
  // kvscope::Error(field, ...) for anything else.
  static FigureSizeSpec parse(std::string_view text, const std::string& field);
  std::string str() const;
};
// "" when `text` is a figure size, else what is wrong; for callers that
// name the flag or field.
std::string check_figure_size(std::string_view text);

// Key positions A..B (inclusive, A <= B) a heatmap is cropped to.
struct PositionRange {
  int first = 0, last = -1;
  bool all() const { return last < 0; }
  // "A:B" or "all". Throws kvscope::Error(field, ...) for anything else.
  static PositionRange parse(std::string_view text, const std::string& field);
  std::string str() const;
};
std::string check_positions(std::string_view text);  // "" or what is wrong

}  // namespace kvscope
