#include "views/colorbar.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "figures/ticks.h"
#include "views/palette.h"

namespace kvscope::gui {
namespace {

struct Tick {
  double value;
  std::string label;
};

// The exported colorbar's ticks (figures/ticks.h): powers of ten on a log
// scale, 1, 2 or 5 times a power of ten on a linear one, about `count` of
// them; the two ends when less than a step fits. Decades beyond 10^±3 are
// written 1e-6 (decade_label's superscripts are Pango markup).
std::vector<Tick> ticks(const kvscope::ColorScale& scale, int count) {
  std::vector<Tick> out;
  if (scale.kind == kvscope::ScaleKind::log) {
    for (int k : kvscope::decades_in(scale.lo, scale.hi, count)) {
      char buf[16];
      std::snprintf(buf, sizeof(buf), "1e%d", k);
      out.push_back({std::pow(10.0, k), std::abs(k) <= 3 ? kvscope::decade_label(k) : buf});
    }
  } else {
    const double step = kvscope::nice_step(scale.hi - scale.lo, count);
    for (double v : kvscope::ticks_in(scale.lo, scale.hi, step)) out.push_back({v, kvscope::tick_label(v, step)});
  }
  if (out.size() < 2) {
    out.clear();
    for (double v : {scale.lo, scale.hi}) {
      char buf[32];
      std::snprintf(buf, sizeof(buf), "%.3g", v);
      out.push_back({v, buf});
    }
  }
  return out;
}

}  // namespace

float colorbar_width() { return ImGui::GetFontSize() * 1.2f + ImGui::CalcTextSize("-0.000e-00").x + 8; }

void draw_colorbar(const PaletteTextures& textures, const kvscope::ColorScale& scale, const std::string& colormap,
                   const std::string& label, float height) {
  const ImVec2 pos = ImGui::GetCursorScreenPos();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float bar_w = ImGui::GetFontSize() * 1.2f;
  const float top = pos.y + ImGui::GetTextLineHeight() + 2, bottom = pos.y + height - 2;
  dl->AddText(pos, ImGui::GetColorU32(ImGuiCol_Text), label.c_str());
  // The colormap texture runs along u; the quad maps u = 0 to the bottom.
  dl->AddImageQuad(texture_id(textures.colormap(colormap)), ImVec2(pos.x, top), ImVec2(pos.x + bar_w, top),
                   ImVec2(pos.x + bar_w, bottom), ImVec2(pos.x, bottom), ImVec2(1, 0.5f), ImVec2(1, 0.5f),
                   ImVec2(0, 0.5f), ImVec2(0, 0.5f));
  dl->AddRect(ImVec2(pos.x, top), ImVec2(pos.x + bar_w, bottom), ImGui::GetColorU32(ImGuiCol_Border));
  const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text);
  const int count = std::max(2, int((bottom - top) / (ImGui::GetTextLineHeight() * 2.5f)));
  for (const Tick& tick : ticks(scale, count)) {
    const double t = scale.normalize(tick.value);
    if (!(t >= 0 && t <= 1)) continue;
    const float y = bottom - float(t) * (bottom - top);
    dl->AddLine(ImVec2(pos.x + bar_w, y), ImVec2(pos.x + bar_w + 4, y), text);
    dl->AddText(ImVec2(pos.x + bar_w + 6, y - ImGui::GetTextLineHeight() / 2), text, tick.label.c_str());
  }
  ImGui::Dummy(ImVec2(colorbar_width(), height));
}

void draw_code_legend(const std::vector<uint8_t>& codes, bool in_a_row) {
  const float box = ImGui::GetTextLineHeight() * 0.8f;
  const float right = ImGui::GetCursorScreenPos().x + ImGui::GetContentRegionAvail().x;
  bool first = true;
  for (uint8_t code : codes) {
    if (in_a_row && !first) {
      // Next to the previous entry while it fits, else on a new line.
      const float w = box + 4 + ImGui::GetStyle().ItemSpacing.x + ImGui::CalcTextSize(code_label(code).c_str()).x;
      ImGui::SameLine(0, ImGui::GetFontSize());
      if (ImGui::GetCursorScreenPos().x + w > right) ImGui::NewLine();
    }
    first = false;
    const ImVec2 p = ImGui::GetCursorScreenPos();
    ImGui::GetWindowDrawList()->AddRectFilled(ImVec2(p.x, p.y + 2), ImVec2(p.x + box, p.y + 2 + box),
                                              im_color(code_color(code)));
    ImGui::GetWindowDrawList()->AddRect(ImVec2(p.x, p.y + 2), ImVec2(p.x + box, p.y + 2 + box), IM_COL32(80, 80, 80, 255));
    ImGui::Dummy(ImVec2(box + 4, box));
    ImGui::SameLine();
    ImGui::TextUnformatted(code_label(code).c_str());
  }
}

}  // namespace kvscope::gui
