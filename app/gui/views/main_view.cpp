// The main view: the selected head's picture in the current mode, zoomable,
// with its colorbar or legend; in the fork comparison A | B | difference.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>
#include <string>

#include "panels.h"
#include "policy/params.h"
#include "reports/figure_export.h"
#include "views/cell_rows.h"
#include "views/cell_tooltip.h"
#include "views/color_range.h"
#include "views/colorbar.h"
#include "views/first_view.h"
#include "views/heatmap_panel.h"
#include "views/hover.h"
#include "views/palette.h"
#include "views/token_text.h"
#include "views/view_toolbar.h"
#include "views/views.h"

namespace kvscope::gui {
namespace {

// Groups of pictures that may share one colour range.
enum ValueKind { kAttentionValues = 0, kStatisticValues = 1, kDifferenceValues = 2 };

using Picture = MainViewCache::Picture;

CellKind kind_of(ViewMode m) {
  switch (m) {
    case ViewMode::Mask: return CellKind::Mask;
    case ViewMode::Statistic: return CellKind::Statistic;
    case ViewMode::DiffFull: return CellKind::DiffFull;
    case ViewMode::DiffFork: return CellKind::DiffFork;
    case ViewMode::IdealOverlay: return CellKind::Ideal;
    default: return CellKind::Attention;
  }
}

bool needs_attention(CellKind k) { return k != CellKind::Mask && k != CellKind::Statistic; }

// Keeps the selection inside the model, and on the informative head until
// the user picks one.
void settle_selection(AppState& s, const PublishedRun& a) {
  const ModelConfig& cfg = a.session->model_config();
  if (!s.head_chosen) {
    s.layer = a.informative_layer;
    s.head = a.informative_head;
  }
  s.layer = std::clamp(s.layer, 0, cfg.n_layers - 1);
  s.head = std::clamp(s.head, 0, cfg.n_heads - 1);
}

// The camera for this frame: fit, or the zoomed one of s.view, following
// the newest row when asked.
Camera camera_for(AppState& s, ImVec2 cells_size, int rows, int cols) {
  ViewSettings& v = s.view;
  Camera cam;
  const double fit_x = std::max(cols, 1) / double(cells_size.x), fit_y = std::max(rows, 1) / double(cells_size.y);
  if (v.open_on_columns) {
    // A session file or lesson names the positions to open on: those
    // columns across the panel, every row down.
    const auto [first, last] = *v.open_on_columns;
    v.open_on_columns.reset();
    v.open_first_view = false;  // named positions win (a lesson's step after its session's open)
    v.fit_while_legible = false;
    const double span = std::clamp(last - first + 1, 1, std::max(cols, 1));
    v.zoom = std::min(fit_x, span / double(cells_size.x));
    v.zoom_aspect = fit_y / v.zoom;
    v.view_x0 = std::clamp(first, 0, std::max(0, cols - 1));
    v.view_y0 = 0;
    v.follow_latest = false;
  }
  // Nothing names the positions to open on (or the fit it chose then still
  // holds while the run grows): the fit, or where the fit's labels could
  // not show, the newest cells at a legible size.
  if (v.open_first_view || (v.fit_while_legible && v.zoom <= 0)) {
    v.open_first_view = false;
    const FirstView first =
        first_view(rows, cols, cells_size.x, cells_size.y, column_label_min_px(), row_label_min_px());
    v.fit_while_legible = first.fit;
    if (!first.fit) {
      v.zoom = first.cells_per_px_x;
      v.zoom_aspect = first.cells_per_px_y / first.cells_per_px_x;
      v.view_x0 = first.x0;
      v.view_y0 = first.y0;
      v.follow_latest = true;
    }
  }
  if (v.zoom <= 0) {
    cam.cells_per_px_x = fit_x;
    cam.cells_per_px_y = fit_y;
    v.zoom_aspect = fit_y / fit_x;
    return cam;
  }
  // Each axis zooms on its own and no further out than its fit.
  cam.cells_per_px_x = std::min(v.zoom, fit_x);
  cam.cells_per_px_y = std::min(v.zoom * v.zoom_aspect, fit_y);
  // Zoomed out as far as the fit in both directions: back to fit.
  if (cam.cells_per_px_x >= fit_x && cam.cells_per_px_y >= fit_y) {
    v.zoom = 0;
    return camera_for(s, cells_size, rows, cols);
  }
  const double shown_rows = cells_size.y * cam.cells_per_px_y, shown_cols = cells_size.x * cam.cells_per_px_x;
  cam.x0 = v.view_x0;
  cam.y0 = v.view_y0;
  if (v.follow_latest) {
    cam.y0 = rows - shown_rows;
    if (cam.x0 + shown_cols < cols) cam.x0 = cols - shown_cols;
  }
  // Panning stops at the data's edges (no scrolling into emptiness).
  cam.x0 = std::clamp(cam.x0, 0.0, std::max(0.0, cols - shown_cols));
  cam.y0 = std::clamp(cam.y0, 0.0, std::max(0.0, rows - shown_rows));
  return cam;
}

void store_camera(AppState& s, const Camera& before, const Camera& after) {
  if (after == before) return;
  s.view.fit_while_legible = false;  // the user moved the view: theirs from now on
  s.view.zoom = after.cells_per_px_x;
  s.view.zoom_aspect = after.cells_per_px_y / after.cells_per_px_x;
  s.view.view_x0 = after.x0;
  s.view.view_y0 = after.y0;
}

// Draws a picture and, in strip mode, its mask under it (same columns).
PanelHover draw_picture(AppState& s, ViewGpu& gpu, Picture& pic, HeatmapPanelSpec spec, Camera& cam, ImVec2 size) {
  const bool strip = s.view.evicted == EvictedMark::Strip && spec.style.coloring == CellColoring::Values;
  spec.style.outline_evicted = s.view.evicted == EvictedMark::Outline;
  if (!strip) return draw_heatmap_panel(spec, cam, pic.panel, gpu, size, s);
  ImGui::BeginGroup();  // heatmap over strip, one item for SameLine()
  const float strip_h = std::floor(size.y * 0.3f);
  const float main_h = size.y - strip_h;
  PanelHover hover = draw_heatmap_panel(spec, cam, pic.panel, gpu, ImVec2(size.x, main_h), s);
  // The strip: the same code texture, coloured by mask state, rows squeezed
  // into its height; zooming or panning it moves the heatmap's columns.
  const float title_h = spec.title.empty() ? 0 : ImGui::GetTextLineHeightWithSpacing();
  const float main_cells_h = main_h - title_h - col_label_height(), strip_cells_h = strip_h - col_label_height();
  Camera strip_cam = cam;
  const double squeeze = main_cells_h / std::max(1.f, strip_cells_h);
  strip_cam.cells_per_px_y = cam.cells_per_px_y * squeeze;
  const Camera before = strip_cam;
  HeatmapPanelSpec mask = spec;
  mask.id = "strip";
  mask.title.clear();
  mask.notice.clear();
  mask.style.coloring = CellColoring::Codes;
  const PanelHover strip_hover = draw_heatmap_panel(mask, strip_cam, pic.strip, gpu, ImVec2(size.x, strip_h), s);
  if (!(strip_cam == before)) {
    cam.x0 = strip_cam.x0;
    cam.cells_per_px_x = strip_cam.cells_per_px_x;
    cam.cells_per_px_y = strip_cam.cells_per_px_y / squeeze;
    cam.y0 = strip_cam.y0;
  }
  ImGui::EndGroup();
  return hover.hovered ? hover : strip_hover;
}

struct Inputs {
  CellInputs cells;       // A (and B, full) for the main picture
  CellInputs b_alone;     // B as its own picture (fork view)
  std::shared_ptr<const FullReference> full;
};

// Asks the worker for what the view needs and does not have yet: a replay
// of a layer the recorder does not keep, the full-cache reference.
void request_missing(AppState& s, MainViewCache& st, const PublishedRun& a, CellKind kind, const RunAttention& att) {
  if (!s.worker) return;
  if (needs_attention(kind) && !att.recorded() && att.rows() < a.rows &&
      st.fill_requested.insert({a.generation, s.layer}).second)
    s.worker->fill_layer(s.layer);
  if (kind == CellKind::DiffFull) {
    // One request in flight at a time: while a run grows, the next request
    // goes out when the previous reference has arrived (each one replays
    // the whole run under a full cache, so asking every step would pile up).
    const FullReference* f = s.full_ref.get();
    auto covers = [&](uint64_t generation, int layer, int rows) {
      return f && f->generation == generation && f->layer == layer && f->rows >= rows;
    };
    const auto [req_generation, req_layer, req_rows] = st.full_requested;
    // An idle worker that did not deliver (an error, a cancel) is asked
    // again only once the run has grown, so a failing request is not repeated every frame.
    const bool in_flight = req_generation == a.generation && req_layer == s.layer &&
                           !covers(req_generation, req_layer, req_rows) && (!s.worker->idle() || a.rows == req_rows);
    if (!covers(a.generation, s.layer, a.rows) && !in_flight) {
      s.worker->request_full_reference(s.layer);
      st.full_requested = {a.generation, s.layer, a.rows};
    }
  }
}

std::string notice_for(CellKind kind, const CellInputs& in, int available, const PublishedRun& a) {
  if (available > 0) return "";
  if (kind == CellKind::DiffFull) return "computing the full-cache reference\u2026";
  if (kind == CellKind::DiffFork && !in.b) return "no fork: press F (or Fork in the controls) to compare";
  if (needs_attention(kind) && !in.attention_a.available())
    return "layer " + std::to_string(in.layer) + " not recorded: replaying\u2026";
  return a.rows == 0 ? "waiting for the prefill\u2026" : "";
}

// The model as a person names it: the file or folder it came from.
std::string model_label(const kvscope::SessionConfig& c) {
  if (c.model.empty()) return "bundled model";
  const std::filesystem::path p(c.model);
  const std::string stem = p.has_stem() ? p.stem().string() : p.parent_path().filename().string();
  return stem.empty() ? c.model : stem;
}

// What the view shows, in one line above it: model, layer, head, and the
// policy in effect at the shown step (A's and B's in the fork view).
void draw_view_title(AppState& s, const PublishedRun& a, const PublishedRun* b) {
  const int row = s.shown_row();
  std::string title =
      model_label(a.config) + " \u00b7 layer " + std::to_string(s.layer) + " \u00b7 head " + std::to_string(s.head);
  // Scrubbed back to before a policy switch: that policy's name and the
  // step the switch came at (the resolved numbers are the current one's).
  auto policy = [&](const PublishedRun& run) {
    const int latest = run.rows - 1;
    if (kvscope::policy_since_row(run.config, row) == kvscope::policy_since_row(run.config, latest))
      return run.policy_label;
    int until = latest;
    for (const auto& ch : run.config.policy_changes)
      if (ch.from_step > row) until = std::min(until, ch.from_step);
    return std::string(kvscope::policy_name(kvscope::policy_at_row(run.config, row).kind)) + " (until step " +
           std::to_string(until) + ")";
  };
  if (b) title += " \u00b7 A: " + policy(a) + " \u00b7 B: " + policy(*b);
  else title += " \u00b7 " + policy(a);
  ImGui::TextWrapped("%s", title.c_str());
  record_item_rect(s, "title.main_view");
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", title.c_str());
}

void draw_legend(const PaletteTextures& textures, CellKind kind, const kvscope::ColorScale& scale,
                 const std::string& cmap, ForkDifference fd, float height) {
  ImGui::BeginGroup();
  if (kind == CellKind::Mask) draw_code_legend(mask_legend_codes());
  else if (kind == CellKind::Ideal) draw_code_legend(ideal_legend_codes());
  else if (kind == CellKind::DiffFork && fd == ForkDifference::Masks) draw_code_legend(fork_legend_codes());
  else {
    // Short: the colorbar is narrow (the statistic's full name is the panel's title).
    std::string label = kind == CellKind::Statistic ? "statistic" : "attention";
    if (kind == CellKind::DiffFull) label = "A - full";
    if (kind == CellKind::DiffFork) label = "A - B";
    draw_colorbar(textures, scale, cmap, label, height);
  }
  ImGui::EndGroup();
}

}  // namespace

void draw_main_view(AppState& s, ViewCaches& caches) {
  MainViewCache& st = caches.main_view;
  ViewGpu& gpu = caches.gpu;
  begin_view_frame(s);
  draw_view_toolbar(s);
  if (!gpu.ready()) {
    ImGui::TextWrapped("The heatmap shaders did not compile on this OpenGL driver: %s", gpu.error().c_str());
    return;
  }
  const std::shared_ptr<const PublishedRun> a_hold = s.a, b_hold = s.b;
  const std::shared_ptr<const FullReference> full_hold = s.full_ref;
  if (!a_hold || !a_hold->session || a_hold->rows == 0) {
    ImGui::TextDisabled(s.status.busy ? "%s\u2026" : "No session yet: open a model or a session file.",
                        s.status.task.c_str());
    return;
  }
  const PublishedRun& a = *a_hold;
  settle_selection(s, a);
  const CellKind kind = kind_of(s.view.mode);
  const bool fork_view = kind == CellKind::DiffFork && b_hold && b_hold->session && b_hold->rows > 0;
  // Presenter mode saves a line: the title goes beside the short toolbar.
  if (s.presenter) ImGui::SameLine(0, ImGui::GetFontSize());
  draw_view_title(s, a, fork_view ? b_hold.get() : nullptr);

  CellInputs in;
  in.a = &a;
  in.b = b_hold.get();
  in.full = full_hold.get();
  in.layer = s.layer;
  in.head = s.head;
  in.attention_a = RunAttention(a, s.layer, s.worker ? s.worker->filled_layer(s.layer, false) : nullptr);
  if (b_hold && b_hold->session)
    in.attention_b = RunAttention(*b_hold, s.layer, s.worker ? s.worker->filled_layer(s.layer, true) : nullptr);
  request_missing(s, st, a, kind, in.attention_a);

  const int last_row = s.shown_row();
  const int cols = std::min<int>(a.positions, static_cast<int>(a.tokens.size()));
  ImVec2 avail = ImGui::GetContentRegionAvail();
  const std::vector<uint8_t>* legend_codes = kind == CellKind::Mask    ? &mask_legend_codes()
                                             : kind == CellKind::Ideal ? &ideal_legend_codes()
                                             : fork_view && s.view.fork_difference == ForkDifference::Masks ? &fork_legend_codes()
                                                                                                        : nullptr;
  float legend_w = colorbar_width();
  bool legend_above = false;
  if (legend_codes) {
    legend_w = 0;
    for (uint8_t c : *legend_codes) legend_w = std::max(legend_w, ImGui::CalcTextSize(code_label(c).c_str()).x);
    legend_w += ImGui::GetFontSize() * 2;
    // A legend that would take more than a quarter of the width (large
    // presenter fonts, a narrow window) goes above the picture in a row.
    if (legend_w > avail.x * 0.25f) {
      draw_code_legend(*legend_codes, true);
      legend_w = 0;
      legend_above = true;
      avail = ImGui::GetContentRegionAvail();
    }
  }
  // Panels side by side share one camera, so their cell areas are equally
  // wide: the first carries the row labels, the others a narrow margin.
  const int panels = fork_view ? 3 : 1;
  const float narrow = 6;
  // Step labels carry the query's token only when a row is a text line
  // tall (at the fit, or at the current zoom); otherwise numbers, in a
  // narrow margin that leaves the width to the cells.
  const double fit_px_per_row = avail.y / double(last_row + 1);
  double px_per_row = s.view.zoom > 0 ? 1.0 / (s.view.zoom * s.view.zoom_aspect) : fit_px_per_row;
  // A view that opens this frame sets the zoom only below (camera_for):
  // judge by its rows, not the old zoom's, or the label margin and so the
  // cells' width would change once more on the next frame.
  if (s.view.open_on_columns) px_per_row = fit_px_per_row;  // every row, at the fit
  else if (s.view.open_first_view) px_per_row = std::max<double>(fit_px_per_row, row_label_min_px());
  const bool row_tokens = px_per_row >= row_label_min_px();
  float label_w = row_label_width(row_tokens);
  if (row_tokens) {
    // As wide as the labels of the rows on screen (a text line tall each,
    // so a few dozen), at most an eighth of the view: long tokens are cut.
    const int first = s.view.zoom > 0 ? std::max(0, static_cast<int>(s.view.view_y0)) : 0;
    const int last = std::min(last_row, first + static_cast<int>(avail.y / ImGui::GetTextLineHeight()) + 1);
    float widest = row_label_width(false);
    for (int r = first; r <= last; ++r) {
      const std::string label = std::to_string(r) + " " + display_token(a.token_text, a.prompt_length - 1 + r);
      widest = std::max(widest, ImGui::CalcTextSize(label.c_str()).x + 4);
    }
    label_w = std::min({label_w, widest, avail.x / 8});
  }
  const float cells_w = (avail.x - legend_w - 8 - label_w - (panels - 1) * narrow) / panels;
  const ImVec2 panel_size(cells_w + label_w, std::max(40.f, avail.y));
  const ImVec2 side_panel_size(cells_w + narrow, panel_size.y);
  // The panels' titles (the fork's A / B, the statistic's name) take a line
  // above the cells: the camera fits the rows into what is left.
  const bool titled = fork_view || kind == CellKind::Statistic;
  const float title_h = titled ? ImGui::GetTextLineHeightWithSpacing() : 0;
  const ImVec2 cells_size(std::max(8.f, cells_w),
                          std::max(8.f, (s.view.evicted == EvictedMark::Strip ? panel_size.y * 0.7f : panel_size.y) -
                                            title_h - col_label_height()));
  const Camera before = camera_for(s, cells_size, last_row + 1, cols);
  Camera cam = before;

  // Upload what is new (one row per step) and work out the colour scales.
  const int planned_rows = a.session->recorder().rows();
  auto sync = [&](Picture& pic, CellKind k, const CellInputs& ci) {
    const int n = available_rows(k, ci);
    if (n > 0 || pic.cells.key() != make_key(k, ci))
      pic.cells.sync(make_key(k, ci), planned_rows, a.positions, n, n > 0 ? make_row_filler(k, ci) : RowFiller());
    return n;
  };
  TooltipInputs tip{&a, nullptr, nullptr, &in.attention_a, nullptr, s.layer, s.head};
  PanelHover hover;
  if (!fork_view) {
    const int n = sync(st.a, kind, in);
    HeatmapPanelSpec spec;
    spec.id = "A";
    spec.row_tokens = row_tokens;
    spec.row_label_w = label_w;
    spec.cells = &st.a.cells;
    spec.last_row = std::min(last_row, std::max(n - 1, 0));
    spec.visible_cols = cols;
    spec.run = &a;
    spec.window = a.session->model_config().window_of(s.layer);
    spec.first_query = a.prompt_length - 1;
    spec.notice = notice_for(kind, in, n, a);
    // The statistic is the policy's in effect at the shown step, and so is
    // its colour range: a switch from H2O's sums to TOVA's probabilities
    // must not leave the new values invisible under the old range.
    const int since = kind == CellKind::Statistic ? kvscope::policy_since_row(a.config, last_row) : 0;
    if (kind == CellKind::Statistic)
      spec.title = kvscope::statistic_name(kvscope::policy_at_row(a.config, last_row).kind);
    const bool diverging = kind == CellKind::DiffFull;
    const int value_kind = kind == CellKind::Statistic ? kStatisticValues : diverging ? kDifferenceValues : kAttentionValues;
    const kvscope::ValueExtent own = st.a.cells.extent_of_rows(since, last_row);
    caches.ranges.report(RangeSlot::MainA, value_kind, own);
    caches.ranges.forget(RangeSlot::MainB);
    spec.style.coloring = kind == CellKind::Mask || kind == CellKind::Ideal ? CellColoring::Codes : CellColoring::Values;
    spec.style.colormap = diverging ? "coolwarm" : s.view.colormap;
    spec.style.scale = resolve_scale(s.view, caches.ranges, value_kind, own, diverging);
    spec.style.pool_by_magnitude = diverging;
    if (kind == CellKind::DiffFull) tip.full = full_hold.get();
    hover = draw_picture(s, gpu, st.a, spec, cam, panel_size);
    if (!legend_above) {
      ImGui::SameLine();
      draw_legend(gpu.textures(), kind, spec.style.scale, spec.style.colormap, s.view.fork_difference, panel_size.y);
    }
  } else {
    // A | B | difference, one camera.
    const PublishedRun& b = *b_hold;
    CellInputs b_in = in;
    b_in.a = &b;
    b_in.b = nullptr;
    b_in.attention_a = in.attention_b;
    const int na = sync(st.a, CellKind::Attention, in), nb = sync(st.b, CellKind::Attention, b_in);
    const int nd = sync(st.diff, CellKind::DiffFork, in);
    const kvscope::ValueExtent ea = st.a.cells.extent_up_to(last_row), eb = st.b.cells.extent_up_to(last_row);
    caches.ranges.report(RangeSlot::MainA, kAttentionValues, ea);
    caches.ranges.report(RangeSlot::MainB, kAttentionValues, eb);
    kvscope::ValueExtent both = ea;
    both.add(eb);  // A and B always share: they are drawn to be compared
    HeatmapPanelSpec sa;
    sa.row_tokens = row_tokens;
    sa.row_label_w = label_w;
    sa.cells = &st.a.cells;
    sa.visible_cols = cols;
    sa.run = &a;
    sa.style.colormap = s.view.colormap;
    sa.style.scale = resolve_scale(s.view, caches.ranges, kAttentionValues, both, false);
    HeatmapPanelSpec sb = sa, sd = sa;
    // Short titles (the panels are narrow); the view's title line names
    // both policies in full.
    sa.id = "A";
    sa.title = "A";
    sa.last_row = std::min(last_row, std::max(na - 1, 0));
    sa.notice = notice_for(CellKind::Attention, in, na, a);
    sb.id = "B";
    sb.cells = &st.b.cells;
    sb.title = "B";
    sb.run = &b;
    sb.last_row = std::min(last_row, std::max(nb - 1, 0));
    sb.notice = notice_for(CellKind::Attention, b_in, nb, b);
    sd.id = "diff";
    sd.cells = &st.diff.cells;
    sd.last_row = std::min(last_row, std::max(nd - 1, 0));
    const bool masks = s.view.fork_difference == ForkDifference::Masks;
    sd.title = masks ? "mask A vs B" : "A - B";
    sd.style.coloring = masks ? CellColoring::Codes : CellColoring::Values;
    sd.style.colormap = "coolwarm";
    sd.style.scale = resolve_scale(s.view, caches.ranges, kDifferenceValues, st.diff.cells.extent_up_to(last_row), true);
    sd.style.pool_by_magnitude = true;
    const PanelHover ha = draw_picture(s, gpu, st.a, sa, cam, panel_size);
    ImGui::SameLine(0, 0);
    sb.row_labels = sd.row_labels = false;
    const PanelHover hb = draw_picture(s, gpu, st.b, sb, cam, side_panel_size);
    ImGui::SameLine(0, 0);
    const PanelHover hd = draw_picture(s, gpu, st.diff, sd, cam, side_panel_size);
    if (!legend_above) {
      ImGui::SameLine();
      draw_legend(gpu.textures(), CellKind::DiffFork, sd.style.scale, "coolwarm", s.view.fork_difference, panel_size.y);
    }
    hover = ha.hovered ? ha : hb.hovered ? hb : hd;
    tip.b = &b;
    tip.attention_b = &in.attention_b;
  }
  store_camera(s, before, cam);
  s.shell.columns_shown = {cam.x0, std::min<double>(cols, cam.x0 + cells_size.x * cam.cells_per_px_x)};
  s.shell.rows_shown = {cam.y0, std::min<double>(last_row + 1, cam.y0 + cells_size.y * cam.cells_per_px_y)};
  s.shell.columns_total = cols;
  s.shell.label_min_px = {column_label_min_px(), row_label_min_px()};
  if (hover.hovered) {
    note_hovered_position(s, hover.col);
    show_cell_tooltip(tip, hover.row, hover.col);
  }
}

}  // namespace kvscope::gui
