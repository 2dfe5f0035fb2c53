#include "app_frame.h"

#include <algorithm>

#include <imgui.h>
#include <imgui_internal.h>  // the main view's window rectangle and title bar (its background)

#include "launch_options.h"
#include "panels.h"
#include "session/session_file.h"
#include "views/views.h"

namespace kvscope::gui {

namespace {

// The model field's text for a run: "" for the bundled model (the field's
// hint names it), else the model's path.
std::string model_field_of(const PublishedRun& a) {
  return a.config.model == kvscope::absolute_model_path("") ? "" : a.config.model;
}

// The panels edit what the new session runs with; the policy in effect is
// the last policy change's when the session file scripted some.
void adopt_session(AppState& s, const PublishedRun& a) {
  s.editing = a.config;
  s.shell.model_path = model_field_of(a);
  s.pending.policy = a.config.policy_changes.empty() ? a.config.policy : a.config.policy_changes.back().policy;
  s.pending.sharing = a.config.sharing;
  if (a.config.fork) s.pending.fork_policy = a.config.fork->policy;
  s.shell.apply_feedback.clear();
  if (!s.shell.adopt_view_block) {
    // A run opened from the panels (a model, a prompt): a new picture, on
    // the first-view rule like a session file that names no positions.
    fit_view(s.view);
    s.view.open_first_view = true;
    return;
  }
  if (a.config.lesson) {
    // A lesson looks the same whoever opens it, whatever the last one
    // left: the view settings start from their defaults (the user's
    // colormap stays), the fork editor and the last messages are cleared.
    const std::string colormap = s.view.colormap;
    s.view = ViewSettings{};
    s.view.colormap = colormap;
    s.shell.fork_editor_open = false;
    s.shell.message_line.clear();
    s.lesson = a.config.lesson;
    s.lesson_step = -1;
  }
  adopt_view(s, a.config.view, a, true);
}

}  // namespace

void adopt_view(AppState& s, const ViewConfig& v, const PublishedRun& a, bool whole_block) {
  if (v.layer || v.head) {
    s.layer = v.layer.value_or(whole_block ? a.informative_layer : s.layer);
    s.head = v.head.value_or(whole_block ? a.informative_head : s.head);
    s.head_chosen = true;
  } else if (whole_block) {
    s.head_chosen = false;
  }
  if (const auto mode = parse_view_mode(v.mode)) s.view.mode = *mode;
  s.view.fork_difference = v.compare == "masks" ? ForkDifference::Masks : ForkDifference::Attention;
  if (v.evicted)
    s.view.evicted = *v.evicted == "strip"  ? EvictedMark::Strip
                     : *v.evicted == "none" ? EvictedMark::None
                                            : EvictedMark::Outline;
  if (v.step || whole_block) s.timeline_row = v.step ? *v.step : -1;
  if (whole_block) {
    s.view.shared_range = v.shared_range;
    s.bookmarks = v.bookmarks;
  } else if (!v.bookmarks.empty()) {
    s.bookmarks = v.bookmarks;
  }
  if (v.positions) {
    s.view.open_on_columns = v.positions;
  } else if (whole_block) {
    fit_view(s.view);
    s.view.open_first_view = true;  // the fit, unless its labels could not show (views/first_view.h)
  }
}

void refresh_from_worker(AppState& s) {
  if (!s.worker) return;
  s.a = s.worker->a();
  s.b = s.worker->b();
  s.full_ref = s.worker->full_reference();
  s.status = s.worker->status();

  if (s.status.error_serial != s.shell.error_serial_seen) {
    s.shell.error_serial_seen = s.status.error_serial;
    s.shell.error_banner = s.status.error;
    // What was being opened failed; keep the state we have, and let the
    // model field name the model actually loaded, not the path that failed.
    if (s.shell.adopt_after_generation && s.a) s.shell.model_path = model_field_of(*s.a);
    s.shell.adopt_after_generation.reset();
  }
  if (s.status.message_serial != s.shell.message_serial_seen) {
    s.shell.message_serial_seen = s.status.message_serial;
    s.shell.message_line = s.status.message;
  }
  if (s.shell.adopt_after_generation && s.a && s.a->generation != *s.shell.adopt_after_generation && !s.status.busy) {
    adopt_session(s, *s.a);
    s.shell.adopt_after_generation.reset();
  }
  if (s.a && s.a->session) {
    if (!s.head_chosen) {
      s.layer = s.a->informative_layer;
      s.head = s.a->informative_head;
    }
    const ModelConfig& m = s.a->session->model_config();
    s.layer = std::clamp(s.layer, 0, std::max(0, m.n_layers - 1));
    s.head = std::clamp(s.head, 0, std::max(0, m.n_heads - 1));
    if (s.timeline_row >= s.a->rows - 1) s.timeline_row = -1;
  }
}

AppFrame::AppFrame() { caches_.init(); }

AppFrame::~AppFrame() { caches_.release(); }

void AppFrame::draw_main_view_around_background(AppState& s) {
  // The window background ImGui would have drawn (imgui.cpp's
  // RenderWindowDecorations: below the title bar, its bottom corners
  // rounded) less the opaque heatmaps, which hide it anyway: the same
  // pixels with a third fewer filled when the view pans or zooms
  // (background_fill.h). ImGuiWindowFlags_NoBackground leaves out the
  // outer border as well, so the window keeps its background flag and
  // the colour is made transparent for Begin instead (begin_panel's caller).
  ImDrawList* dl = ImGui::GetWindowDrawList();
  // The view's contents on layer 1, the background after them on layer 0
  // (where the heatmaps are is known only once they are drawn) ...
  ImDrawListSplitter layers;
  layers.Split(dl, 2);
  layers.SetCurrentChannel(dl, 1);
  s.shell.opaque_cells.clear();
  draw_main_view(s, caches_);
  layers.SetCurrentChannel(dl, 0);
  dl->AddDrawCmd();  // the background's own commands
  const unsigned bg_begin = unsigned(dl->IdxBuffer.Size);
  const ImGuiWindow* w = ImGui::GetCurrentWindow();
  const bool title_bar = !(w->Flags & ImGuiWindowFlags_NoTitleBar);
  const Box outer{w->Pos.x, w->Pos.y + w->TitleBarHeight(), w->Pos.x + w->Size.x, w->Pos.y + w->Size.y};
  const float rounding = w->WindowRounding;
  dl->PushClipRect(ImVec2(outer.x0, outer.y0), ImVec2(outer.x1, outer.y1), false);
  for (const Box& b : boxes_around(outer, s.shell.opaque_cells)) {
    // The window's own corners rounded where a box reaches them.
    ImDrawFlags corners = 0;
    const bool left = b.x0 == outer.x0, right = b.x1 == outer.x1, top = b.y0 == outer.y0 && !title_bar,
               bottom = b.y1 == outer.y1;
    if (top && left) corners |= ImDrawFlags_RoundCornersTopLeft;
    if (top && right) corners |= ImDrawFlags_RoundCornersTopRight;
    if (bottom && left) corners |= ImDrawFlags_RoundCornersBottomLeft;
    if (bottom && right) corners |= ImDrawFlags_RoundCornersBottomRight;
    dl->AddRectFilled(ImVec2(b.x0, b.y0), ImVec2(b.x1, b.y1), main_view_background_, corners ? rounding : 0.f,
                      corners ? corners : ImDrawFlags_RoundCornersNone);
  }
  dl->PopClipRect();
  const unsigned bg_end = unsigned(dl->IdxBuffer.Size);
  layers.Merge(dl);
  // ... and then first of all: before Begin's title bar, border and resize
  // grip, as ImGui orders them. Commands carry their own index ranges, so
  // their order in the list is the order they are drawn in.
  std::stable_partition(dl->CmdBuffer.begin(), dl->CmdBuffer.end() - 1, [&](const ImDrawCmd& c) {
    return c.ElemCount > 0 && c.IdxOffset >= bg_begin && c.IdxOffset < bg_end;
  });
}

void AppFrame::draw(AppState& s) {
  s.shell.rects.clear();  // only what is on screen this frame (a dismissed banner, a gone Cancel button drop out)
  s.shell.grid_filling = false;  // set again by the grid, when it is drawn and still filling
  s.shell.unapplied_edits = false;  // set again by the policy panel, when it is drawn and shows edits
  draw_main_menu(s);
  s.shell.font_px = ImGui::GetFontSize();
  const bool expert = !s.presenter;
  // In presenter mode only the panels a room reads (presenter_panel).
  auto shown = [&](PanelSlot slot) { return !s.presenter || presenter_panel(slot); };

  if (shown(PanelSlot::Controls)) {
    if (begin_panel(s, "Controls", "controls", PanelSlot::Controls)) {
      if (expert && ImGui::CollapsingHeader("Model & device", ImGuiTreeNodeFlags_DefaultOpen)) {
        draw_model_panel(s);
        draw_session_file_panel(s);
      }
      if (ImGui::CollapsingHeader("Prompt", expert ? ImGuiTreeNodeFlags_DefaultOpen : 0)) draw_prompt_panel(s);
      if (ImGui::CollapsingHeader("Policy & sharing", ImGuiTreeNodeFlags_DefaultOpen)) draw_policy_panel(s);
      if (s.shell.fork_editor_open || s.b) ImGui::SetNextItemOpen(true, ImGuiCond_Once);
      if (ImGui::CollapsingHeader("Fork (B)")) draw_fork_panel(s);
      if (expert && ImGui::CollapsingHeader("Export")) draw_export_panel(s);
    }
    ImGui::End();
  }

  if (begin_panel(s, "Transport", "transport", PanelSlot::Transport)) draw_transport_panel(s);
  ImGui::End();

  // Begin draws no background (a transparent one); the view draws it around its heatmaps.
  main_view_background_ = ImGui::GetColorU32(ImGuiCol_WindowBg);
  ImGui::PushStyleColor(ImGuiCol_WindowBg, IM_COL32(0, 0, 0, 0));
  const bool main_open = begin_panel(s, "Main view", "main_view", PanelSlot::MainView,
                                     ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse);
  ImGui::PopStyleColor();
  if (main_open) draw_main_view_around_background(s);
  ImGui::End();

  if (shown(PanelSlot::Grid)) {
    if (begin_panel(s, "Layers \xc3\x97 heads", "grid", PanelSlot::Grid)) draw_grid_panel(s, caches_);
    ImGui::End();
  }

  if (begin_panel(s, s.lesson ? s.lesson->title.c_str() : "Lesson", "lesson", PanelSlot::Lesson)) draw_lesson_panel(s);
  ImGui::End();

  if (shown(PanelSlot::TokenStrip)) {
    if (begin_panel(s, "Tokens", "token_strip", PanelSlot::TokenStrip)) draw_token_strip(s);
    ImGui::End();
  }
  if (shown(PanelSlot::ScoreCurves)) {
    if (begin_panel(s, "Score curves", "score_curves", PanelSlot::ScoreCurves)) draw_score_curves_panel(s, caches_);
    ImGui::End();
  }
  if (shown(PanelSlot::Metrics)) {
    if (begin_panel(s, "Memory & metrics", "metrics", PanelSlot::Metrics)) draw_metrics_panel(s);
    ImGui::End();
  }

  if (begin_panel(s, "Status", "status", PanelSlot::StatusBar)) draw_status_bar(s);
  ImGui::End();

  draw_export_window(s);
  draw_error_banner(s);
  draw_help_overlay(s);
  handle_keyboard(s);
  s.shell.reset_layout = false;
}

}  // namespace kvscope::gui
