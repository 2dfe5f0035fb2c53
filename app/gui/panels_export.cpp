// The export panel: a directory, "Export all" (what `kvscope-cli run
// --export` writes, from the same exporter, plus the current view's
// figures) and "Save session" (a session file that reopens to this state,
// fork included); the files written are listed.
#include <filesystem>

#include <imgui.h>
#include <imgui_stdlib.h>

#include "panels.h"

namespace kvscope::gui {

namespace {

// The figure settings of the current view, so the exported picture looks
// like what is on the screen.
FigureExportOptions figure_options_of_view(const AppState& s) {
  FigureExportOptions o;
  o.output.formats = {FigureFormat::png, FigureFormat::svg};
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
  ImGui::SetNextItemWidth(-1);
  ImGui::InputTextWithHint("##exportdir", "export directory", &s.export_dir);
  help_tooltip("Where Export all and Save session write (created when missing).");
  const bool can = s.worker && s.a && !s.export_dir.empty();
  if (ImGui::Button("Export all") && can)
    s.worker->export_all(s.export_dir, s.layer, s.head, figure_options_of_view(s));
  record_item_rect(s, "button.export");
  help_tooltip("Masks, statistics and attention (.npy/.csv), metrics, events and the session (.json) exactly as "
               "`kvscope-cli run --export` writes them (B under fork/), plus the current view as PNG and SVG.");
  ImGui::SameLine();
  if (ImGui::Button("Save session") && can) {
    const std::filesystem::path file = std::filesystem::path(s.export_dir) / "session.json";
    s.worker->save_session(file);
    s.shell.session_path = file.string();
  }
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

}  // namespace kvscope::gui
