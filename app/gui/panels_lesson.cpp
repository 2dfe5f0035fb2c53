// The lesson panel: the caption of the open lesson and what to look at,
// large enough to read from the back of a lecture hall in presenter mode,
// and the lesson's steps: Next moves the run and the view to what the next
// caption talks about.
#include <algorithm>
#include <string>

#include <imgui.h>

#include "app_frame.h"
#include "panels.h"
#include "text_fit.h"

namespace kvscope::gui {

void action_lesson_step(AppState& s, int step) {
  if (!s.lesson) return;
  s.lesson_step = std::clamp(step, -1, static_cast<int>(s.lesson->steps.size()) - 1);
  if (!s.a || !s.a->session || s.lesson_step < 0) return;
  adopt_view(s, s.lesson->steps[static_cast<size_t>(s.lesson_step)].view, *s.a, false);
}

void draw_lesson_panel(AppState& s) {
  if (!s.lesson) {
    ImGui::TextDisabled("No lesson open.");
    ImGui::TextWrapped("Lessons (menu bar) open a prepared session in one click, with a caption and what to look at.");
    // A title wider than the panel (presenter mode's large text) wraps
    // inside its button rather than running past the edge.
    const float width = ImGui::GetContentRegionAvail().x - 2 * ImGui::GetStyle().FramePadding.x;
    for (std::size_t i = 0; i < s.shell.lessons.size(); ++i) {
      const LessonEntry& l = s.shell.lessons[i];
      if (ImGui::SmallButton((wrapped_to(l.title, width) + "##lesson" + std::to_string(i)).c_str()))
        action_open_lesson(s, l);
    }
    return;
  }
  const LessonConfig& lesson = *s.lesson;
  const int steps = static_cast<int>(lesson.steps.size());
  s.lesson_step = std::clamp(s.lesson_step, -1, steps - 1);
  if (steps > 0) {
    // Back / Next first, where the presenter's hand goes, with where we are.
    ImGui::BeginDisabled(s.lesson_step < 0);
    if (ImGui::Button("\xe2\x97\x80 Back")) action_lesson_step(s, s.lesson_step - 1);
    ImGui::EndDisabled();
    ImGui::SameLine();
    ImGui::BeginDisabled(s.lesson_step + 1 >= steps || !s.a);
    if (ImGui::Button("Next \xe2\x96\xb6")) action_lesson_step(s, s.lesson_step + 1);
    record_item_rect(s, "button.lesson_next");
    ImGui::EndDisabled();
    ImGui::SameLine();
    ImGui::TextDisabled("%d / %d", s.lesson_step + 1, steps);
    ImGui::Separator();
  }
  // The window's title bar shows the title; repeated here wrapped, since a
  // long title is cut off up there.
  ImGui::PushStyleColor(ImGuiCol_Text, ImVec4{1.0f, 0.85f, 0.4f, 1});
  ImGui::TextWrapped("%s", lesson.title.c_str());
  ImGui::PopStyleColor();
  ImGui::Spacing();
  const LessonStep* step = s.lesson_step >= 0 ? &lesson.steps[static_cast<size_t>(s.lesson_step)] : nullptr;
  ImGui::TextWrapped("%s", step ? step->caption.c_str() : lesson.caption.c_str());
  const std::string& look_at = step ? step->look_at : lesson.look_at;
  if (!look_at.empty()) {
    ImGui::Spacing();
    ImGui::TextColored({0.55f, 0.8f, 1.0f, 1}, "Look at:");
    ImGui::TextWrapped("%s", look_at.c_str());
  }
}

}  // namespace kvscope::gui
