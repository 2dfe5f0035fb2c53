// Score curves: the policy statistic of chosen tokens over the steps, for
// the selected head's KV segment, with the eviction threshold dashed.
//
// The threshold at a step is the k-th best statistic of the unit: the
// lowest statistic among the positions the policy kept on merit (mask
// "kept", not the sinks and recent window it keeps regardless). A token
// whose curve falls below it at a step is what the policy evicts there.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "figures/ticks.h"
#include "reports/figure_export.h"
#include "text_fit.h"
#include "views/cell_codes.h"
#include "views/cell_rows.h"
#include "views/curve_picks.h"
#include "views/hover.h"
#include "views/token_text.h"
#include "views/views.h"

namespace kvscope::gui {
namespace {

const std::vector<float>& thresholds(ScoreCurvesCache& c, const PublishedRun& a, int seg) {
  if (c.session != a.session.get() || c.generation != a.generation || c.segment != seg ||
      static_cast<int>(c.threshold.size()) > a.rows) {
    c = {a.session.get(), a.generation, seg, {}};
  }
  const Recorder& rec = a.session->recorder();
  for (int r = static_cast<int>(c.threshold.size()); r < a.rows; ++r) {
    float lowest = std::nanf("");
    for (int p = 0; p < rec.positions(); ++p) {
      if (rec.mask(r, seg, p) != kMaskKept) continue;
      const float v = rec.score(r, seg, p);
      if (std::isfinite(v) && !(lowest <= v)) lowest = v;
    }
    c.threshold.push_back(lowest);
  }
  return c.threshold;
}

// Without a choice of the user's: the tokens nearest the threshold at the
// shown step (curve_picks.h), then the bookmarks.
std::vector<int> default_positions(const AppState& s, const PublishedRun& a, int seg, int row, float threshold) {
  const Recorder& rec = a.session->recorder();
  std::vector<float> scores(rec.positions());
  std::vector<uint8_t> masks(rec.positions());
  for (int p = 0; p < rec.positions(); ++p) {
    scores[p] = rec.score(row, seg, p);
    masks[p] = rec.mask(row, seg, p);
  }
  std::vector<int> out = pick_curve_positions(scores, masks, threshold, 2);
  for (int p : s.bookmarks)
    if (std::find(out.begin(), out.end(), p) == out.end()) out.push_back(p);
  return out;
}

ImU32 curve_color(int i) {
  // Okabe-Ito, then repeat.
  static const ImU32 colors[] = {IM_COL32(0, 114, 178, 255), IM_COL32(230, 159, 0, 255),  IM_COL32(0, 158, 115, 255),
                                 IM_COL32(204, 121, 167, 255), IM_COL32(86, 180, 233, 255), IM_COL32(213, 94, 0, 255),
                                 IM_COL32(240, 228, 66, 255), IM_COL32(120, 120, 120, 255)};
  return colors[i % 8];
}

// The part of segment a-b inside the box lo-hi, as fractions [t0, t1] of
// it (Liang-Barsky); false when none of it is inside.
bool clip_fractions(ImVec2 a, ImVec2 b, ImVec2 lo, ImVec2 hi, double& t0, double& t1) {
  t0 = 0;
  t1 = 1;
  const double d[2] = {double(b.x) - a.x, double(b.y) - a.y};
  const double from[2] = {a.x, a.y}, low[2] = {lo.x, lo.y}, high[2] = {hi.x, hi.y};
  for (int axis = 0; axis < 2; ++axis) {
    if (d[axis] == 0) {
      if (from[axis] < low[axis] || from[axis] > high[axis]) return false;
      continue;
    }
    double enter = (low[axis] - from[axis]) / d[axis], leave = (high[axis] - from[axis]) / d[axis];
    if (enter > leave) std::swap(enter, leave);
    t0 = std::max(t0, enter);
    t1 = std::min(t1, leave);
  }
  return t0 < t1;
}

// Dashes of 6 px with 4 px gaps, carried across segments by `phase`, drawn
// only where the segment crosses the box lo-hi: a threshold far outside
// the plotted range (a policy switched from summed scores to one step's
// attention) maps to coordinates millions of pixels away, and dashing all
// of that would take the window minutes a frame.
void dashed_line(ImDrawList* dl, ImVec2 a, ImVec2 b, ImVec2 lo, ImVec2 hi, ImU32 color, float thickness, float& phase) {
  const double dx = double(b.x) - a.x, dy = double(b.y) - a.y, len = std::sqrt(dx * dx + dy * dy);
  double t0 = 0, t1 = 0;
  if (!std::isfinite(len) || len == 0 || !clip_fractions(a, b, lo, hi, t0, t1)) {
    if (std::isfinite(len)) phase = float(std::fmod(phase + len, 10.0));
    return;
  }
  double t = t0 * len;
  const double end = t1 * len;
  double at = std::fmod(phase + t, 10.0);  // where in a dash period the visible part starts
  while (t < end) {
    const double piece = std::min(end - t, at < 6 ? 6 - at : 10 - at);
    if (at < 6)
      dl->AddLine(ImVec2(float(a.x + dx * t / len), float(a.y + dy * t / len)),
                  ImVec2(float(a.x + dx * (t + piece) / len), float(a.y + dy * (t + piece) / len)), color, thickness);
    t += piece;
    at = std::fmod(at + piece, 10.0);
  }
  phase = float(std::fmod(phase + len, 10.0));
}

}  // namespace

void draw_score_curves_panel(AppState& s, ViewCaches& caches) {
  begin_view_frame(s);
  const std::shared_ptr<const PublishedRun> a_hold = s.a;
  if (!a_hold || !a_hold->session || a_hold->rows == 0) {
    ImGui::TextDisabled("No session yet.");
    return;
  }
  const PublishedRun& a = *a_hold;
  const int seg = segment_of(a, s.layer, s.head);
  const int row = s.shown_row(), rows = a.rows;
  const Recorder& rec = a.session->recorder();
  const std::vector<float>& threshold = thresholds(caches.score_curves, a, seg);
  const std::vector<int> positions =
      s.curve_positions.empty()
          ? default_positions(s, a, seg, row, row < int(threshold.size()) ? threshold[row] : std::nanf(""))
          : s.curve_positions;

  // Controls: which tokens.
  // The statistic of the policy in effect at the shown step (a switch
  // mid-run changes what the curves are), and its rows for the range.
  const int since = kvscope::policy_since_row(a.config, row);
  int until = rows;
  for (const auto& ch : a.config.policy_changes)
    if (ch.from_step > row) until = std::min(until, ch.from_step);
  ImGui::TextDisabled("%s \u00b7 layer %d, KV head %d",
                      kvscope::statistic_name(kvscope::policy_at_row(a.config, row).kind).c_str(), s.layer,
                      rec.layout().kv_head_of(s.head));
  same_line_if_fits(ImGui::GetFontSize() * 5);
  int& add = s.shell.curve_add_position;
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 5);
  ImGui::InputInt("##add", &add, 0);
  same_line_if_fits(small_button_width("add token"));
  if (ImGui::SmallButton("add token") && add >= 0 && add < static_cast<int>(a.tokens.size())) {
    if (s.curve_positions.empty()) s.curve_positions = positions;
    if (std::find(s.curve_positions.begin(), s.curve_positions.end(), add) == s.curve_positions.end())
      s.curve_positions.push_back(add);
  }
  if (ImGui::IsItemHovered()) {
    ImGui::BeginTooltip();
    ImGui::TextUnformatted("Add the curve of this position (or middle-click a token in the token strip).");
    ImGui::EndTooltip();
  }
  same_line_if_fits(small_button_width("auto"));
  if (ImGui::SmallButton("auto")) s.curve_positions.clear();
  if (ImGui::IsItemHovered()) {
    ImGui::BeginTooltip();
    ImGui::PushTextWrapPos(ImGui::GetFontSize() * 30);
    ImGui::TextUnformatted(kCurvePickRule);
    ImGui::PopTextWrapPos();
    ImGui::EndTooltip();
  }

  // Value range over what is drawn.
  double lo = INFINITY, hi = -INFINITY;
  bool any = false;
  auto take = [&](float v) {
    if (!std::isfinite(v)) return;
    lo = std::min(lo, double(v));
    hi = std::max(hi, double(v));
    any = true;
  };
  // Over the rows of the policy in effect at the shown step: another
  // policy's scores (H2O's sums against TOVA's probabilities) would flatten
  // these curves; theirs run off the plot's edge instead.
  for (int p : positions)
    for (int r = since; r < until; ++r)
      if (p < rec.positions()) take(rec.score(r, seg, p));
  for (int r = since; r < std::min<int>(until, static_cast<int>(threshold.size())); ++r) take(threshold[r]);
  if (!any) {
    ImGui::TextDisabled("This policy keeps no statistic (full cache, window, sinks): nothing to rank tokens by.");
    return;
  }
  lo = std::min(lo, 0.0);
  if (!(hi > lo)) hi = lo + 1;

  // Plot area: legend on the right.
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float legend_w = ImGui::CalcTextSize("0000 'wwwwwwwwww'").x + 24;
  const float left = ImGui::CalcTextSize("-0.00e-00").x + 8, bottom = ImGui::GetTextLineHeight() + 6;
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const ImVec2 size(std::max(60.f, avail.x - legend_w), std::max(60.f, avail.y));
  const ImVec2 plot0(origin.x + left, origin.y + 4), plot1(origin.x + size.x - 4, origin.y + size.y - bottom);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImU32 axis = ImGui::GetColorU32(ImGuiCol_Text), grid = ImGui::GetColorU32(ImGuiCol_Border);
  const int x_last = std::max(rows - 1, 1);
  auto X = [&](double r) { return plot0.x + float(r / x_last) * (plot1.x - plot0.x); };
  auto Y = [&](double v) { return plot1.y - float((v - lo) / (hi - lo)) * (plot1.y - plot0.y); };
  dl->AddRect(plot0, plot1, grid);
  // Ticks as the exported score curves place them (figures/ticks.h): at
  // most as many as fit with a line and a half per label, or a label and
  // a space across.
  const double ys =
      kvscope::nice_step(hi - lo, std::max(2, int((plot1.y - plot0.y) / (ImGui::GetTextLineHeight() * 1.5f))));
  for (double v : kvscope::ticks_in(lo, hi, ys)) {
    const float y = Y(v);
    dl->AddLine(ImVec2(plot0.x - 4, y), ImVec2(plot0.x, y), axis);
    dl->AddLine(ImVec2(plot0.x, y), ImVec2(plot1.x, y), (grid & 0x00FFFFFF) | 0x40000000);
    const std::string t = kvscope::tick_label(v, ys);
    dl->AddText(ImVec2(plot0.x - 6 - ImGui::CalcTextSize(t.c_str()).x, y - ImGui::GetTextLineHeight() / 2), axis, t.c_str());
  }
  const float x_label_w = ImGui::CalcTextSize(std::to_string(x_last).c_str()).x + ImGui::GetFontSize();
  const double xs = std::max(1.0, kvscope::nice_step(x_last, std::max(2, int((plot1.x - plot0.x) / x_label_w))));
  for (double r = 0; r <= x_last; r += xs) {
    const float x = X(r);
    dl->AddLine(ImVec2(x, plot1.y), ImVec2(x, plot1.y + 4), axis);
    const std::string t = std::to_string(int(r));
    dl->AddText(ImVec2(x - ImGui::CalcTextSize(t.c_str()).x / 2, plot1.y + 5), axis, t.c_str());
  }
  // The shown step: a translucent column in the text colour, a mark no
  // curve (solid, Okabe-Ito colours) or the threshold (a dashed line
  // across) can be taken for.
  const float step_w = std::max(6.f, (plot1.x - plot0.x) / float(x_last + 1));
  dl->AddRectFilled(ImVec2(X(row) - step_w / 2, plot0.y), ImVec2(X(row) + step_w / 2, plot1.y),
                    (axis & 0x00FFFFFF) | 0x38000000);

  dl->PushClipRect(plot0, plot1, true);
  float phase = 0;
  for (int r = 1; r < rows; ++r)
    if (std::isfinite(threshold[r - 1]) && std::isfinite(threshold[r]))
      dashed_line(dl, ImVec2(X(r - 1), Y(threshold[r - 1])), ImVec2(X(r), Y(threshold[r])), plot0, plot1, axis, 1.5f,
                  phase);
  for (int i = 0; i < static_cast<int>(positions.size()); ++i) {
    const int p = positions[i];
    if (p < 0 || p >= rec.positions()) continue;
    const ImU32 c = curve_color(i);
    const bool thick = p == s.hovered_position;
    for (int r = 1; r < rows; ++r) {
      const float v0 = rec.score(r - 1, seg, p), v1 = rec.score(r, seg, p);
      const uint8_t before = rec.mask(r - 1, seg, p);  // drawn while the token is in the cache
      if (std::isfinite(v0) && std::isfinite(v1) && before != kNotSeen && before != kEvictedNow && before != kEvictedEarlier)
        dl->AddLine(ImVec2(X(r - 1), Y(v0)), ImVec2(X(r), Y(v1)), c, thick ? 3.f : 1.8f);
    }
    // A cross where this head's KV segment evicts the token.
    for (int r = 0; r < rows; ++r)
      if (rec.mask(r, seg, p) == kEvictedNow && std::isfinite(rec.score(r, seg, p))) {
        const ImVec2 q(X(r), Y(rec.score(r, seg, p)));
        dl->AddLine(ImVec2(q.x - 4, q.y - 4), ImVec2(q.x + 4, q.y + 4), c, 2);
        dl->AddLine(ImVec2(q.x - 4, q.y + 4), ImVec2(q.x + 4, q.y - 4), c, 2);
      }
  }
  dl->PopClipRect();
  ImGui::Dummy(size);
  if (ImGui::IsItemHovered()) {
    const int r = std::clamp(int(std::lround((ImGui::GetIO().MousePos.x - plot0.x) / (plot1.x - plot0.x) * x_last)), 0, rows - 1);
    ImGui::BeginTooltip();
    ImGui::Text("step %d", r);
    if (std::isfinite(threshold[r])) ImGui::Text("threshold (k-th best kept on merit): %.5g", threshold[r]);
    for (int i = 0; i < static_cast<int>(positions.size()); ++i) {
      const int p = positions[i];
      if (p < 0 || p >= rec.positions()) continue;
      ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(curve_color(i)), "%d '%s': %.5g", p,
                         display_token(a.token_text, p).c_str(), rec.score(r, seg, p));
    }
    ImGui::EndTooltip();
  }

  // Legend.
  ImGui::SameLine();
  ImGui::BeginGroup();
  {
    const ImVec2 p = ImGui::GetCursorScreenPos();
    float ph = 0;
    dashed_line(dl, ImVec2(p.x, p.y + 7), ImVec2(p.x + 16, p.y + 7), p, ImVec2(p.x + 16, p.y + 14), axis, 1.5f, ph);
    ImGui::Dummy(ImVec2(18, 12));
    ImGui::SameLine();
    ImGui::TextUnformatted("threshold");
    const ImVec2 q = ImGui::GetCursorScreenPos();
    dl->AddRectFilled(ImVec2(q.x + 5, q.y + 1), ImVec2(q.x + 11, q.y + 13), (axis & 0x00FFFFFF) | 0x38000000);
    ImGui::Dummy(ImVec2(18, 12));
    ImGui::SameLine();
    ImGui::TextUnformatted("shown step");
  }
  for (int i = 0; i < static_cast<int>(positions.size()); ++i) {
    const int p = positions[i];
    const ImVec2 q = ImGui::GetCursorScreenPos();
    dl->AddLine(ImVec2(q.x, q.y + 7), ImVec2(q.x + 16, q.y + 7), curve_color(i), 2.5f);
    ImGui::Dummy(ImVec2(18, 12));
    ImGui::SameLine();
    ImGui::PushID(i);
    const bool bookmarked = std::find(s.bookmarks.begin(), s.bookmarks.end(), p) != s.bookmarks.end();
    ImGui::Text("%d '%s'%s", p, display_token(a.token_text, p).c_str(), bookmarked ? " *" : "");
    if (ImGui::IsItemHovered()) note_hovered_position(s, p);
    ImGui::PopID();
  }
  ImGui::EndGroup();
}

}  // namespace kvscope::gui
