// Token text as the views print it: whitespace made visible (a newline as
// "\n", a tab as "\t"), so a label never breaks a line or vanishes.
#pragma once

#include <string>
#include <vector>

namespace kvscope::gui {

std::string visible_token(const std::string& text);
// visible_token of texts[position], or "#position" when there is no text.
std::string display_token(const std::vector<std::string>& texts, int position);

}  // namespace kvscope::gui
