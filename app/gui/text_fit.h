// Text and rows of controls made to fit a width in the current ImGui font:
// text wrapped into lines for labels that cannot wrap themselves (buttons),
// or cut with an ellipsis where one line is all there is (the status bar);
// a toolbar's next control on the same line only when it fits there.
#pragma once

#include <string>

namespace kvscope::gui {

// `text` broken at spaces into lines no wider than `width` ('\n' between
// them); a word wider than `width` stays whole on a line of its own.
std::string wrapped_to(const std::string& text, float width);

// `text` when it fits `width`, else its longest prefix (whole UTF-8
// characters) that fits with "…" after it.
std::string cut_to(const std::string& text, float width);

// ImGui::SameLine() when an item `width` wide still fits on the line of the
// last item, else nothing (the next item starts a new line): a toolbar
// wraps in a narrow window instead of running past its edge.
void same_line_if_fits(float width);
// The widths same_line_if_fits needs for the usual items.
float checkbox_width(const char* label);
float small_button_width(const char* label);

}  // namespace kvscope::gui
