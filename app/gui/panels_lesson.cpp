// The lesson panel: the caption of the open lesson and what to look at,
// large enough to read from the back of a lecture hall in presenter mode.
#include <imgui.h>

#include "panels.h"

namespace kvscope::gui {

void draw_lesson_panel(AppState& s) {
  if (s.lesson_title.empty() && s.lesson_caption.empty()) {
    ImGui::TextDisabled("No lesson open.");
    ImGui::TextWrapped("Lessons (menu bar) open a prepared session in one click, with a caption and what to look at.");
    for (const LessonEntry& l : s.shell.lessons)
      if (ImGui::SmallButton(l.title.c_str())) action_open_lesson(s, l);
    return;
  }
  // The window's title bar shows the title; repeated here wrapped, since a
  // long title is cut off up there.
  ImGui::PushStyleColor(ImGuiCol_Text, ImVec4{1.0f, 0.85f, 0.4f, 1});
  ImGui::TextWrapped("%s", s.lesson_title.c_str());
  ImGui::PopStyleColor();
  ImGui::Spacing();
  ImGui::TextWrapped("%s", s.lesson_caption.c_str());
  if (!s.lesson_look_at.empty()) {
    ImGui::Spacing();
    ImGui::TextColored({0.55f, 0.8f, 1.0f, 1}, "Look at:");
    ImGui::TextWrapped("%s", s.lesson_look_at.c_str());
  }
}

}  // namespace kvscope::gui
