// The status bar along the bottom edge: step, tokens, KV bytes now / full,
// step time, frame time, device, and what the worker is doing.
#include <imgui.h>

#include "panels.h"

namespace kvscope::gui {

void draw_status_bar(AppState& s) {
  if (!s.a) {
    ImGui::TextUnformatted(s.status.busy ? ("loading: " + s.status.task).c_str() : "no session");
    return;
  }
  const PublishedRun& a = *s.a;
  const int row = s.shown_row();
  ImGui::Text("step %d / %d%s", row, a.rows - 1, s.timeline_row >= 0 ? " (scrubbed)" : "");
  ImGui::SameLine(0, ImGui::GetFontSize() * 1.5f);
  ImGui::Text("tokens %zu", a.tokens.size());
  ImGui::SameLine(0, ImGui::GetFontSize() * 1.5f);
  ImGui::Text("KV %s / full %s", format_bytes(static_cast<double>(a.kv_bytes)).c_str(),
              format_bytes(static_cast<double>(a.kv_bytes_full)).c_str());
  ImGui::SameLine(0, ImGui::GetFontSize() * 1.5f);
  ImGui::Text("step %.1f ms", a.last_step_ms);
  ImGui::SameLine(0, ImGui::GetFontSize() * 1.5f);
  ImGui::Text("frame %.0f ms", s.shell.frame_ms_shown);
  ImGui::SameLine(0, ImGui::GetFontSize() * 1.5f);
  ImGui::TextUnformatted(a.device.c_str());
  ImGui::SameLine(0, ImGui::GetFontSize() * 1.5f);
  ImGui::TextDisabled("%s", a.policy_label.c_str());
  if (s.status.busy || s.status.playing) {
    ImGui::SameLine(0, ImGui::GetFontSize() * 1.5f);
    ImGui::TextColored({0.55f, 0.85f, 0.55f, 1}, "%s", s.status.playing ? "playing" : s.status.task.c_str());
  }
  if (!s.shell.message_line.empty()) {
    ImGui::SameLine(0, ImGui::GetFontSize() * 1.5f);
    ImGui::TextDisabled("%s", s.shell.message_line.c_str());
  }
}

}  // namespace kvscope::gui
