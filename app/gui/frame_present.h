// Showing a frame drawn where only what changed is drawn again
// (frame_damage.h) on the window.
//
// The usual way draws into an offscreen canvas that persists, copies the
// whole canvas into the back buffer and swaps: a swap leaves the back
// buffer's contents undefined, so every frame must refill all of it. Under
// a software rasteriser that copy, and the X server's copy of the swapped
// image, are a whole window of memory traffic each frame (about 5 ms of a
// 1600 x 1000 frame on llvmpipe), even when a tooltip moved. With
// GLX_MESA_copy_sub_buffer the back buffer is never swapped, so it keeps
// what it holds: the changed rectangles are drawn straight into it and
// only they are copied to the window. Hardware drivers keep the canvas and
// the swap (their copies cost nothing, and the swap waits for the
// display's refresh).
#pragma once

#include <memory>
#include <string_view>
#include <vector>

namespace kvscope::gui {

class RenderTarget;

// A rectangle in framebuffer pixels, GL's way: (x, y) its bottom-left corner.
struct PixelRect {
  int x = 0, y = 0, w = 0, h = 0;
};

// Whether the GL_RENDERER string names one of Mesa's software rasterisers.
bool is_software_renderer(std::string_view gl_renderer);

class FrameDamage;

class FramePresenter {
 public:
  FramePresenter();
  ~FramePresenter();
  FramePresenter(const FramePresenter&) = delete;
  FramePresenter& operator=(const FramePresenter&) = delete;

  // Looks at the current context (once, after it is made current): partial
  // presents need GLX_MESA_copy_sub_buffer and a software rasteriser;
  // KVSCOPE_FULL_PRESENT=1 in the environment turns them off (to compare).
  void init();
  bool partial() const { return copy_sub_buffer_ != nullptr; }
  // Frees the canvas while the context exists.
  void release();

  // The framebuffer to draw this frame's changes into, fb_w x fb_h pixels,
  // holding the last frame: the back buffer itself when presents are
  // partial, else the canvas. A new size tells `damage` that nothing is
  // kept.
  unsigned target(int fb_w, int fb_h, FrameDamage& damage);

  // Shows `changed` (the rectangles drawn this frame; empty: none, nothing
  // is shown). Returns false when the caller must swap the window's
  // buffers to show them.
  bool present(const std::vector<PixelRect>& changed, int fb_w, int fb_h);

 private:
  // glXCopySubBufferMESA, cast back to its own type where it is called
  // (frame_present.cpp: the header keeps X11's types out of the app).
  void (*copy_sub_buffer_)() = nullptr;
  std::unique_ptr<RenderTarget> canvas_;
  int w_ = 0, h_ = 0;  // the size drawn at last
};

}  // namespace kvscope::gui
