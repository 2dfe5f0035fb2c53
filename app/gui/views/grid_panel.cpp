// The layers x heads grid: a thumbnail of the current view mode per head
// (one atlas texture, see thumbnail_atlas.h), the kept-attention share
// under each (head_summary.h), a click selects the head.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "views/cell_rows.h"
#include "views/color_range.h"
#include "views/head_summary.h"
#include "views/heatmap_renderer.h"
#include "views/hover.h"
#include "views/thumbnail_atlas.h"
#include "views/views.h"

namespace kvscope::gui {
namespace {

constexpr long kCellsPerFrame = 1'000'000;  // downsampling work per frame (a few ms); the rest continues next frame
// While a long history is being downsampled, redraw the thumbnails at most
// this often rather than every frame (each redraw is a full atlas pass).
constexpr double kRedrawWhileFillingSeconds = 0.5;

// The grid shows the main view's mode, except where that needs data only
// one layer has: the full-cache reference is computed for the selected
// layer alone, so the grid shows attention then.
CellKind grid_kind(ViewMode m, bool has_fork) {
  switch (m) {
    case ViewMode::Mask: return CellKind::Mask;
    case ViewMode::Statistic: return CellKind::Statistic;
    case ViewMode::DiffFork: return has_fork ? CellKind::DiffFork : CellKind::Attention;
    case ViewMode::IdealOverlay: return CellKind::Ideal;
    default: return CellKind::Attention;
  }
}

bool uses_attention(CellKind k) { return k != CellKind::Mask && k != CellKind::Statistic; }

}  // namespace

void draw_grid_panel(AppState& s, ViewCaches& caches) {
  GridCache& st = caches.grid;
  begin_view_frame(s);
  if (!caches.gpu.ready()) {
    ImGui::TextWrapped("No heatmap shaders on this driver: %s", caches.gpu.error().c_str());
    return;
  }
  const std::shared_ptr<const PublishedRun> a_hold = s.a, b_hold = s.b;
  if (!a_hold || !a_hold->session || a_hold->rows == 0) {
    ImGui::TextDisabled("No session yet.");
    return;
  }
  const PublishedRun& a = *a_hold;
  const ModelConfig& cfg = a.session->model_config();
  const int L = cfg.n_layers, H = cfg.n_heads;
  const bool has_fork = b_hold && b_hold->session && b_hold->rows > 0;
  const CellKind kind = grid_kind(s.view.mode, has_fork);
  const int planned = a.session->recorder().rows();

  // Owner key: the session and the mode (a new mode starts the atlas over).
  const void* owner = a.session.get();
  if (!st.atlas.matches(owner, L, H, planned, a.positions) || st.atlas_kind != static_cast<int>(kind)) {
    st.atlas.reset(owner, L, H, planned, a.positions, /*pool_by_magnitude=*/kind == CellKind::DiffFork);
    st.atlas_kind = static_cast<int>(kind);
    ++st.epoch;
  }
  std::vector<RunAttention> attention(L), attention_b(L);
  long budget = kCellsPerFrame;
  for (int l = 0; l < L; ++l) {
    attention[l] = RunAttention(a, l, s.worker ? s.worker->filled_layer(l, false) : nullptr);
    if (has_fork) attention_b[l] = RunAttention(*b_hold, l, s.worker ? s.worker->filled_layer(l, true) : nullptr);
    CellInputs in;
    in.a = &a;
    in.b = has_fork ? b_hold.get() : nullptr;
    in.layer = l;
    in.attention_a = attention[l];
    in.attention_b = attention_b[l];
    const int rows = available_rows(kind, in);
    const void* source = uses_attention(kind) ? attention[l].source() : static_cast<const void*>(&a);
    if (budget > 0)
      budget -= st.atlas.update_layer(l, source, rows, [&](int head) {
        CellInputs hi = in;
        hi.head = head;
        return make_row_filler(kind, hi);
      }, budget);
  }
  st.atlas.upload_pending();

  // Colour: one range over every thumbnail (and the main view when shared).
  const bool diverging = kind == CellKind::DiffFork;
  const int value_kind = kind == CellKind::Statistic ? 1 : diverging ? 2 : 0;
  caches.ranges.report(RangeSlot::Grid, value_kind, st.atlas.extent());
  HeatmapStyle style;
  style.coloring = kind == CellKind::Mask || kind == CellKind::Ideal ? CellColoring::Codes : CellColoring::Values;
  style.colormap = diverging ? "coolwarm" : s.view.colormap;
  style.scale = resolve_scale(s.view, caches.ranges, value_kind, st.atlas.extent(), diverging);
  style.outline_evicted = false;  // thumbnails are too small for outlines
  style.pool_by_magnitude = diverging;
  const HeatmapTexture& tex = st.atlas.texture();
  st.target.ensure(tex.cols(), tex.rows());
  char key[256];
  std::snprintf(key, sizeof(key), "%p %d %d %d %s %d %.9g %.9g", owner, st.epoch, st.atlas_kind, int(style.coloring),
                style.colormap.c_str(), int(style.scale.kind), style.scale.lo, style.scale.hi);
  std::string rendered = key;
  for (int l = 0; l < L; ++l) (rendered += ' ') += std::to_string(st.atlas.layer_rows(l));
  const bool filling = budget <= 0;  // the budget ran out: more rows wait for the next frames
  const double now = ImGui::GetTime();
  if (rendered != st.rendered && (!filling || now - st.rendered_at >= kRedrawWhileFillingSeconds)) {
    HeatmapViewport vp;  // one pixel per thumbnail cell
    caches.gpu.render(st.target, tex, vp, style);
    st.rendered = rendered;
    st.rendered_at = now;
  }

  // Summaries at the shown row.
  const int row = s.shown_row();
  // The summaries depend on the session, the layers' attention and the row.
  std::string summary_source = std::to_string(a.generation);
  for (int l = 0; l < L; ++l) (summary_source += ' ') += std::to_string(reinterpret_cast<uintptr_t>(attention[l].source()));
  // Each summary reads 32 rows of every head, a few milliseconds on a large
  // model: while rows stream in at the latest step (play) they are
  // refreshed a few times a second, not every frame; a scrub, another
  // session or another layer's data at once.
  const bool changed = summary_source != st.summary_source || row != st.summary_row;
  const bool streaming = summary_source == st.summary_source && s.timeline_row < 0;
  if (changed && (!streaming || now - st.summarized_at >= 0.25)) {
    st.summarized_at = now;
    st.summary_source = summary_source;
    st.summary_row = row;
    st.summary.assign(std::size_t(L) * H, std::nanf(""));
    for (int l = 0; l < L; ++l)
      for (int h = 0; h < H; ++h) st.summary[std::size_t(l) * H + h] = kept_attention_share(a, attention[l], l, h, row);
  }

  ImGui::TextDisabled("%s%s \u00b7 number = attention still held at step %d (?)",
                      kind == CellKind::Mask ? "mask" : kind == CellKind::Statistic ? "statistic"
                      : kind == CellKind::Ideal ? "ideal overlay" : kind == CellKind::DiffFork ? "attention A - B" : "attention",
                      s.view.mode == ViewMode::DiffFull ? " (the full-cache difference is in the main view)" : "", st.summary_row);
  if (ImGui::IsItemHovered()) {
    ImGui::BeginTooltip();
    ImGui::PushTextWrapPos(ImGui::GetFontSize() * 30);
    ImGui::TextUnformatted(kHeadSummaryRule);
    ImGui::PopTextWrapPos();
    ImGui::EndTooltip();
  }

  // The cells: as large as the window allows, at least legible.
  ImGui::BeginChild("grid_cells", ImVec2(0, 0), false, ImGuiWindowFlags_HorizontalScrollbar);
  const float label_w = ImGui::CalcTextSize("L00 ").x, line = ImGui::GetTextLineHeight();
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float gap = 4;
  float thumb = std::floor((avail.x - label_w) / H - gap);
  thumb = std::min(thumb, std::floor((avail.y - 2 * line) / L - line - gap));  // the header line and a share line per layer
  thumb = std::max(thumb, 24.f);
  const int tr_end = st.atlas.thumb_row_of(row) + 1;
  const int tc_end = std::max(1, st.atlas.thumb_col_end(static_cast<int>(a.tokens.size())));
  const float atlas_w = float(tex.cols()), atlas_h = float(tex.rows());
  ImDrawList* dl = ImGui::GetWindowDrawList();
  // Head numbers once above the columns; under each thumbnail only its
  // share, so eight or more heads fit the column without scrolling.
  ImGui::SetCursorPosX(ImGui::GetCursorPosX() + label_w);
  for (int h = 0; h < H; ++h) {
    char name[16];
    std::snprintf(name, sizeof(name), "H%d", h);
    const float x = ImGui::GetCursorPosX();
    ImGui::SetCursorPosX(x + std::max(0.f, (thumb - ImGui::CalcTextSize(name).x) / 2));
    ImGui::TextDisabled("%s", name);
    ImGui::SameLine(x + thumb + gap);
  }
  ImGui::NewLine();
  for (int l = 0; l < L; ++l) {
    ImGui::PushID(l);
    ImGui::AlignTextToFramePadding();
    ImGui::Text("L%d", l);
    ImGui::SameLine(label_w);
    const bool missing = uses_attention(kind) && !attention[l].available();
    if (missing) {
      // One button for the whole row of heads: the replay fills the layer.
      const bool asked = st.fill_requested.count({a.generation, l}) > 0;
      if (ImGui::Button(asked ? "replaying\u2026" : "not recorded \u2014 click to replay",
                        ImVec2((thumb + gap) * H - gap, thumb + line)) && s.worker && !asked) {
        s.worker->fill_layer(l);
        st.fill_requested.insert({a.generation, l});
      }
      ImGui::PopID();
      continue;
    }
    for (int h = 0; h < H; ++h) {
      ImGui::PushID(h);
      ImGui::BeginGroup();
      const ImVec2 p = ImGui::GetCursorScreenPos();
      const ImVec2 uv0(h * st.atlas.thumb_cols() / atlas_w, l * st.atlas.thumb_rows() / atlas_h);
      const ImVec2 uv1((h * st.atlas.thumb_cols() + tc_end) / atlas_w, (l * st.atlas.thumb_rows() + tr_end) / atlas_h);
      ImGui::Image(texture_id(st.target.texture()), ImVec2(thumb, thumb), uv0, uv1);
      const bool selected = l == s.layer && h == s.head;
      if (selected) dl->AddRect(ImVec2(p.x - 2, p.y - 2), ImVec2(p.x + thumb + 2, p.y + thumb + 2), IM_COL32(255, 200, 0, 255), 0, 0, 2.5f);
      const float share = st.summary[std::size_t(l) * H + h];
      char text[24];
      if (std::isnan(share)) std::snprintf(text, sizeof(text), "\u2014");
      else std::snprintf(text, sizeof(text), "%.0f%%", share * 100);
      // Centred under the thumbnail, in the thumbnail's width.
      const float tw = ImGui::CalcTextSize(text).x;
      ImGui::SetCursorPosX(ImGui::GetCursorPosX() + std::max(0.f, (thumb - tw) / 2));
      ImGui::TextUnformatted(text);
      ImGui::Dummy(ImVec2(thumb, 0));
      ImGui::EndGroup();
      if (ImGui::IsItemClicked()) {
        s.layer = l;
        s.head = h;
        s.head_chosen = true;
      }
      if (ImGui::IsItemHovered()) {
        ImGui::BeginTooltip();
        ImGui::Text("layer %d, head %d (KV head %d)%s", l, h, a.session->recorder().layout().kv_head_of(h),
                    l == a.informative_layer && h == a.informative_head ? " \u2014 the most informative head" : "");
        if (!std::isnan(share)) ImGui::Text("attention still held at step %d: %.1f%%", st.summary_row, share * 100);
        ImGui::PushTextWrapPos(ImGui::GetFontSize() * 30);
        ImGui::TextDisabled("%s", kHeadSummaryRule);
        ImGui::PopTextWrapPos();
        ImGui::TextDisabled("click to show it in the main view");
        ImGui::EndTooltip();
      }
      ImGui::SameLine(0, gap);
      ImGui::PopID();
    }
    ImGui::NewLine();
    ImGui::PopID();
  }
  ImGui::EndChild();
}

}  // namespace kvscope::gui
