// The window's fonts: DejaVu Sans (fonts-dejavu-core) with the scripts
// token text needs, a CJK font merged in when one is installed, ImGui's
// built-in font when DejaVu is missing. Two sizes are baked: the normal one
// and the presenter one (x1.6), so presenter mode stays sharp.
#pragma once

struct ImFont;

namespace kvscope::gui {

struct FontSet {
  ImFont* normal = nullptr;
  ImFont* presenter = nullptr;
  bool unicode = false;  // false: ImGui's default font (ASCII only)
};

inline constexpr float kPresenterFontFactor = 1.6f;

// `scale`: the monitor's content scale (HiDPI).
FontSet load_fonts(float scale);

}  // namespace kvscope::gui
