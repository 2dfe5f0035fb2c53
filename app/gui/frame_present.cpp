#include "frame_present.h"

#include <cstdlib>
#include <cstring>

#include "views/gl.h"
#include "views/heatmap_renderer.h"

#ifdef KVSCOPE_HAVE_GLX
#include <GL/glx.h>
#endif

namespace kvscope::gui {

bool is_software_renderer(std::string_view r) {
  // Mesa's names: "llvmpipe (LLVM 15.0.6, 256 bits)", "softpipe",
  // "Software Rasterizer" (the old swrast), "SWR" (OpenSWR).
  for (std::string_view name : {"llvmpipe", "softpipe", "Software Rasterizer", "SWR "})
    if (r.find(name) != std::string_view::npos) return true;
  return false;
}

void FramePresenter::init() {
  copy_sub_buffer_ = nullptr;
#ifdef KVSCOPE_HAVE_GLX
  const char* full = std::getenv("KVSCOPE_FULL_PRESENT");
  if (full && std::strcmp(full, "0") != 0) return;
  const auto* renderer = reinterpret_cast<const char*>(glGetString(GL_RENDERER));
  if (!renderer || !is_software_renderer(renderer)) return;
  Display* display = glXGetCurrentDisplay();  // null when the context is not GLX's (EGL, Wayland)
  if (!display || !glXGetCurrentDrawable()) return;
  const char* extensions = glXQueryExtensionsString(display, DefaultScreen(display));
  if (!extensions || !std::strstr(extensions, "GLX_MESA_copy_sub_buffer")) return;
  copy_sub_buffer_ = glXGetProcAddressARB(reinterpret_cast<const GLubyte*>("glXCopySubBufferMESA"));
#endif
}

bool FramePresenter::present(const RenderTarget& canvas, const std::vector<PixelRect>& changed, int fb_w, int fb_h) {
  if (changed.empty()) return true;
  glBindFramebuffer(GL_READ_FRAMEBUFFER, canvas.framebuffer());
  glBindFramebuffer(GL_DRAW_FRAMEBUFFER, 0);
  if (!partial()) {
    // The whole canvas: what a swap leaves in the back buffer is not
    // defined, so it is made whole every time.
    glBlitFramebuffer(0, 0, fb_w, fb_h, 0, 0, fb_w, fb_h, GL_COLOR_BUFFER_BIT, GL_NEAREST);
    glBindFramebuffer(GL_FRAMEBUFFER, 0);
    return false;
  }
#ifdef KVSCOPE_HAVE_GLX
  // The back buffer is never swapped, so outside `changed` it still holds
  // the canvas as last copied (the first frame, and any after the window
  // lost its contents, is a whole one: FrameDamage::invalidate).
  for (const PixelRect& r : changed)
    glBlitFramebuffer(r.x, r.y, r.x + r.w, r.y + r.h, r.x, r.y, r.x + r.w, r.y + r.h, GL_COLOR_BUFFER_BIT, GL_NEAREST);
  glBindFramebuffer(GL_FRAMEBUFFER, 0);
  Display* display = glXGetCurrentDisplay();
  const GLXDrawable drawable = glXGetCurrentDrawable();
  using CopySubBuffer = void (*)(Display*, GLXDrawable, int x, int y, int width, int height);
  const auto copy = reinterpret_cast<CopySubBuffer>(copy_sub_buffer_);
  for (const PixelRect& r : changed) copy(display, drawable, r.x, r.y, r.w, r.h);  // flushes GL first
#endif
  return true;
}

}  // namespace kvscope::gui
