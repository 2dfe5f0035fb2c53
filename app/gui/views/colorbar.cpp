#include "views/colorbar.h"

#include <cmath>
#include <cstdio>

#include "views/palette.h"

namespace kvscope::gui {
namespace {

std::string format_value(double v) {
  char buf[32];
  if (v != 0 && (std::fabs(v) < 1e-3 || std::fabs(v) >= 1e4)) std::snprintf(buf, sizeof(buf), "%.1e", v);
  else std::snprintf(buf, sizeof(buf), "%.3g", v);
  return buf;
}

// Tick values: powers of ten on a log scale; 1, 2 or 5 times a power of
// ten on a linear one, about `count` of them.
std::vector<double> ticks(const kvscope::ColorScale& scale, int count) {
  std::vector<double> out;
  if (scale.kind == kvscope::ScaleKind::log) {
    for (double e = std::ceil(std::log10(scale.lo) - 1e-9); e <= std::log10(scale.hi) + 1e-9; e += 1)
      out.push_back(std::pow(10.0, e));
    if (out.size() < 2) out = {scale.lo, scale.hi};
    return out;
  }
  const double span = scale.hi - scale.lo;
  if (!(span > 0)) return {scale.lo};
  const double raw = span / std::max(count, 1), mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double step = raw / mag < 1.5 ? mag : raw / mag < 3.5 ? 2 * mag : raw / mag < 7.5 ? 5 * mag : 10 * mag;
  for (double v = std::ceil(scale.lo / step) * step; v <= scale.hi + step * 1e-6; v += step)
    out.push_back(std::fabs(v) < step * 1e-9 ? 0 : v);
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
  for (double v : ticks(scale, count)) {
    const double t = scale.normalize(v);
    if (!(t >= 0 && t <= 1)) continue;
    const float y = bottom - float(t) * (bottom - top);
    dl->AddLine(ImVec2(pos.x + bar_w, y), ImVec2(pos.x + bar_w + 4, y), text);
    dl->AddText(ImVec2(pos.x + bar_w + 6, y - ImGui::GetTextLineHeight() / 2), text, format_value(v).c_str());
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
