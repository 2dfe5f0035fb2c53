#include "frame_present.h"

#include <cstdlib>
#include <cstring>

#include "frame_damage.h"
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

FramePresenter::FramePresenter() = default;
FramePresenter::~FramePresenter() = default;

void FramePresenter::release() { canvas_.reset(); }

unsigned FramePresenter::target(int fb_w, int fb_h, FrameDamage& damage) {
  if (fb_w != w_ || fb_h != h_) damage.invalidate();  // a new back buffer (or canvas) holds nothing yet
  w_ = fb_w;
  h_ = fb_h;
  if (partial()) return 0;
  if (!canvas_) canvas_ = std::make_unique<RenderTarget>();
  canvas_->ensure(fb_w, fb_h);
  return canvas_->framebuffer();
}

bool FramePresenter::present(const std::vector<PixelRect>& changed, int fb_w, int fb_h) {
  if (changed.empty()) return true;
  if (!partial()) {
    // The whole canvas: what a swap leaves in the back buffer is not
    // defined, so it is made whole every time.
    glBindFramebuffer(GL_READ_FRAMEBUFFER, canvas_->framebuffer());
    glBindFramebuffer(GL_DRAW_FRAMEBUFFER, 0);
    glBlitFramebuffer(0, 0, fb_w, fb_h, 0, 0, fb_w, fb_h, GL_COLOR_BUFFER_BIT, GL_NEAREST);
    glBindFramebuffer(GL_FRAMEBUFFER, 0);
    return false;
  }
#ifdef KVSCOPE_HAVE_GLX
  // The back buffer is never swapped, so outside `changed` it still holds
  // the last frames' pixels (the first frame, and any after the window
  // lost its contents, is a whole one: FrameDamage::invalidate).
  Display* display = glXGetCurrentDisplay();
  const GLXDrawable drawable = glXGetCurrentDrawable();
  using CopySubBuffer = void (*)(Display*, GLXDrawable, int x, int y, int width, int height);
  const auto copy = reinterpret_cast<CopySubBuffer>(copy_sub_buffer_);
  for (const PixelRect& r : changed) copy(display, drawable, r.x, r.y, r.w, r.h);  // flushes GL first
#endif
  return true;
}

}  // namespace kvscope::gui
