// The layers x heads grid: a thumbnail of the current view mode per head
// (one atlas texture, see thumbnail_atlas.h), the kept-attention share
// under each (head_summary.h), a click selects the head.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "common/mask_codes.h"
#include "session/recorder.h"
#include "views/cell_rows.h"
#include "views/color_range.h"
#include "panels.h"
#include "views/grid_layout.h"
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

// Beside scrolling layers: every layer as a band, the visible ones framed,
// the selected one marked; a click scrolls there.
void draw_overview(AppState& s, GridCache& st, const GridLayout& g, int L, float h, float w, float scroll_y) {
  ImGui::SameLine();
  ImGui::InvisibleButton("overview", ImVec2(w, h));
  record_item_rect(s, "grid.overview");
  const ImVec2 o = ImGui::GetItemRectMin();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float band = h / float(L);
  dl->AddRectFilled(o, ImVec2(o.x + w, o.y + h), ImGui::GetColorU32(ImGuiCol_FrameBg));
  dl->AddRectFilled(ImVec2(o.x, o.y + s.layer * band), ImVec2(o.x + w, o.y + (s.layer + 1) * band),
                    IM_COL32(255, 200, 0, 255));
  const float first = scroll_y / g.pitch_y, shown = h / g.pitch_y;
  dl->AddRectFilled(ImVec2(o.x, o.y + first * band), ImVec2(o.x + w, o.y + std::min(float(L), first + shown) * band),
                    (ImGui::GetColorU32(ImGuiCol_Text) & 0x00FFFFFF) | 0x50000000);
  dl->AddRect(ImVec2(o.x, o.y + first * band), ImVec2(o.x + w, o.y + std::min(float(L), first + shown) * band),
              ImGui::GetColorU32(ImGuiCol_Text));
  const int under = std::clamp(int((ImGui::GetIO().MousePos.y - o.y) / band), 0, L - 1);
  if (ImGui::IsItemClicked())
    st.scroll_to_layer = std::clamp(under - g.visible_layers / 2, 0, std::max(0, L - g.visible_layers));
  if (ImGui::IsItemHovered()) {
    ImGui::BeginTooltip();
    ImGui::Text("layers %d\u2013%d of %d shown (selected: L%d)", int(first), std::min(L, int(first + shown)) - 1, L,
                s.layer);
    ImGui::TextDisabled("click to scroll to L%d; the wheel over the grid scrolls too", under);
    ImGui::EndTooltip();
  }
}

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
  // Every layer gets an equal share of the frame's work, so a long history
  // fills all thumbnails together (top rows first) instead of one layer
  // at a time while the others stay blank.
  const long share = std::max(1L, kCellsPerFrame / L);
  long rows_done = 0, rows_wanted = 0;
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
    st.atlas.update_layer(
        l, source, rows,
        [&](int head) {
          CellInputs hi = in;
          hi.head = head;
          return make_row_filler(kind, hi);
        },
        share);
    rows_done += std::min(st.atlas.layer_rows(l), rows);
    rows_wanted += rows;
  }
  st.atlas.upload_pending();

  // Colour: one range over every thumbnail (and the main view when shared).
  const bool diverging = kind == CellKind::DiffFork;
  const int value_kind = kind == CellKind::Statistic ? 1 : diverging ? 2 : 0;
  caches.ranges.report(RangeSlot::Grid, value_kind, st.atlas.extent());
  HeatmapStyle style;
  // A vs B follows the main view's third panel: the masks compared (codes)
  // or the attention difference (values).
  const bool fork_masks = kind == CellKind::DiffFork && s.view.fork_difference == ForkDifference::Masks;
  style.coloring =
      kind == CellKind::Mask || kind == CellKind::Ideal || fork_masks ? CellColoring::Codes : CellColoring::Values;
  style.colormap = diverging ? "coolwarm" : s.view.colormap;
  // The shared range reports the true extent; the grid's own range leaves
  // out the top percent (thumbnail_atlas.h: robust_extent).
  style.scale = resolve_scale(s.view, caches.ranges, value_kind, st.atlas.robust_extent(), diverging);
  style.outline_evicted = false;  // thumbnails are too small for outlines
  style.pool_by_magnitude = diverging;
  const HeatmapTexture& tex = st.atlas.texture();
  st.target.ensure(tex.cols(), tex.rows());
  char key[256];
  std::snprintf(key, sizeof(key), "%p %d %d %d %s %d %.9g %.9g", owner, st.epoch, st.atlas_kind, int(style.coloring),
                style.colormap.c_str(), int(style.scale.kind), style.scale.lo, style.scale.hi);
  std::string rendered = key;
  for (int l = 0; l < L; ++l) (rendered += ' ') += std::to_string(st.atlas.layer_rows(l));
  const bool filling = rows_done < rows_wanted;  // more rows wait for the next frames
  s.shell.grid_filling = filling;                // the launch script's screenshot waits for the finished picture
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
  // (Once the worker is idle the last row is final: summarized at once, so
  // a still window never shows an older step's numbers.)
  const bool streaming = summary_source == st.summary_source && s.timeline_row < 0 &&
                         (s.status.busy || s.status.playing || (s.worker && !s.worker->idle()));
  if (changed && (!streaming || now - st.summarized_at >= 0.25)) {
    st.summarized_at = now;
    st.summary_source = summary_source;
    st.summary_row = row;
    st.summary.assign(std::size_t(L) * H, std::nanf(""));
    for (int l = 0; l < L; ++l)
      for (int h = 0; h < H; ++h) st.summary[std::size_t(l) * H + h] = kept_attention_share(a, attention[l], l, h, row);
  }

  ImGui::PushTextWrapPos(0);  // a narrow panel wraps the caption rather than cutting it
  ImGui::TextDisabled("%s%s \u00b7 number = attention still held at step %d (?)",
                      kind == CellKind::Mask        ? "mask"
                      : kind == CellKind::Statistic ? "statistic"
                      : kind == CellKind::Ideal     ? "ideal overlay"
                      : kind == CellKind::DiffFork  ? (fork_masks ? "mask A vs B" : "attention A - B")
                                                    : "attention",
                      s.view.mode == ViewMode::DiffFull ? " (the full-cache difference is in the main view)" : "",
                      st.summary_row);
  ImGui::PopTextWrapPos();
  const bool caption_hovered = ImGui::IsItemHovered();
  if (filling) {
    // Said, not left blank: a long history takes a few frames to shrink.
    ImGui::TextDisabled("downsampling the history: %ld%%", rows_wanted ? rows_done * 100 / rows_wanted : 0);
  }
  if (caption_hovered) {
    ImGui::BeginTooltip();
    ImGui::PushTextWrapPos(ImGui::GetFontSize() * 30);
    ImGui::TextUnformatted(kHeadSummaryRule);
    ImGui::PopTextWrapPos();
    ImGui::EndTooltip();
  }

  // The cells: every head across, every layer down when they fit at a
  // legible size, else the layers scroll beside an overview (grid_layout.h).
  const float line = ImGui::GetTextLineHeight();
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  GridLayoutInput gi;
  gi.width = avail.x;
  gi.height = avail.y;
  gi.label_w = ImGui::CalcTextSize("L00 ").x;
  gi.header_h = line + 2;
  gi.share_h = line;
  gi.min_thumb = std::max(24.f, ImGui::GetFontSize() * 1.5f);
  gi.scrollbar_w = ImGui::GetStyle().ScrollbarSize;
  const float spacing = ImGui::GetStyle().ItemSpacing.x;
  gi.overview_w = std::max(12.f, ImGui::GetFontSize() * 0.8f) + spacing;  // the column and the space before it
  gi.layers = L;
  gi.heads = H;
  const GridLayout g = layout_grid(gi);
  const float thumb = g.thumb;
  const int tr_end = st.atlas.thumb_row_of(row) + 1;
  const int tc_end = std::max(1, st.atlas.thumb_col_end(static_cast<int>(a.tokens.size())));
  const float atlas_w = float(tex.cols()), atlas_h = float(tex.rows());
  ImDrawList* dl = ImGui::GetWindowDrawList();
  // Head numbers once above the columns (every n-th when they do not fit).
  {
    const ImVec2 o = ImGui::GetCursorScreenPos();
    const float name_w = ImGui::CalcTextSize("H00").x + 4;
    const int every = std::max(1, int(std::ceil(name_w / g.pitch_x)));
    for (int h = 0; h < H; h += every) {
      char name[16];
      std::snprintf(name, sizeof(name), "H%d", h);
      const float x = o.x + gi.label_w + h * g.pitch_x + std::max(0.f, (thumb - ImGui::CalcTextSize(name).x) / 2);
      dl->AddText(ImVec2(x, o.y), ImGui::GetColorU32(ImGuiCol_TextDisabled), name);
    }
    ImGui::Dummy(ImVec2(g.cells_w, gi.header_h - ImGui::GetStyle().ItemSpacing.y));
  }
  // The selected layer comes into view when it changes (a click elsewhere,
  // a lesson), not on every frame (the user may scroll away).
  if (g.scrolls && s.layer != st.followed_layer) {
    st.scroll_to_layer = first_layer_showing(s.layer, st.first_layer, g.visible_layers, L);
    st.followed_layer = s.layer;
  }
  const float cells_h = std::max(1.f, avail.y - gi.header_h);
  ImGui::BeginChild("grid_cells", ImVec2(avail.x - (g.scrolls ? gi.overview_w : 0), cells_h), false,
                    g.scrolls ? 0 : ImGuiWindowFlags_NoScrollbar);
  if (st.scroll_to_layer >= 0) {
    ImGui::SetScrollY(st.scroll_to_layer * g.pitch_y);
    st.scroll_to_layer = -1;
  }
  dl = ImGui::GetWindowDrawList();
  const ImVec2 clip0 = ImGui::GetWindowPos(),
               clip1(clip0.x + ImGui::GetWindowWidth(), clip0.y + ImGui::GetWindowHeight());
  for (int l = 0; l < L; ++l) {
    const float y = l * g.pitch_y;
    ImGui::SetCursorPos(ImVec2(0, y));
    if (!ImGui::IsRectVisible(ImVec2(g.cells_w, g.pitch_y))) continue;  // scrolled away: nothing to draw
    ImGui::PushID(l);
    ImGui::SetCursorPos(ImVec2(0, y + std::max(0.f, (thumb - line) / 2)));
    ImGui::Text("L%d", l);
    const bool missing = uses_attention(kind) && !attention[l].available();
    if (missing) {
      // One button for the whole row of heads: the replay fills the layer.
      ImGui::SetCursorPos(ImVec2(gi.label_w, y));
      const bool asked = st.fill_requested.count({a.generation, l}) > 0;
      if (ImGui::Button(asked ? "replaying\u2026" : "not recorded \u2014 click to replay",
                        ImVec2(g.cells_w - gi.label_w, thumb)) &&
          s.worker && !asked) {
        s.worker->fill_layer(l);
        st.fill_requested.insert({a.generation, l});
      }
      ImGui::PopID();
      continue;
    }
    for (int h = 0; h < H; ++h) {
      ImGui::PushID(h);
      ImGui::SetCursorPos(ImVec2(gi.label_w + h * g.pitch_x, y));
      ImGui::InvisibleButton("thumb", ImVec2(thumb, thumb + gi.share_h));
      const bool clicked = ImGui::IsItemClicked(), hovered = ImGui::IsItemHovered();
      const ImVec2 p = ImGui::GetItemRectMin(), q(p.x + thumb, p.y + thumb);
      const ImVec2 uv0(h * st.atlas.thumb_cols() / atlas_w, l * st.atlas.thumb_rows() / atlas_h);
      const ImVec2 uv1((h * st.atlas.thumb_cols() + tc_end) / atlas_w, (l * st.atlas.thumb_rows() + tr_end) / atlas_h);
      dl->AddImage(texture_id(st.target.texture()), p, q, uv0, uv1);
      // The tests read where every wholly visible thumbnail is.
      if (p.y >= clip0.y && q.y <= clip1.y && p.x >= clip0.x && q.x <= clip1.x)
        record_rect(s, "thumb." + std::to_string(l) + "." + std::to_string(h), p, ImVec2(thumb, thumb));
      const bool selected = l == s.layer && h == s.head;
      if (selected)
        dl->AddRect(ImVec2(p.x - 2, p.y - 2), ImVec2(q.x + 2, q.y + 2), IM_COL32(255, 200, 0, 255), 0, 0, 2.5f);
      const float share = st.summary[std::size_t(l) * H + h];
      // Centred under the thumbnail with a gap to its neighbours: "94%",
      // else "94" where the percent sign would not leave one (the caption
      // says what the number is), so no head's number is left out.
      char text[24];
      const float gap = ImGui::GetFontSize() * 0.4f;
      if (std::isnan(share)) std::snprintf(text, sizeof(text), "\u2014");
      else std::snprintf(text, sizeof(text), "%.0f%%", share * 100);
      if (!std::isnan(share) && ImGui::CalcTextSize(text).x + gap > g.pitch_x)
        std::snprintf(text, sizeof(text), "%.0f", share * 100);
      // Still too wide ("100" under a narrow thumbnail): a smaller size,
      // down to three quarters of the panel's, keeps the numbers apart.
      const float font = ImGui::GetFontSize();
      const float size =
          std::clamp(font * (g.pitch_x - gap) / std::max(1.f, ImGui::CalcTextSize(text).x), font * 0.75f, font);
      const float tw = ImGui::CalcTextSize(text).x * size / font;
      dl->AddText(ImGui::GetFont(), size, ImVec2(p.x + (thumb - tw) / 2, q.y), ImGui::GetColorU32(ImGuiCol_Text), text);
      if (clicked) {
        s.layer = l;
        s.head = h;
        s.head_chosen = true;
        st.followed_layer = l;  // already in view
      }
      if (hovered) {
        ImGui::BeginTooltip();
        ImGui::Text("layer %d, head %d (KV head %d)%s", l, h, a.session->recorder().layout().kv_head_of(h),
                    l == a.informative_layer && h == a.informative_head ? " \u2014 the most informative head" : "");
        if (!std::isnan(share)) ImGui::Text("attention still held at step %d: %.1f%%", st.summary_row, share * 100);
        {
          // This head's cache after that step, from the recorded masks: it
          // shows a budget shaped by depth (pyramidkv) as it is, layer by layer.
          const Recorder& rec = a.session->recorder();
          const int seg = rec.layout().segment_of(l, h);
          int kept = 0;
          if (st.summary_row >= 0 && st.summary_row < rec.rows_recorded())
            for (int p = 0; p < rec.positions(); ++p) {
              const uint8_t m = rec.mask(st.summary_row, seg, p);
              kept += m == kMaskKept || m == kMaskProtected;
            }
          ImGui::Text("KV slots kept after step %d: %d", st.summary_row, kept);
        }
        ImGui::PushTextWrapPos(ImGui::GetFontSize() * 30);
        ImGui::TextDisabled("%s", kHeadSummaryRule);
        ImGui::PopTextWrapPos();
        ImGui::TextDisabled("click to show it in the main view");
        ImGui::EndTooltip();
      }
      ImGui::PopID();
    }
    ImGui::PopID();
  }
  // The scroll extent: every layer's row.
  ImGui::SetCursorPos(ImVec2(0, g.content_h - g.pitch_y));
  ImGui::Dummy(ImVec2(g.cells_w, g.pitch_y - ImGui::GetStyle().ItemSpacing.y));
  const float scroll_y = ImGui::GetScrollY();
  ImGui::EndChild();
  st.first_layer = std::clamp(int(std::lround(scroll_y / g.pitch_y)), 0, L - 1);
  if (g.scrolls) draw_overview(s, st, g, L, cells_h, gi.overview_w - spacing, scroll_y);
}

}  // namespace kvscope::gui
