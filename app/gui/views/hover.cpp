#include "views/hover.h"

#include "imgui.h"

namespace kvscope::gui {

void begin_view_frame(AppState& s) {
  const int frame = ImGui::GetFrameCount();
  if (frame == s.hover_frame) return;
  s.hover_frame = frame;
  s.hovered_position = s.hover_noted;
  s.hover_noted = -1;
}

void note_hovered_position(AppState& s, int position) {
  s.hover_noted = position;
  s.hovered_position = position;  // this frame's later panels see it at once
}

}  // namespace kvscope::gui
