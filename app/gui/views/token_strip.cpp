// The token strip: the text as wrapped tokens, each tinted by how many KV
// heads (segments) still keep it at the shown step; the prompt/generated
// boundary; hover highlights the token everywhere; right-click bookmarks
// it (an eviction of a bookmark raises an alert and flashes it red);
// middle-click adds its score curve.
#include <algorithm>
#include <cmath>

#include "views/bookmark_alerts.h"
#include "views/cell_codes.h"
#include "views/hover.h"
#include "views/token_text.h"
#include "views/views.h"

namespace kvscope::gui {
namespace {

// Share of segments keeping `position` at `row` (NaN: not seen yet).
float kept_share(const Recorder& rec, int row, int position) {
  const int S = rec.layout().n_segments();
  int kept = 0, seen = 0;
  for (int seg = 0; seg < S; ++seg) {
    const uint8_t c = rec.mask(row, seg, position);
    seen += c != kNotSeen;
    kept += is_kept(c);
  }
  return seen == 0 ? std::nanf("") : float(kept) / S;
}

// Kept by every head: a pale blue; by none: a strong orange; between: the mix.
ImU32 tint(float share) {
  const float r = 213 + (86 - 213) * share, g = 94 + (180 - 94) * share, b = 0 + (233 - 0) * share;
  return IM_COL32(int(r), int(g), int(b), 90 + int(60 * (1 - share)));
}

void toggle(std::vector<int>& list, int value) {
  const auto it = std::find(list.begin(), list.end(), value);
  if (it == list.end()) list.push_back(value);
  else list.erase(it);
}

}  // namespace

void draw_token_strip(AppState& s) {
  begin_view_frame(s);
  watch_bookmarks(s);
  const std::shared_ptr<const PublishedRun> a_hold = s.a;
  if (!a_hold || !a_hold->session || a_hold->rows == 0) {
    ImGui::TextDisabled("No session yet.");
    return;
  }
  const PublishedRun& a = *a_hold;
  const Recorder& rec = a.session->recorder();
  const int row = s.shown_row();
  const int S = rec.layout().n_segments();
  // Positions that exist at the shown row: the prompt and one per step since.
  const int count = std::min<int>(static_cast<int>(a.token_text.size()), a.prompt_length + row);

  const std::string alert = fresh_alert(s);
  if (!alert.empty()) ImGui::TextColored(ImVec4(1, 0.3f, 0.25f, 1), "! %s", alert.c_str());
  else
    ImGui::TextDisabled("step %d \u00b7 tint = share of the %d KV heads that keep the token \u00b7 right-click: bookmark, "
                        "middle-click: score curve",
                        row, S);

  ImGui::BeginChild("tokens", ImVec2(0, 0), false);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 start = ImGui::GetCursorScreenPos();
  const float right = start.x + ImGui::GetContentRegionAvail().x;
  const float line = ImGui::GetTextLineHeight() + 6, pad = 3, gap = 2;
  const ImVec2 clip0 = ImGui::GetWindowPos(), clip1(clip0.x + ImGui::GetWindowSize().x, clip0.y + ImGui::GetWindowSize().y);
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  const bool window_hovered = ImGui::IsWindowHovered();
  const ImU32 prompt_text = ImGui::GetColorU32(ImGuiCol_Text);
  const ImU32 generated_text = IM_COL32(255, 214, 120, 255);
  float x = start.x, y = start.y;
  int hovered = -1;
  for (int p = 0; p < count; ++p) {
    const std::string text = display_token(a.token_text, p);
    const float w = ImGui::CalcTextSize(text.c_str()).x + 2 * pad;
    if (x + w > right && x > start.x) {
      x = start.x;
      y += line + gap;
    }
    const ImVec2 p0(x, y), p1(x + w, y + line);
    if (p1.y >= clip0.y && p0.y <= clip1.y) {  // only what the window shows
      const float share = kept_share(rec, row, p);
      if (!std::isnan(share)) dl->AddRectFilled(p0, p1, tint(share), 3);
      const float flash = eviction_flash(s, p);
      if (flash > 0) dl->AddRectFilled(p0, p1, IM_COL32(255, 30, 30, int(220 * flash)), 3);
      if (p == a.prompt_length)  // the boundary: generated tokens start here
        dl->AddLine(ImVec2(x - gap / 2 - 1, y - 1), ImVec2(x - gap / 2 - 1, y + line + 1), IM_COL32(255, 214, 120, 255), 3);
      dl->AddText(ImVec2(x + pad, y + 3), p >= a.prompt_length ? generated_text : prompt_text, text.c_str());
      if (std::find(s.bookmarks.begin(), s.bookmarks.end(), p) != s.bookmarks.end())
        dl->AddRect(p0, p1, IM_COL32(230, 40, 40, 255), 3, 0, 2);
      if (p == s.hovered_position) dl->AddRect(ImVec2(p0.x - 1, p0.y - 1), ImVec2(p1.x + 1, p1.y + 1), IM_COL32(255, 255, 255, 230), 3, 0, 1.5f);
      if (window_hovered && mouse.x >= p0.x && mouse.x < p1.x && mouse.y >= p0.y && mouse.y < p1.y) hovered = p;
    }
    x += w + gap;
  }
  // Whole rows only: the content runs on past the last row by what is left
  // of the window under the rows that fit, so scrolling in steps of a row
  // never leaves half a row at the top (the newest row stays in view).
  const float pitch = line + gap, view_h = ImGui::GetWindowHeight();
  const int rows_total = static_cast<int>(std::lround((y - start.y) / pitch)) + 1;
  const int rows_fit = std::max(1, static_cast<int>((view_h + gap) / pitch));
  const float leftover = std::max(0.f, view_h - rows_fit * pitch);
  ImGui::Dummy(ImVec2(right - start.x, rows_total * pitch + leftover));
  // Follow the newest token while it is being written, unless scrolled up.
  if (s.view.follow_latest && ImGui::GetScrollY() >= ImGui::GetScrollMaxY() - line * 2)
    ImGui::SetScrollY(std::max(0, rows_total - rows_fit) * pitch);
  if (hovered >= 0) {
    note_hovered_position(s, hovered);
    if (ImGui::IsMouseClicked(ImGuiMouseButton_Right)) toggle(s.bookmarks, hovered);
    if (ImGui::IsMouseClicked(ImGuiMouseButton_Middle)) toggle(s.curve_positions, hovered);
    const float share = kept_share(rec, row, hovered);
    ImGui::BeginTooltip();
    ImGui::Text("position %d '%s' (%s)", hovered, display_token(a.token_text, hovered).c_str(),
                hovered < a.prompt_length ? "prompt" : "generated");
    if (!std::isnan(share)) ImGui::Text("kept by %d of %d KV heads at step %d", int(std::lround(share * S)), S, row);
    ImGui::TextDisabled("right-click: %s bookmark \u00b7 middle-click: score curve",
                        std::find(s.bookmarks.begin(), s.bookmarks.end(), hovered) != s.bookmarks.end() ? "remove the" : "add a");
    ImGui::EndTooltip();
  }
  ImGui::EndChild();
}

}  // namespace kvscope::gui
