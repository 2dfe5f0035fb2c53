#include "text_fit.h"

#include <imgui.h>

namespace kvscope::gui {

std::string wrapped_to(const std::string& text, float width) {
  std::string out, line;
  std::size_t at = 0;
  while (at <= text.size()) {
    std::size_t end = text.find(' ', at);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(at, end - at);
    const std::string joined = line.empty() ? word : line + " " + word;
    if (!line.empty() && ImGui::CalcTextSize(joined.c_str()).x > width) {
      out += (out.empty() ? "" : "\n") + line;
      line = word;
    } else {
      line = joined;
    }
    at = end + 1;
  }
  if (!line.empty()) out += (out.empty() ? "" : "\n") + line;
  return out;
}

std::string cut_to(const std::string& text, float width) {
  if (ImGui::CalcTextSize(text.c_str()).x <= width) return text;
  const std::string ellipsis = "\xe2\x80\xa6";
  std::size_t n = text.size();
  while (n > 0) {
    do --n;  // back to the start of a UTF-8 character
    while (n > 0 && (static_cast<unsigned char>(text[n]) & 0xC0) == 0x80);
    const std::string cut = text.substr(0, n) + ellipsis;
    if (ImGui::CalcTextSize(cut.c_str()).x <= width) return cut;
  }
  return ellipsis;
}

void same_line_if_fits(float width) {
  const float right = ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x;
  if (ImGui::GetItemRectMax().x + ImGui::GetStyle().ItemSpacing.x + width <= right) ImGui::SameLine();
}

float checkbox_width(const char* label) {
  return ImGui::GetFrameHeight() + ImGui::GetStyle().ItemInnerSpacing.x + ImGui::CalcTextSize(label).x;
}

float small_button_width(const char* label) {
  return ImGui::CalcTextSize(label).x + 2 * ImGui::GetStyle().FramePadding.x;
}

}  // namespace kvscope::gui
