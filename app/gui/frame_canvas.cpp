#include <algorithm>
#include <vector>

#include <backends/imgui_impl_opengl3.h>

#include "frame_damage.h"
#include "views/heatmap_renderer.h"

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

float draw_damaged(FrameDamage& damage, RenderTarget& canvas, ImDrawData& d, int fb_w, int fb_h) {
  if (canvas.width() != fb_w || canvas.height() != fb_h) damage.invalidate();
  const std::vector<ImVec4> rects = damage.damaged(d);
  if (rects.empty()) return 0;
  float drawn = 0;
  canvas.ensure(fb_w, fb_h);
  glBindFramebuffer(GL_FRAMEBUFFER, canvas.framebuffer());
  glViewport(0, 0, fb_w, fb_h);
  glClearColor(0.08f, 0.08f, 0.10f, 1.0f);
  const ImVec2 scale = d.FramebufferScale;
  for (const ImVec4& r : rects) {
    // The rectangle in framebuffer pixels, GL's origin at the bottom.
    const int x0 = int((r.x - d.DisplayPos.x) * scale.x), x1 = int((r.z - d.DisplayPos.x) * scale.x);
    const int y0 = int((r.y - d.DisplayPos.y) * scale.y), y1 = int((r.w - d.DisplayPos.y) * scale.y);
    glEnable(GL_SCISSOR_TEST);
    glScissor(x0, fb_h - y1, x1 - x0, y1 - y0);
    glClear(GL_COLOR_BUFFER_BIT);
    render_draw_data_in(d, r);
    drawn += (r.z - r.x) * (r.w - r.y);
  }
  glDisable(GL_SCISSOR_TEST);
  // The whole canvas to the back buffer: what a swap leaves in it is not
  // defined, so the back buffer is made whole every time.
  glBindFramebuffer(GL_READ_FRAMEBUFFER, canvas.framebuffer());
  glBindFramebuffer(GL_DRAW_FRAMEBUFFER, 0);
  glBlitFramebuffer(0, 0, fb_w, fb_h, 0, 0, fb_w, fb_h, GL_COLOR_BUFFER_BIT, GL_NEAREST);
  glBindFramebuffer(GL_FRAMEBUFFER, 0);
  return std::max(drawn / std::max(1.f, d.DisplaySize.x * d.DisplaySize.y), 1e-6f);
}

}  // namespace kvscope::gui
