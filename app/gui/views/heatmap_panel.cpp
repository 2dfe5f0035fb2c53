#include "views/heatmap_panel.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "panels.h"
#include "text_fit.h"
#include "views/token_text.h"

namespace kvscope::gui {
namespace {

std::string render_inputs(const HeatmapPanelSpec& spec, const HeatmapViewport& vp, int w, int h) {
  const HeatmapKey& k = spec.cells->key();
  char buf[512];
  std::snprintf(
      buf, sizeof(buf), "%p %llu %d %d %d %p %d | %.9g %.9g %.9g %.9g | %d %d %d %d | %d %s %d %.9g %.9g %d %d",
      k.source, static_cast<unsigned long long>(k.generation), k.layer, k.head, k.kind, k.extra,
      spec.cells->filled_rows(), vp.x0, vp.y0, vp.cells_per_px_x, vp.cells_per_px_y, vp.last_row, vp.visible_cols, w, h,
      static_cast<int>(spec.style.coloring), spec.style.colormap.c_str(), static_cast<int>(spec.style.scale.kind),
      spec.style.scale.lo, spec.style.scale.hi, spec.style.outline_evicted, spec.style.pool_by_magnitude);
  return buf;
}

// What the panel's picture is rendered as: the target's size and viewport,
// and the part of it ImGui shows across the cells.
struct PictureLayout {
  int w = 1, h = 1;
  HeatmapViewport vp;
  ImVec2 uv0{0, 0}, uv1{1, 1};
};

// At a pixel per cell or more, with no outlines to draw (they need the
// screen's resolution: below kMinOutlineCellPixels cells are tinted, and
// the code views have none), the picture holds one texel per visible cell
// and ImGui magnifies it (nearest), which samples the cell under each
// pixel's centre as the shader would: the same picture for a fraction of
// the shaded pixels, and panning within a cell renders nothing again.
// Otherwise one texel per framebuffer pixel.
PictureLayout picture_layout(const HeatmapPanelSpec& spec, const Camera& cam, int fb_w, int fb_h, ImVec2 fb_scale) {
  PictureLayout out;
  const double cpp_x = cam.cells_per_px_x / fb_scale.x, cpp_y = cam.cells_per_px_y / fb_scale.y;
  out.vp.visible_cols = spec.visible_cols;
  out.vp.last_row = spec.last_row;
  out.vp.reduced_levels = true;  // redrawn as it pans and zooms
  const bool outlines = spec.style.outline_evicted && spec.style.coloring == CellColoring::Values &&
                        std::min(1 / cpp_x, 1 / cpp_y) >= kMinOutlineCellPixels;
  if (cpp_x <= 1 && cpp_y <= 1 && !outlines) {
    const double c0 = std::floor(cam.x0), r0 = std::floor(cam.y0);
    const double c1 = std::ceil(cam.x0 + fb_w * cpp_x), r1 = std::ceil(cam.y0 + fb_h * cpp_y);
    out.w = std::max(1, int(c1 - c0));
    out.h = std::max(1, int(r1 - r0));
    out.vp.x0 = c0;
    out.vp.y0 = r0;
    out.vp.cells_per_px_x = out.vp.cells_per_px_y = 1;
    out.uv0 = ImVec2(float((cam.x0 - c0) / out.w), float((cam.y0 - r0) / out.h));
    out.uv1 = ImVec2(float((cam.x0 + fb_w * cpp_x - c0) / out.w), float((cam.y0 + fb_h * cpp_y - r0) / out.h));
    return out;
  }
  out.w = fb_w;
  out.h = fb_h;
  out.vp.x0 = cam.x0;
  out.vp.y0 = cam.y0;
  out.vp.cells_per_px_x = cpp_x;
  out.vp.cells_per_px_y = cpp_y;
  return out;
}

// Zoom by (fx, fy) around the screen point `at` (relative to the cells'
// top-left); a factor of 1 leaves that axis alone. Each axis stops on its
// own at 64 pixels per cell (beyond that nothing more is legible), so a run
// of a few rows over hundreds of positions still zooms across when its
// rows are already as tall as they get.
void zoom_around(Camera& cam, ImVec2 at, double fx, double fy) {
  const double cx = cam.x0 + at.x * cam.cells_per_px_x, cy = cam.y0 + at.y * cam.cells_per_px_y;
  const double min_cpp = 1.0 / 64;
  cam.cells_per_px_x = std::max(cam.cells_per_px_x * fx, std::min(min_cpp, cam.cells_per_px_x));
  cam.cells_per_px_y = std::max(cam.cells_per_px_y * fy, std::min(min_cpp, cam.cells_per_px_y));
  cam.x0 = cx - at.x * cam.cells_per_px_x;
  cam.y0 = cy - at.y * cam.cells_per_px_y;
}

// Which axes the wheel zooms, by where the pointer is (Tracy's way): over
// the column labels across only, over the row labels down only, over the
// cells both (Ctrl: across only, Shift: down only).
enum class WheelAxes { None, Both, Across, Down };

WheelAxes wheel_axes(ImVec2 mouse, ImVec2 origin, ImVec2 cells_size, float margin, bool over_cells) {
  const ImGuiIO& io = ImGui::GetIO();
  if (over_cells) return io.KeyCtrl ? WheelAxes::Across : io.KeyShift ? WheelAxes::Down : WheelAxes::Both;
  const bool in_x = mouse.x >= origin.x && mouse.x < origin.x + cells_size.x;
  const bool in_y = mouse.y >= origin.y && mouse.y < origin.y + cells_size.y;
  if (in_x && mouse.y < origin.y && mouse.y >= origin.y - col_label_height()) return WheelAxes::Across;
  if (in_y && mouse.x < origin.x && mouse.x >= origin.x - margin) return WheelAxes::Down;
  return WheelAxes::None;
}

// The camera that shows the screen box [a, b] (relative to the cells'
// top-left) across the whole panel; an axis the box is too thin on (a
// drag along the other axis) keeps its scale.
Camera camera_for_box(const Camera& cam, ImVec2 a, ImVec2 b, ImVec2 cells_size) {
  Camera out = cam;
  const float lo_x = std::min(a.x, b.x), hi_x = std::max(a.x, b.x), lo_y = std::min(a.y, b.y),
              hi_y = std::max(a.y, b.y);
  constexpr float kMinBoxPixels = 4;
  if (hi_x - lo_x >= kMinBoxPixels) {
    out.x0 = cam.x0 + lo_x * cam.cells_per_px_x;
    out.cells_per_px_x = std::max(1.0 / 64, (hi_x - lo_x) * cam.cells_per_px_x / cells_size.x);
  }
  if (hi_y - lo_y >= kMinBoxPixels) {
    out.y0 = cam.y0 + lo_y * cam.cells_per_px_y;
    out.cells_per_px_y = std::max(1.0 / 64, (hi_y - lo_y) * cam.cells_per_px_y / cells_size.y);
  }
  return out;
}

void draw_column_labels(ImDrawList* dl, ImVec2 origin, float width, const Camera& cam, const HeatmapPanelSpec& spec) {
  const float px_per_col = float(1.0 / cam.cells_per_px_x);
  const float line = ImGui::GetTextLineHeight();
  const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text);
  const int first = std::max(0, int(std::floor(cam.x0))), last = std::min(spec.visible_cols - 1, int(cam.x0 + width * cam.cells_per_px_x));
  dl->PushClipRect(ImVec2(origin.x, origin.y - col_label_height()), ImVec2(origin.x + width, origin.y), true);
  const float y = origin.y - line - 2;
  if (spec.run && px_per_col >= column_label_min_px()) {
    // Token text cut to its column with an ellipsis ("Unit…"): clipped
    // mid-glyph, "United" read as "Unitec", another word.
    for (int p = first; p <= last; ++p) {
      const float x = origin.x + float((p - cam.x0) * px_per_col);
      const std::string label = cut_to(display_token(spec.run->token_text, p), px_per_col - 2);
      dl->PushClipRect(ImVec2(x, y), ImVec2(x + px_per_col - 1, y + line), true);
      dl->AddText(ImVec2(x + 1, y), text, label.c_str());
      dl->PopClipRect();
    }
  } else {
    // Position numbers every `step` columns, spaced to fit.
    const float label_w = ImGui::CalcTextSize("00000").x;
    int step = 1;
    while (step * px_per_col < label_w) step *= step % 10 == 1 || step == 1 ? 5 : 2;
    for (int p = (first / step) * step; p <= last; p += step) {
      const float x = origin.x + float((p + 0.5 - cam.x0) * px_per_col);
      char buf[16];
      std::snprintf(buf, sizeof(buf), "%d", p);
      // Centred on its column, but never cut by the panel's edges.
      const float tw = ImGui::CalcTextSize(buf).x;
      dl->AddText(ImVec2(std::max(origin.x, std::min(x - tw / 2, origin.x + width - tw)), y), text, buf);
      dl->AddLine(ImVec2(x, origin.y - 2), ImVec2(x, origin.y), text);
    }
  }
  dl->PopClipRect();
}

void draw_row_labels(ImDrawList* dl, ImVec2 origin, float height, const Camera& cam, const HeatmapPanelSpec& spec) {
  const float px_per_row = float(1.0 / cam.cells_per_px_y);
  const float line = ImGui::GetTextLineHeight();
  const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text);
  const int first = std::max(0, int(std::floor(cam.y0))), last = std::min(spec.last_row, int(cam.y0 + height * cam.cells_per_px_y));
  const float left = origin.x - row_margin(spec);
  dl->PushClipRect(ImVec2(left, origin.y), ImVec2(origin.x, origin.y + height), true);
  int step = 1;
  if (px_per_row < line) {
    while (step * px_per_row < line * 1.2f) step *= step % 10 == 1 || step == 1 ? 5 : 2;
  }
  const bool with_tokens = spec.run && step == 1 && spec.row_tokens;
  for (int r = (first / step) * step; r <= last; r += step) {
    const float y = origin.y + float((r + 0.5 - cam.y0) * px_per_row) - line / 2;
    char buf[24];
    std::snprintf(buf, sizeof(buf), "%d ", r);
    std::string label = buf;
    // Row r is the step whose query is the token at prompt - 1 + r.
    if (with_tokens) label += display_token(spec.run->token_text, spec.run->prompt_length - 1 + r);
    dl->AddText(ImVec2(left + 2, y), text, label.c_str());
  }
  dl->PopClipRect();
}

}  // namespace

float row_label_width(bool with_tokens) { return ImGui::CalcTextSize(with_tokens ? "0000 wwwwwwww" : "00000").x; }
float row_margin(const HeatmapPanelSpec& spec) {
  if (!spec.row_labels) return 6.f;
  return spec.row_label_w > 0 ? spec.row_label_w : row_label_width(spec.row_tokens);
}
float col_label_height() { return ImGui::GetTextLineHeight() + 4; }
float column_label_min_px() { return ImGui::CalcTextSize("ab").x; }  // two characters of the token
float row_label_min_px() { return ImGui::GetTextLineHeight(); }

PanelHover draw_heatmap_panel(const HeatmapPanelSpec& spec, Camera& cam, PanelRenderCache& cache, ViewGpu& gpu,
                              ImVec2 size, AppState& s) {
  PanelHover hover;
  ImGui::PushID(spec.id);
  const ImVec2 top_left = ImGui::GetCursorScreenPos();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  float title_h = 0;
  if (!spec.title.empty()) {
    title_h = ImGui::GetTextLineHeightWithSpacing();
    // Clipped to the panel: titles of panels side by side must not run into each other.
    dl->PushClipRect(top_left, ImVec2(top_left.x + size.x - 4, top_left.y + title_h), true);
    dl->AddText(ImVec2(top_left.x + row_margin(spec), top_left.y), ImGui::GetColorU32(ImGuiCol_Text), spec.title.c_str());
    dl->PopClipRect();
  }
  const ImVec2 origin(top_left.x + row_margin(spec), top_left.y + title_h + col_label_height());
  const ImVec2 cells_size(std::max(8.f, size.x - row_margin(spec)), std::max(8.f, size.y - title_h - col_label_height()));

  // Render at the framebuffer's resolution (HiDPI): cells per framebuffer pixel.
  const ImVec2 fb_scale = ImGui::GetIO().DisplayFramebufferScale;
  const int w = std::max(1, int(cells_size.x * fb_scale.x)), h = std::max(1, int(cells_size.y * fb_scale.y));
  const PictureLayout pic = picture_layout(spec, cam, w, h, fb_scale);
  cache.target.ensure(pic.w, pic.h);
  const std::string inputs = render_inputs(spec, pic.vp, pic.w, pic.h);
  if (inputs != cache.last) {
    gpu.render(cache.target, spec.cells->texture(), pic.vp, spec.style);
    cache.last = inputs;
  }
  ImGui::SetCursorScreenPos(origin);
  // Drawn without blending: every pixel of the picture is opaque (the
  // shader writes alpha 1 over a target cleared opaque), so the result is
  // the same, and a software rasteriser skips reading what lies beneath
  // (1-2 ms of a frame that pans, bench/README.md).
  dl->AddCallback([](const ImDrawList*, const ImDrawCmd*) { glDisable(GL_BLEND); }, nullptr);
  ImGui::Image(texture_id(cache.target.texture()), cells_size, pic.uv0, pic.uv1);
  dl->AddCallback(ImDrawCallback_ResetRenderState, nullptr);  // ImGui's own state (blending) back
  {
    // Every pixel of the image is opaque (heatmap.frag.glsl writes alpha 1,
    // the target is cleared opaque): the panel's background need not be
    // drawn under it, as far as the image itself is drawn (its clip).
    const ImVec2 lo = dl->GetClipRectMin(), hi = dl->GetClipRectMax();
    s.shell.opaque_cells.push_back({std::max(origin.x, lo.x), std::max(origin.y, lo.y),
                                    std::min(origin.x + cells_size.x, hi.x), std::min(origin.y + cells_size.y, hi.y)});
  }
  // An invisible button over the image takes the mouse (drag to pan) so
  // the window does not move with it.
  ImGui::SetCursorScreenPos(origin);
  ImGui::InvisibleButton("cells", cells_size);
  record_item_rect(s, std::string("cells.") + spec.id);
  const bool hovered = ImGui::IsItemHovered();
  const ImGuiIO& io = ImGui::GetIO();
  const WheelAxes axes = io.MouseWheel != 0 && ImGui::IsWindowHovered()
                             ? wheel_axes(io.MousePos, origin, cells_size, row_margin(spec), hovered)
                             : WheelAxes::None;
  if (axes != WheelAxes::None) {
    const ImVec2 at(io.MousePos.x - origin.x, io.MousePos.y - origin.y);
    const double f = std::pow(0.85, io.MouseWheel);
    zoom_around(cam, at, axes == WheelAxes::Down ? 1.0 : f, axes == WheelAxes::Across ? 1.0 : f);
    s.view.follow_latest = false;
  }
  // A drag past ImGui's threshold pans (and stops following the newest
  // row); a plain click leaves the view and "follow" alone.
  if (ImGui::IsItemActive() && ImGui::IsMouseDragging(ImGuiMouseButton_Left) &&
      (io.MouseDelta.x != 0 || io.MouseDelta.y != 0)) {
    cam.x0 -= io.MouseDelta.x * cam.cells_per_px_x;
    cam.y0 -= io.MouseDelta.y * cam.cells_per_px_y;
    s.view.follow_latest = false;
  }
  // A right-button drag draws the box to zoom to.
  if (hovered && ImGui::IsMouseClicked(ImGuiMouseButton_Right))
    cache.box_from = ImVec2(io.MousePos.x - origin.x, io.MousePos.y - origin.y);
  if (cache.box_from) {
    const ImVec2 to(std::clamp(io.MousePos.x - origin.x, 0.f, cells_size.x),
                    std::clamp(io.MousePos.y - origin.y, 0.f, cells_size.y));
    if (ImGui::IsMouseDown(ImGuiMouseButton_Right)) {
      const ImVec2 a(origin.x + cache.box_from->x, origin.y + cache.box_from->y), b(origin.x + to.x, origin.y + to.y);
      ImGui::GetForegroundDrawList()->AddRectFilled(a, b, IM_COL32(255, 255, 255, 40));
      ImGui::GetForegroundDrawList()->AddRect(a, b, IM_COL32(255, 255, 255, 220), 0, 0, 1.5f);
    } else {
      const Camera boxed = camera_for_box(cam, *cache.box_from, to, cells_size);
      if (!(boxed == cam)) s.view.follow_latest = false;
      cam = boxed;
      cache.box_from.reset();
    }
  }
  if (hovered) {
    const int col = int(std::floor(cam.x0 + (io.MousePos.x - origin.x) * cam.cells_per_px_x));
    const int row = int(std::floor(cam.y0 + (io.MousePos.y - origin.y) * cam.cells_per_px_y));
    if (col >= 0 && col < spec.visible_cols && row >= 0 && row <= spec.last_row) {
      hover.hovered = true;
      hover.row = row;
      hover.col = col;
    }
  }

  // Overlays: the hovered token's column, bookmarks, the timeline row.
  dl->PushClipRect(origin, ImVec2(origin.x + cells_size.x, origin.y + cells_size.y), true);
  auto col_x = [&](double c) { return origin.x + float((c - cam.x0) / cam.cells_per_px_x); };
  auto row_y = [&](double r) { return origin.y + float((r - cam.y0) / cam.cells_per_px_y); };
  if (s.hovered_position >= 0) {
    const float x0 = col_x(s.hovered_position), x1 = std::max(col_x(s.hovered_position + 1), x0 + 1);
    dl->AddRect(ImVec2(x0 - 1, origin.y), ImVec2(x1 + 1, origin.y + cells_size.y), IM_COL32(255, 255, 255, 200), 0, 0, 1.5f);
    dl->AddRect(ImVec2(x0 - 2, origin.y), ImVec2(x1 + 2, origin.y + cells_size.y), IM_COL32(0, 0, 0, 160));
  }
  if (spec.window > 0) {
    // The layer's own window: keys left of this edge are masked by the
    // model (not evicted), one step further right on every row.
    const ImU32 edge = IM_COL32(255, 170, 40, 230);
    const int r_first = std::max(0, int(std::floor(cam.y0)));
    const int r_last = std::min(spec.last_row, int(std::ceil(cam.y0 + cells_size.y * cam.cells_per_px_y)));
    for (int r = r_first; r <= r_last; ++r) {
      const int first_seen = spec.first_query + r - spec.window + 1;
      if (first_seen <= 0) continue;
      const float x = col_x(first_seen), y0 = row_y(r), y1 = row_y(r + 1);
      dl->AddLine(ImVec2(x, y0), ImVec2(x, y1), edge, 2.f);
      if (r > 0 && spec.first_query + r - spec.window > 0) dl->AddLine(ImVec2(col_x(first_seen - 1), y0), ImVec2(x, y0), edge, 2.f);
    }
  }
  const float y = row_y(spec.last_row + 1);
  dl->AddLine(ImVec2(origin.x, y), ImVec2(origin.x + cells_size.x, y), IM_COL32(255, 60, 200, 255), 2.f);
  if (!spec.notice.empty()) {
    const ImVec2 ts = ImGui::CalcTextSize(spec.notice.c_str());
    const ImVec2 c(origin.x + cells_size.x / 2, origin.y + cells_size.y / 2);
    dl->AddRectFilled(ImVec2(c.x - ts.x / 2 - 8, c.y - ts.y / 2 - 6), ImVec2(c.x + ts.x / 2 + 8, c.y + ts.y / 2 + 6),
                      IM_COL32(30, 30, 30, 220), 4);
    dl->AddText(ImVec2(c.x - ts.x / 2, c.y - ts.y / 2), IM_COL32(255, 255, 255, 255), spec.notice.c_str());
  }
  dl->PopClipRect();
  for (int p : s.bookmarks) {
    const float x = col_x(p + 0.5);
    if (x < origin.x || x > origin.x + cells_size.x) continue;
    dl->AddTriangleFilled(ImVec2(x - 4, origin.y - 7), ImVec2(x + 4, origin.y - 7), ImVec2(x, origin.y), IM_COL32(230, 40, 40, 255));
  }
  draw_column_labels(dl, origin, cells_size.x, cam, spec);
  if (spec.row_labels) draw_row_labels(dl, origin, cells_size.y, cam, spec);
  // The whole panel as one item, so SameLine() after it goes to its right.
  ImGui::SetCursorScreenPos(top_left);
  ImGui::Dummy(size);
  ImGui::PopID();
  return hover;
}

}  // namespace kvscope::gui
