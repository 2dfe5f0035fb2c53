#include <algorithm>
#include <cmath>
#include <vector>

#include <backends/imgui_impl_opengl3.h>

#include "frame_damage.h"
#include "frame_present.h"
#include "views/gl.h"

namespace kvscope::gui {

namespace {

// Draws `d` clipped to `rect` only: its commands' clip rectangles are
// intersected with it for one ImGui_ImplOpenGL3_RenderDrawData call and
// restored afterwards.
void render_draw_data_in(ImDrawData& d, const ImVec4& rect) {
  std::vector<ImVec4> saved;
  for (int n = 0; n < d.CmdListsCount; ++n)
    for (ImDrawCmd& c : d.CmdLists[n]->CmdBuffer) {
      saved.push_back(c.ClipRect);
      c.ClipRect = ImVec4(std::max(c.ClipRect.x, rect.x), std::max(c.ClipRect.y, rect.y),
                          std::min(c.ClipRect.z, rect.z), std::min(c.ClipRect.w, rect.w));
    }
  ImGui_ImplOpenGL3_RenderDrawData(&d);
  std::size_t i = 0;
  for (int n = 0; n < d.CmdListsCount; ++n)
    for (ImDrawCmd& c : d.CmdLists[n]->CmdBuffer) c.ClipRect = saved[i++];
}

}  // namespace

std::vector<PixelRect> draw_damaged(FrameDamage& damage, GLuint target, ImDrawData& d, int fb_w, int fb_h) {
  const std::vector<ImVec4> rects = damage.damaged(d);
  std::vector<PixelRect> drawn;
  if (rects.empty()) return drawn;
  glBindFramebuffer(GL_FRAMEBUFFER, target);
  glViewport(0, 0, fb_w, fb_h);
  glClearColor(0.08f, 0.08f, 0.10f, 1.0f);
  const ImVec2 scale = d.FramebufferScale;
  for (const ImVec4& r : rects) {
    // The rectangle in framebuffer pixels, GL's origin at the bottom.
    const int x0 = std::clamp(int((r.x - d.DisplayPos.x) * scale.x), 0, fb_w);
    const int x1 = std::clamp(int(std::ceil((r.z - d.DisplayPos.x) * scale.x)), x0, fb_w);
    const int y0 = std::clamp(int((r.y - d.DisplayPos.y) * scale.y), 0, fb_h);
    const int y1 = std::clamp(int(std::ceil((r.w - d.DisplayPos.y) * scale.y)), y0, fb_h);
    const PixelRect px{x0, fb_h - y1, x1 - x0, y1 - y0};
    if (px.w <= 0 || px.h <= 0) continue;
    glEnable(GL_SCISSOR_TEST);
    glScissor(px.x, px.y, px.w, px.h);
    glClear(GL_COLOR_BUFFER_BIT);
    render_draw_data_in(d, r);
    drawn.push_back(px);
  }
  glDisable(GL_SCISSOR_TEST);
  glBindFramebuffer(GL_FRAMEBUFFER, 0);
  return drawn;
}

float drawn_share(const std::vector<PixelRect>& rects, int fb_w, int fb_h) {
  if (rects.empty()) return 0;
  double area = 0;
  for (const PixelRect& r : rects) area += double(r.w) * r.h;
  return float(std::max(area / std::max(1.0, double(fb_w) * fb_h), 1e-6));
}

}  // namespace kvscope::gui
