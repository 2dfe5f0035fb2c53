// The keys, and the F1 overlay that lists them. Keys with a letter or a
// sign (R F , . [ ]) are read as typed characters so they follow the
// keyboard layout; Space, the arrows and F1 as keys. Nothing fires while a
// text field has the keyboard (io.WantTextInput). ImGui 1.86 has no
// ImGuiKey for letters: IsKeyPressed takes the backend's (GLFW's) codes.
#include <algorithm>

#include <imgui.h>

#include <GLFW/glfw3.h>

#include "panels.h"

namespace kvscope::gui {

namespace {

struct KeyHelp {
  const char* keys;
  const char* what;
};
constexpr KeyHelp kKeys[] = {
    {"Space", "play / pause"},
    {"Right", "one step (from the scrubbed step when scrubbed back)"},
    {"Left", "one step back on the timeline"},
    {"R", "reset: A again from its prompt"},
    {"F", "fork B at this step"},
    {", .", "previous / next layer"},
    {"[ ]", "previous / next head"},
    {"P", "presenter mode on / off"},
    {"F1", "this help"},
    {"Ctrl+E", "export (File > Export...)"},
    {"mouse wheel", "zoom the main view (over a label row: that axis only; Ctrl across, Shift down)"},
    {"right-drag", "draw a box to zoom to"},
    {"drag", "pan the main view"},
    {"Home", "fit: every step and position in view"},
};

// The modifiers come with the press itself: a quick Ctrl+Q may be over
// before ImGui's frame-time io.KeyCtrl sees Ctrl down.
bool pressed(const AppState& s, int glfw_key, int mods = 0) {
  return std::any_of(s.shell.pressed_keys.begin(), s.shell.pressed_keys.end(), [&](const ShellState::KeyPress& k) {
    return k.key == glfw_key && (k.mods & mods) == mods;
  });
}

bool typed(char c) {
  const ImGuiIO& io = ImGui::GetIO();
  for (int i = 0; i < io.InputQueueCharacters.Size; ++i)
    if (io.InputQueueCharacters[i] == static_cast<ImWchar>(c)) return true;
  return false;
}

}  // namespace

void handle_keyboard(AppState& s) {
  const ImGuiIO& io = ImGui::GetIO();
  // F1 and Esc in the order they were pressed: on a slow frame both can
  // arrive together, and Esc (leaving a field) then F1 must open the help.
  // Esc belongs to a text field that has the keyboard.
  for (const auto& k : s.shell.pressed_keys) {
    if (k.key == GLFW_KEY_F1) s.show_help = !s.show_help;
    if (k.key == GLFW_KEY_ESCAPE && !io.WantTextInput) s.show_help = false;
  }
  if (pressed(s, GLFW_KEY_Q, GLFW_MOD_CONTROL)) s.shell.want_quit = true;
  if (pressed(s, GLFW_KEY_E, GLFW_MOD_CONTROL)) s.show_export = !s.show_export;
  if (io.WantTextInput) return;
  if (pressed(s, GLFW_KEY_SPACE)) action_toggle_play(s);
  if (pressed(s, GLFW_KEY_HOME)) fit_view(s.view);
  // Each press or auto-repeat of an arrow counts once.
  for (const auto& k : s.shell.pressed_keys) {
    if (k.key == GLFW_KEY_RIGHT) action_step(s);
    if (k.key == GLFW_KEY_LEFT) action_step_back(s);
  }
  if (io.KeyCtrl || io.KeyAlt || io.KeySuper) return;  // leave shortcuts of the desktop alone
  if (typed('r') || typed('R')) action_reset(s);
  if (typed('f') || typed('F')) action_fork(s);
  if (typed(',')) action_select_layer(s, -1);
  if (typed('.')) action_select_layer(s, +1);
  if (typed('[')) action_select_head(s, -1);
  if (typed(']')) action_select_head(s, +1);
  if (typed('p') || typed('P')) s.presenter = !s.presenter;
}

void draw_help_overlay(AppState& s) {
  if (!s.show_help) return;
  const ImGuiIO& io = ImGui::GetIO();
  ImGui::SetNextWindowPos({io.DisplaySize.x * 0.5f, io.DisplaySize.y * 0.5f}, ImGuiCond_Always, {0.5f, 0.5f});
  ImGui::SetNextWindowBgAlpha(0.92f);
  if (ImGui::Begin("Keys (F1 or Esc to close)###help", &s.show_help,
                   ImGuiWindowFlags_AlwaysAutoResize | ImGuiWindowFlags_NoCollapse | ImGuiWindowFlags_NoSavedSettings)) {
    if (ImGui::BeginTable("keys", 2, ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV)) {
      for (const KeyHelp& k : kKeys) {
        ImGui::TableNextColumn();
        ImGui::TextColored({1.0f, 0.85f, 0.4f, 1}, "%s", k.keys);
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(k.what);
      }
      ImGui::EndTable();
    }
    ImGui::TextDisabled("Keys do nothing while a text field is being edited.");
  }
  ImGui::End();
}

}  // namespace kvscope::gui
