// Showing a frame drawn into the canvas (frame_damage.h) on the window.
//
// The usual way copies the whole canvas into the back buffer and swaps:
// a swap leaves the back buffer's contents undefined, so every frame must
// refill all of it. Under a software rasteriser that copy, and the X
// server's copy of the swapped image, are a whole window of memory traffic
// each frame (about 5 ms of a 1600 x 1000 frame on llvmpipe), even when a
// tooltip moved. With GLX_MESA_copy_sub_buffer the back buffer is never
// swapped, so it keeps what it holds: only the rectangles that changed are
// copied into it and from it to the window. Hardware drivers keep the swap
// (their copies cost nothing, and the swap waits for the display's refresh).
#pragma once

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

class FramePresenter {
 public:
  // Looks at the current context (once, after it is made current): partial
  // presents need GLX_MESA_copy_sub_buffer and a software rasteriser;
  // KVSCOPE_FULL_PRESENT=1 in the environment turns them off (to compare).
  void init();
  bool partial() const { return copy_sub_buffer_ != nullptr; }

  // Shows `changed` (the canvas's rectangles drawn this frame; empty: none,
  // nothing is shown) of `canvas`, `fb_w` x `fb_h` pixels. Returns false
  // when the caller must swap the window's buffers to show it.
  bool present(const RenderTarget& canvas, const std::vector<PixelRect>& changed, int fb_w, int fb_h);

 private:
  // glXCopySubBufferMESA, cast back to its own type where it is called
  // (frame_present.cpp: the header keeps X11's types out of the app).
  void (*copy_sub_buffer_)() = nullptr;
};

}  // namespace kvscope::gui
