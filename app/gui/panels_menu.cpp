// The menu bar (File, View, Lessons, Help) and the error banner.
#include <imgui.h>
#include <imgui_internal.h>  // BringWindowToDisplayFront: the error banner stays on top

#include "panels.h"

namespace kvscope::gui {

void draw_main_menu(AppState& s) {
  if (!ImGui::BeginMainMenuBar()) return;
  if (ImGui::BeginMenu("File")) {
    if (ImGui::MenuItem("Open the bundled model")) action_open_model(s, "");
    for (const std::string& m : s.recent_models)
      if (ImGui::MenuItem(("Open " + m).c_str())) action_open_model(s, m);
    ImGui::Separator();
    if (ImGui::MenuItem("Export...", "Ctrl+E")) s.show_export = true;
    ImGui::Separator();
    if (ImGui::MenuItem("Quit", "Ctrl+Q")) s.shell.want_quit = true;
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("View")) {
    ImGui::MenuItem("Presenter mode", "P", &s.presenter);
    ImGui::MenuItem("Share one colour range", nullptr, &s.view.shared_range);
    if (ImGui::MenuItem("Reset layout")) s.shell.reset_layout = true;
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("Lessons")) {
    if (s.shell.lessons.empty()) ImGui::TextDisabled("no lessons in assets/lessons");
    for (const LessonEntry& l : s.shell.lessons)
      if (ImGui::MenuItem(l.title.c_str())) action_open_lesson(s, l);
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("Help")) {
    ImGui::MenuItem("Keys", "F1", &s.show_help);
    ImGui::EndMenu();
  }
  if (s.presenter) ImGui::TextDisabled("   presenter mode");
  ImGui::EndMainMenuBar();
}

void draw_error_banner(AppState& s) {
  if (s.shell.error_banner.empty()) return;
  // Across the top of the main view, where the eye already is; the
  // current session stays as it was and the banner stays until dismissed.
  const auto it = s.shell.rects.find("panel.main_view");
  const ImVec2 fb = ImGui::GetIO().DisplayFramebufferScale;
  ImVec2 pos{0, ImGui::GetFrameHeight()}, size{ImGui::GetIO().DisplaySize.x, 0};
  if (it != s.shell.rects.end()) {
    pos = {it->second.x / fb.x, it->second.y / fb.y};
    size.x = it->second.w / fb.x;
  }
  ImGui::SetNextWindowPos(pos, ImGuiCond_Always);
  ImGui::SetNextWindowSize({size.x, 0}, ImGuiCond_Always);
  ImGui::PushStyleColor(ImGuiCol_WindowBg, ImVec4{0.55f, 0.08f, 0.08f, 0.96f});
  ImGui::PushStyleColor(ImGuiCol_Border, ImVec4{1, 0.3f, 0.3f, 1});
  if (ImGui::Begin("##error", nullptr,
                   ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_AlwaysAutoResize |
                       ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoFocusOnAppearing)) {
    // Over every panel, every frame: a banner that opens behind the main
    // view (focus moved there since the last one) would be an error nobody sees.
    ImGui::BringWindowToDisplayFront(ImGui::GetCurrentWindow());
    ImGui::PushTextWrapPos(size.x - ImGui::CalcTextSize("Dismiss").x - 4 * ImGui::GetStyle().ItemSpacing.x);
    ImGui::TextUnformatted(s.shell.error_banner.c_str());
    // What to do next: the error names the file and field to fix; say
    // what is still open.
    ImGui::TextColored(
        {1, 0.8f, 0.8f, 1}, "%s",
        s.a ? "The session shown is unchanged. Fix what the message names and try again."
            : "No session is open: open a model or a session file (File menu, or Controls, Model & device).");
    ImGui::PopTextWrapPos();
    ImGui::SameLine();
    if (ImGui::Button("Dismiss")) s.shell.error_banner.clear();
    record_item_rect(s, "button.dismiss_error");
    s.shell.rects["banner.error"] = {ImGui::GetWindowPos().x * fb.x, ImGui::GetWindowPos().y * fb.y,
                                     ImGui::GetWindowSize().x * fb.x, ImGui::GetWindowSize().y * fb.y};
  }
  ImGui::End();
  ImGui::PopStyleColor(2);
}

void note_window_over_error(AppState& s) {
  s.shell.window_over_error.clear();
  const auto it = s.shell.rects.find("banner.error");
  if (it == s.shell.rects.end()) return;
  const ImVec2 fb = ImGui::GetIO().DisplayFramebufferScale;
  const ImVec2 centre{(it->second.x + it->second.w / 2) / fb.x, (it->second.y + it->second.h / 2) / fb.y};
  // ImGui draws the windows shown this frame in the order of its window
  // list (back to front; child windows with their parents): the last one
  // containing the point is what the eye sees there.
  for (ImGuiWindow* w : GImGui->Windows) {
    if (!w->Active || w->Hidden || (w->Flags & ImGuiWindowFlags_ChildWindow)) continue;
    if (w->Rect().Contains(centre)) s.shell.window_over_error = w->Name;
  }
}

}  // namespace kvscope::gui
