#include "views/token_text.h"

namespace kvscope::gui {

std::string visible_token(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (c == '\r') out += "\\r";
    else out += c;
  }
  return out;
}

std::string display_token(const std::vector<std::string>& texts, int position) {
  if (position < 0 || position >= static_cast<int>(texts.size())) {
    std::string out = "#";
    out += std::to_string(position);
    return out;
  }
  return visible_token(texts[position]);
}

}  // namespace kvscope::gui
