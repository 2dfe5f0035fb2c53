#include "views/hover.h"

#include "imgui.h"

namespace kvscope::gui {
namespace {

int g_frame = -1;
int g_noted = -1;

}  // namespace

void begin_view_frame(AppState& s) {
  const int frame = ImGui::GetFrameCount();
  if (frame == g_frame) return;
  g_frame = frame;
  s.hovered_position = g_noted;
  g_noted = -1;
}

void note_hovered_position(AppState& s, int position) {
  g_noted = position;
  s.hovered_position = position;  // this frame's later panels see it at once
}

}  // namespace kvscope::gui
