#include "views/view_toolbar.h"

#include <algorithm>

#include "imgui.h"
#include "io/colormap.h"
#include "text_fit.h"

namespace kvscope::gui {
namespace {

void hover_help(const char* text) {
  if (ImGui::IsItemHovered()) {
    ImGui::BeginTooltip();
    ImGui::PushTextWrapPos(ImGui::GetFontSize() * 30);
    ImGui::TextUnformatted(text);
    ImGui::PopTextWrapPos();
    ImGui::EndTooltip();
  }
}

}  // namespace

const std::vector<std::string>& colormap_choices() {
  static const std::vector<std::string> names = kvscope::colormap_names();
  return names;
}

void draw_view_toolbar(AppState& s) {
  ViewSettings& v = s.view;
  const float em = ImGui::GetFontSize();
  ImGui::SetNextItemWidth(em * 9);
  if (ImGui::BeginCombo("##mode", view_mode_name(v.mode))) {
    for (ViewMode m : {ViewMode::Attention, ViewMode::Mask, ViewMode::Statistic, ViewMode::DiffFull, ViewMode::DiffFork,
                       ViewMode::IdealOverlay})
      if (ImGui::Selectable(view_mode_name(m), m == v.mode)) v.mode = m;
    ImGui::EndCombo();
  }
  hover_help("What the main view and the grid show for the selected head: attention, the retained mask (TOVA paper "
             "style), the policy's statistic, the difference against the full cache or the fork, or the mask against "
             "the top k of the head's own attention (ideal overlay).");
  if (v.mode == ViewMode::DiffFork) {
    same_line_if_fits(em * 8);
    int d = static_cast<int>(v.fork_difference);
    ImGui::SetNextItemWidth(em * 8);
    ImGui::Combo("##forkdiff", &d, "attention A - B\0mask A vs B\0");
    v.fork_difference = static_cast<ForkDifference>(d);
    hover_help("The third panel: the attention difference A - B (blue: B attends more, red: A attends more), or which "
               "tokens each configuration keeps.");
  }
  if (s.presenter) {
    // In front of a room: the view's mode and the fit, nothing to fiddle with.
    ImGui::SameLine();
    if (ImGui::SmallButton("fit")) fit_view(v);
    return;
  }
  same_line_if_fits(em * 6);
  ImGui::SetNextItemWidth(em * 6);
  if (ImGui::BeginCombo("##colormap", v.colormap.c_str())) {
    for (const std::string& name : colormap_choices())
      if (ImGui::Selectable(name.c_str(), name == v.colormap)) v.colormap = name;
    ImGui::EndCombo();
  }
  hover_help("Colormap of attention and statistics (the same tables as the exported figures). Differences always use "
             "coolwarm, centred on zero.");
  same_line_if_fits(em * 4.5f);
  int scale = static_cast<int>(v.scale);
  ImGui::SetNextItemWidth(em * 4.5f);
  if (ImGui::Combo("##scale", &scale, "linear\0log\0")) v.scale = static_cast<ColorScaleKind>(scale);
  hover_help("Log scale shows the long tail of small attention weights (four decades below the largest).");
  same_line_if_fits(checkbox_width("auto"));
  ImGui::Checkbox("auto", &v.auto_range);
  hover_help("Auto: the range spans the values shown (0 to the largest, or four decades on a log scale). Off: drag the "
             "two ends.");
  if (!v.auto_range) {
    same_line_if_fits(em * 9);
    ImGui::SetNextItemWidth(em * 9);
    const float speed = std::max(1e-4f, (v.range_hi - v.range_lo) * 0.005f);
    ImGui::DragFloatRange2("##range", &v.range_lo, &v.range_hi, speed, -1e9f, 1e9f, "%.4g", "%.4g");
    if (v.scale == ColorScaleKind::Log && v.range_lo <= 0) v.range_lo = std::max(1e-6f, v.range_hi * 1e-4f);
  }
  same_line_if_fits(checkbox_width("shared range"));
  ImGui::Checkbox("shared range", &v.shared_range);
  hover_help("One colour range across the main view, the fork's panel and every grid thumbnail, so the same colour "
             "means the same value everywhere.");
  same_line_if_fits(em * 8);
  int mark = static_cast<int>(v.evicted);
  ImGui::SetNextItemWidth(em * 8);
  ImGui::Combo("##evicted", &mark, "outline/tint\0strip\0none\0");
  v.evicted = static_cast<EvictedMark>(mark);
  hover_help(
      "How evicted cells show without hiding their colour: outlined where cells are at least 8 pixels wide, "
      "tinted toward the mark's colour where they are smaller (chosen per frame, so zooming switches), a "
      "mask strip under the heatmap, or not at all.");
  same_line_if_fits(checkbox_width("follow"));
  ImGui::Checkbox("follow", &v.follow_latest);
  hover_help("Keep the newest step in view while playing (zooming or dragging turns it off).");
  same_line_if_fits(small_button_width("fit"));
  if (ImGui::SmallButton("fit")) fit_view(v);
  hover_help(
      "Show every recorded step and every position seen (also the Home key). The mouse wheel zooms: over the "
      "cells both axes, over the position labels across only, over the step labels down only; a right-button "
      "drag draws a box to zoom to; dragging pans.");
}

}  // namespace kvscope::gui
