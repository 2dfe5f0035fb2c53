// The export panel (File > Export..., Ctrl+E, and Controls > Export): the
// one layer and head an export is of, the figure formats, a directory,
// "Export" (what `kvscope-cli run --export` writes, from the same
// exporter, plus the current view's figures, all of that head) and "Save
// session" (a session file that reopens to this state, fork included,
// never an export's own session.json); the files written are listed.
#include <algorithm>
#include <filesystem>

#include <imgui.h>
#include <imgui_stdlib.h>

#include "export_defaults.h"
#include "panels.h"

namespace kvscope::gui {

namespace {

// The figure settings of the current view, so the exported picture looks
// like what is on the screen.
FigureExportOptions figure_options_of_view(const AppState& s) {
  FigureExportOptions o;
  o.output.formats.clear();  // the ticked ones only (the default holds PNG)
  if (s.shell.export_png) o.output.formats.push_back(FigureFormat::png);
  if (s.shell.export_svg) o.output.formats.push_back(FigureFormat::svg);
  if (s.shell.export_pdf) o.output.formats.push_back(FigureFormat::pdf);
  o.colormap = s.view.colormap;
  o.scale = s.view.scale == ColorScaleKind::Log ? ScaleKind::log : ScaleKind::linear;
  if (!s.view.auto_range) {
    o.range.kind = RangeSpec::Kind::fixed;
    o.range.lo = s.view.range_lo;
    o.range.hi = s.view.range_hi;
  } else {
    o.range.kind = s.view.shared_range ? RangeSpec::Kind::shared : RangeSpec::Kind::automatic;
  }
  o.evicted = s.view.evicted == EvictedMark::Outline ? EvictedStyle::outline
              : s.view.evicted == EvictedMark::Strip ? EvictedStyle::strip
                                                     : EvictedStyle::none;
  o.up_to_row = s.shown_row();
  return o;
}

}  // namespace

void draw_export_panel(AppState& s) {
  if (s.export_dir.empty()) s.export_dir = default_export_dir(s.shell.session_path).string();
  if (s.shell.save_path.empty()) s.shell.save_path = default_session_save_path(s.export_dir).string();
  // The head: the main view's unless the user picks another here.
  const int layers = s.a && s.a->session ? s.a->session->model_config().n_layers : 1;
  const int heads = s.a && s.a->session ? s.a->session->model_config().n_heads : 1;
  const bool follows = s.shell.export_layer < 0;
  int layer = follows ? s.layer : s.shell.export_layer, head = follows ? s.head : s.shell.export_head;
  ImGui::TextUnformatted("Exports one head:");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 5);
  const bool layer_changed = ImGui::InputInt("layer##export", &layer);
  ImGui::SameLine();
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 5);
  const bool head_changed = ImGui::InputInt("head##export", &head);
  record_item_rect(s, "export.head");
  if (layer_changed || head_changed) {
    s.shell.export_layer = std::clamp(layer, 0, layers - 1);
    s.shell.export_head = std::clamp(head, 0, heads - 1);
  }
  layer = std::clamp(layer, 0, layers - 1);
  head = std::clamp(head, 0, heads - 1);
  if (follows) {
    ImGui::TextDisabled("(the main view's head)");
  } else if (ImGui::SmallButton("use the main view's head")) {
    s.shell.export_layer = s.shell.export_head = -1;
  }
  help_tooltip(
      "The CSV twins (masks_L_H, scores_L_H), the heatmap, the layer's grid, the score curves and the view "
      "figure of one export are all of this layer and head.");
  ImGui::TextUnformatted("Figures:");
  ImGui::SameLine();
  ImGui::Checkbox("PNG", &s.shell.export_png);
  ImGui::SameLine();
  ImGui::Checkbox("SVG", &s.shell.export_svg);
  ImGui::SameLine();
  ImGui::Checkbox("PDF", &s.shell.export_pdf);
  help_tooltip("The figures' formats, as kvscope-cli run --formats png,svg,pdf (PNG when none is ticked).");
  ImGui::SetNextItemWidth(-1);
  ImGui::InputTextWithHint("##exportdir", "export directory", &s.export_dir);
  help_tooltip("Where Export writes (created when missing); by default under your documents folder.");
  const bool can = s.worker && s.a && !s.export_dir.empty();
  if (ImGui::Button("Export") && can) {
    FigureExportOptions o = figure_options_of_view(s);
    if (o.output.formats.empty()) o.output.formats = {FigureFormat::png};
    s.worker->export_all(s.export_dir, layer, head, o);
  }
  record_item_rect(s, "button.export");
  help_tooltip(
      "Masks, statistics and attention (.npy), the CSV twins, metrics, events and the session (.json) "
      "exactly as `kvscope-cli run --export` writes them (B under fork/, and the fork view's A - B panel as "
      "fork_difference_L_H), plus the current view's figure, "
      "every figure and CSV of the layer and head above.");
  ImGui::Separator();
  ImGui::SetNextItemWidth(-1);
  ImGui::InputTextWithHint("##savepath", "session file", &s.shell.save_path);
  help_tooltip("Where Save session writes. Never an export's own session.json: the next export would replace it.");
  if (ImGui::Button("Save session") && s.worker && s.a && !s.shell.save_path.empty()) {
    s.worker->save_session(s.shell.save_path);
    s.shell.session_path = s.shell.save_path;
  }
  record_item_rect(s, "button.save_session");
  help_tooltip("The current session as a session file (policy changes and fork included) that reopens to this state.");
  if (!s.status.last_export.empty()) {
    ImGui::TextDisabled("%zu files written:", s.status.last_export.size());
    const float h = ImGui::GetTextLineHeightWithSpacing() * std::min<size_t>(6, s.status.last_export.size()) + 4;
    if (ImGui::BeginChild("files", {-1, h}, true)) {
      for (const auto& f : s.status.last_export) ImGui::TextUnformatted(f.string().c_str());
    }
    ImGui::EndChild();
  }
}

// File > Export... and Ctrl+E: the same controls in a window of their own,
// reachable in presenter mode and with the Controls panel scrolled away.
void draw_export_window(AppState& s) {
  if (!s.show_export) return;
  ImGui::SetNextWindowSize({ImGui::GetFontSize() * 30, 0}, ImGuiCond_FirstUseEver);
  const ImVec2 centre(ImGui::GetIO().DisplaySize.x / 2, ImGui::GetIO().DisplaySize.y / 3);
  ImGui::SetNextWindowPos(centre, ImGuiCond_FirstUseEver, {0.5f, 0.5f});
  if (ImGui::Begin("Export (Ctrl+E)###export", &s.show_export, ImGuiWindowFlags_NoCollapse)) {
    record_rect(s, "panel.export", ImGui::GetWindowPos(), ImGui::GetWindowSize());
    draw_export_panel(s);
  }
  ImGui::End();
}

}  // namespace kvscope::gui
