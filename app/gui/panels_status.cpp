// The status bar along the bottom edge: step, tokens, KV bytes now / full,
// step time, frame time, device, and what the worker is doing.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include <imgui.h>

#include "panels.h"
#include "text_fit.h"

namespace kvscope::gui {

void draw_status_bar(AppState& s) {
  if (!s.a) {
    ImGui::TextUnformatted(s.status.busy ? ("loading: " + s.status.task).c_str() : "no session");
    return;
  }
  const PublishedRun& a = *s.a;
  const int row = s.shown_row();
  // What the bar shows, most needed first: where the run is, the policy and
  // what the cache holds stay; timings, the device and the token count go
  // first when the window is too narrow (a projector's 1280 px in presenter
  // mode's large text), and the policy is cut last.
  enum class Look { plain, dim, busy };
  struct Item {
    std::string text;
    Look look;
    int rank;  // lower: dropped later
  };
  char buf[160];
  std::vector<Item> items;
  std::snprintf(buf, sizeof buf, "step %d / %d%s", row, a.rows - 1, s.timeline_row >= 0 ? " (scrubbed)" : "");
  items.push_back({buf, Look::plain, 0});
  items.push_back({"tokens " + std::to_string(a.tokens.size()), Look::plain, 4});
  items.push_back({"KV " + format_bytes(static_cast<double>(a.kv_bytes)) + " / full " +
                       format_bytes(static_cast<double>(a.kv_bytes_full)),
                   Look::plain, 2});
  std::snprintf(buf, sizeof buf, "step %.1f ms", a.last_step_ms);
  items.push_back({buf, Look::plain, 6});
  std::snprintf(buf, sizeof buf, "frame %.0f ms", s.shell.frame_ms_shown);
  items.push_back({buf, Look::plain, 7});
  items.push_back({a.device, Look::plain, 5});
  items.push_back({a.policy_label, Look::dim, 1});
  if (s.status.busy || s.status.playing) items.push_back({s.status.playing ? "playing" : s.status.task, Look::busy, 3});
  if (!s.shell.message_line.empty()) items.push_back({s.shell.message_line, Look::dim, 8});

  const float gap = ImGui::GetFontSize() * 1.5f, avail = ImGui::GetContentRegionAvail().x;
  auto width = [&] {
    float w = 0;
    for (const Item& it : items) w += ImGui::CalcTextSize(it.text.c_str()).x + gap;
    return w - gap;
  };
  while (items.size() > 2 && width() > avail) {
    auto last =
        std::max_element(items.begin(), items.end(), [](const Item& x, const Item& y) { return x.rank < y.rank; });
    if (last->rank <= 1) break;
    items.erase(last);
  }
  // Still too wide: the policy (the one long item) is cut to what is left.
  if (width() > avail)
    for (Item& it : items)
      if (it.rank == 1) it.text = cut_to(it.text, ImGui::CalcTextSize(it.text.c_str()).x - (width() - avail));
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i > 0) ImGui::SameLine(0, gap);
    const Item& it = items[i];
    if (it.look == Look::dim) ImGui::TextDisabled("%s", it.text.c_str());
    else if (it.look == Look::busy) ImGui::TextColored({0.55f, 0.85f, 0.55f, 1}, "%s", it.text.c_str());
    else ImGui::TextUnformatted(it.text.c_str());
  }
}

}  // namespace kvscope::gui
