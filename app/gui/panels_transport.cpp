// The transport bar: step, run N, play/pause with a speed, reset, fork,
// cancel with progress while the worker is busy, and the timeline over
// every recorded row.
#include <algorithm>

#include <imgui.h>

#include "panels.h"
#include "text_fit.h"

namespace kvscope::gui {

namespace {

// The sizes of the buttons' line that have a compact form: the N field and
// the speed slider, in line heights, and "Drop fork"'s label. A narrow
// panel (a 1024-pixel window) gets the compact set rather than buttons cut
// at its edge: the panel has one line for them.
struct TransportWidths {
  float n_field = 4, speed = 7;
  const char* drop = "Drop fork";
  const char* speed_format = "%.1f steps/s";
};
constexpr TransportWidths kCompact{2.5f, 4.5f, "Drop", "%.1f/s"};

// While busy, the progress bar after Cancel keeps at least this many line
// heights of the line.
constexpr float kProgressMinLines = 6;

}  // namespace

void draw_transport_panel(AppState& s) {
  const bool playing = s.status.playing;
  const bool no_run = !s.a;  // nothing to step yet (loading, or the model failed to open)
  // The line is measured as it is drawn (a frame late, as ImGui lays out):
  // whichever buttons it shows this frame (the fork's Drop, the busy
  // Cancel) count, each item listed once, here. `saved`: what the compact
  // forms took off the default sizes, so the default line's width is
  // known while the compact one is on screen.
  // Presenter mode keeps what a talk needs: step, play, reset, the timeline.
  const bool expert = !s.presenter;
  const bool compact = expert && s.shell.transport_line_width > ImGui::GetContentRegionAvail().x;
  const TransportWidths widths = compact ? kCompact : TransportWidths{};
  const TransportWidths defaults;
  const float lh = ImGui::GetTextLineHeight();
  const float line_x = ImGui::GetCursorScreenPos().x;
  float saved = 0, line_end = line_x;
  auto measure = [&] { line_end = ImGui::GetItemRectMax().x; };
  ImGui::BeginDisabled(no_run);
  if (ImGui::Button("Step")) action_step(s);
  record_item_rect(s, "button.step");
  measure();
  help_tooltip(
      "Right arrow: one decoding step (from the scrubbed row when you scrubbed back: the later rows are dropped).");
  ImGui::SameLine();
  if (expert) {
    if (ImGui::Button("Run N") && s.worker) {
      s.worker->step(s.shell.run_n);
      s.timeline_row = -1;
    }
    record_item_rect(s, "button.run_n");
    ImGui::SameLine();
    ImGui::SetNextItemWidth(lh * widths.n_field);
    if (ImGui::InputInt("##n", &s.shell.run_n, 0, 0)) s.shell.run_n = std::clamp(s.shell.run_n, 1, 100000);
    saved += (defaults.n_field - widths.n_field) * lh;
    help_tooltip("N: the steps \"Run N\" takes.");
    ImGui::SameLine();
  }
  if (ImGui::Button(playing ? "Pause" : "Play ", {ImGui::CalcTextSize("Pause").x + 2 * ImGui::GetStyle().FramePadding.x, 0}))
    action_toggle_play(s);
  record_item_rect(s, "button.play");
  measure();
  help_tooltip("Space: play / pause.");
  if (expert) {
    ImGui::SameLine();
    float speed = static_cast<float>(s.status.play_steps_per_s);
    ImGui::SetNextItemWidth(lh * widths.speed);
    if (ImGui::SliderFloat("##speed", &speed, 0.5f, 60.0f, widths.speed_format, ImGuiSliderFlags_Logarithmic) &&
        s.worker)
      s.worker->set_play_speed(speed);
    saved += (defaults.speed - widths.speed) * lh;
    help_tooltip("Play speed (the engine may be slower on a large model).");
  }
  ImGui::SameLine();
  if (ImGui::Button("Reset")) action_reset(s);
  record_item_rect(s, "button.reset");
  measure();
  help_tooltip("R: A again from its prompt (the fork is dropped).");
  if (expert) {
    ImGui::SameLine();
    if (ImGui::Button("Fork")) action_fork(s);
    record_item_rect(s, "button.fork");
    measure();
    help_tooltip("F: fork B here under the policy of the Fork panel.");
  }
  if (s.b && expert) {
    ImGui::SameLine();
    if (ImGui::Button(widths.drop) && s.worker) s.worker->drop_fork();
    record_item_rect(s, "button.drop_fork");
    measure();
    saved += small_button_width(defaults.drop) - small_button_width(widths.drop);
    help_tooltip("Drop fork B (A stays as it is).");
  }

  ImGui::EndDisabled();

  // Busy: what runs, how far, and a way out.
  if (s.status.busy) {
    ImGui::SameLine();
    if (ImGui::Button("Cancel") && s.worker) s.worker->cancel();
    record_item_rect(s, "button.cancel");
    measure();
    line_end += ImGui::GetStyle().ItemSpacing.x + kProgressMinLines * lh;
  }
  if (expert) s.shell.transport_line_width = line_end - line_x + saved;
  if (s.status.busy) {
    ImGui::SameLine();
    const float frac = s.status.progress >= 0 ? static_cast<float>(s.status.progress)
                                              : static_cast<float>(ImGui::GetTime() * 0.5 - static_cast<int>(ImGui::GetTime() * 0.5));
    ImGui::ProgressBar(frac, {-1, 0}, s.status.task.c_str());
    // Presenter mode keeps one line: the progress stands in for the timeline.
    if (s.presenter) return;
  }

  // The timeline: every recorded row; the right end follows the newest.
  // (Presenter mode: on the buttons' line, one bar less above the heatmap.)
  if (s.presenter) ImGui::SameLine();
  ImGui::BeginDisabled(no_run);
  const int latest = s.a ? s.a->rows - 1 : 0;
  int row = s.shown_row() < 0 ? 0 : s.shown_row();
  ImGui::SetNextItemWidth(-ImGui::CalcTextSize("latest").x - ImGui::GetFrameHeight() - 2 * ImGui::GetStyle().ItemSpacing.x);
  if (ImGui::SliderInt("##timeline", &row, 0, std::max(0, latest), row == latest ? "step %d (latest)" : "step %d (scrubbed)")) {
    s.timeline_row = row >= latest ? -1 : row;
    s.view.follow_latest = s.timeline_row < 0;
  }
  record_item_rect(s, "slider.timeline");
  help_tooltip("Scrub back over every recorded step: the views show that step exactly as it was recorded. "
               "Left arrow: one step back. Stepping from a scrubbed step continues from there.");
  ImGui::SameLine();
  bool follow = s.timeline_row < 0;
  if (ImGui::Checkbox("latest", &follow)) s.timeline_row = follow ? -1 : std::max(0, latest);
  ImGui::EndDisabled();
}

}  // namespace kvscope::gui
