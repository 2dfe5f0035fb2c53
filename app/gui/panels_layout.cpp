// Where each panel window goes by default: a left column of controls, the
// main view in the centre under the transport bar, the layers x heads grid
// and the lesson on the right, the token strip, score curves and metrics
// along the bottom, the status bar last. Computed from the display size and
// the UI scale, so it fits 1600x1000 and grows with HiDPI; imgui.ini keeps
// whatever the user moved afterwards (ImGuiCond_FirstUseEver).
#include <algorithm>

#include <imgui.h>

#include "panels.h"

namespace kvscope::gui {

namespace {

ImVec4 default_place(PanelSlot slot, float scale, bool presenter) {
  const ImGuiIO& io = ImGui::GetIO();
  const float W = io.DisplaySize.x, H = io.DisplaySize.y;
  const float menu_h = ImGui::GetFrameHeight();
  const float status_h = ImGui::GetFrameHeight() + 2 * ImGui::GetStyle().WindowPadding.y;
  const float top = menu_h, bottom = H - status_h;
  const float left_w = std::clamp(0.23f * W, 300 * scale, 440 * scale);
  const float right_w = std::clamp(0.22f * W, 260 * scale, 420 * scale);
  const float centre_x = left_w, centre_w = std::max(100.0f, W - left_w - right_w);
  const float transport_h = 3 * ImGui::GetFrameHeightWithSpacing() + 2 * ImGui::GetStyle().WindowPadding.y;
  const float band_h = std::max(200 * scale, 0.31f * (bottom - top));
  const float token_h = std::max(90 * scale, 0.36f * band_h);
  const float band_y = bottom - band_h;
  const float grid_h = 0.62f * (band_y - top);
  const float curves_w = 0.55f * (centre_w + right_w);
  if (presenter) {
    // For a room: the heatmap and the lesson's caption take the screen.
    // The caption (with Back / Next) is a column on the left, the
    // transport a bar over the heatmap, which gets everything else; the
    // expert panels are not drawn (presenter_panel).
    const float lesson_w = std::clamp(0.25f * W, std::min(300.0f, 0.4f * W), 0.4f * W);
    // One line of transport (panels_transport.cpp keeps it to one).
    const float bar_h = ImGui::GetFrameHeightWithSpacing() + 2 * ImGui::GetStyle().WindowPadding.y;
    switch (slot) {
      case PanelSlot::Lesson: return {0, top, lesson_w, bottom - top};
      case PanelSlot::Transport: return {lesson_w, top, W - lesson_w, bar_h};
      case PanelSlot::MainView: return {lesson_w, top + bar_h, W - lesson_w, bottom - top - bar_h};
      case PanelSlot::StatusBar: return {0, bottom, W, status_h};
      default: return {0, top, 0, 0};  // not drawn in presenter mode
    }
  }
  switch (slot) {
    case PanelSlot::Controls: return {0, top, left_w, bottom - top};
    case PanelSlot::Transport: return {centre_x, top, centre_w, transport_h};
    case PanelSlot::MainView: return {centre_x, top + transport_h, centre_w, band_y - top - transport_h};
    case PanelSlot::Grid: return {centre_x + centre_w, top, right_w, grid_h};
    case PanelSlot::Lesson: return {centre_x + centre_w, top + grid_h, right_w, band_y - top - grid_h};
    case PanelSlot::TokenStrip: return {centre_x, band_y, centre_w + right_w, token_h};
    case PanelSlot::ScoreCurves: return {centre_x, band_y + token_h, curves_w, band_h - token_h};
    case PanelSlot::Metrics: return {centre_x + curves_w, band_y + token_h, centre_w + right_w - curves_w, band_h - token_h};
    case PanelSlot::StatusBar: return {0, bottom, W, status_h};
  }
  return {0, 0, 400, 300};
}

}  // namespace

void record_rect(AppState& s, const std::string& name, ImVec2 pos, ImVec2 size) {
  const ImVec2 fb = ImGui::GetIO().DisplayFramebufferScale;
  s.shell.rects[name] = {pos.x * fb.x, pos.y * fb.y, size.x * fb.x, size.y * fb.y};
}

bool begin_panel(AppState& s, const char* title, const char* id, PanelSlot slot, int extra_flags) {
  const ImVec4 place = default_place(slot, s.ui_scale, s.presenter);
  // The status bar always sticks to the bottom edge; the rest go to their
  // default place once, and again on View > Reset layout.
  // Presenter mode's layout is fixed (nothing to rearrange in front of a
  // room, and a layout saved at another size must not shrink the heatmap).
  const ImGuiCond cond =
      (slot == PanelSlot::StatusBar || s.shell.reset_layout || s.presenter) ? ImGuiCond_Always : ImGuiCond_FirstUseEver;
  ImGui::SetNextWindowPos({place.x, place.y}, cond);
  ImGui::SetNextWindowSize({place.z, place.w}, cond);
  ImGuiWindowFlags flags = ImGuiWindowFlags_NoCollapse | extra_flags;
  // (no title bars either: the lesson panel shows its title, the rest
  // speak for themselves, and the room gets the pixels)
  if (s.presenter) flags |= ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize | ImGuiWindowFlags_NoTitleBar;
  if (slot == PanelSlot::StatusBar)
    flags |= ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoSavedSettings |
             ImGuiWindowFlags_NoBringToFrontOnFocus;
  // "Title###id": the shown title may change (presenter mode) while the
  // id that imgui.ini and the tests know stays the same.
  const std::string label = std::string(title) + "###" + id;
  const bool open = ImGui::Begin(label.c_str(), nullptr, flags);
  const ImVec2 pos = ImGui::GetWindowPos();
  record_rect(s, std::string("panel.") + id, pos, ImGui::GetWindowSize());
  // Where its items are drawn: inside the padding and any scrollbar (an
  // item past it is clipped even where the panel's rect would still hold it).
  const ImVec2 lo = ImGui::GetWindowContentRegionMin(), hi = ImGui::GetWindowContentRegionMax();
  record_rect(s, std::string("content.") + id, ImVec2(pos.x + lo.x, pos.y + lo.y), ImVec2(hi.x - lo.x, hi.y - lo.y));
  return open;
}

bool presenter_panel(PanelSlot slot) {
  return slot == PanelSlot::Lesson || slot == PanelSlot::Transport || slot == PanelSlot::MainView ||
         slot == PanelSlot::StatusBar;
}

void record_item_rect(AppState& s, const std::string& name) {
  const ImVec2 lo = ImGui::GetItemRectMin(), hi = ImGui::GetItemRectMax();
  record_rect(s, name, lo, {hi.x - lo.x, hi.y - lo.y});
}

void help_tooltip(const char* text) {
  if (!ImGui::IsItemHovered()) return;
  ImGui::BeginTooltip();
  ImGui::PushTextWrapPos(ImGui::GetFontSize() * 32);
  ImGui::TextUnformatted(text);
  ImGui::PopTextWrapPos();
  ImGui::EndTooltip();
}

}  // namespace kvscope::gui
