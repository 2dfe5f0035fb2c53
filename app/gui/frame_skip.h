// Not rasterising a frame that would look exactly like the one on screen.
//
// Under a software rasteriser (Mesa llvmpipe, the usual case in a VM or
// over remote desktop) filling a 1600 x 1000 window costs ~15-20 ms of
// CPU per frame even when nothing moves, and the loop wakes at least ten
// times a second (main.cpp). ImGui still builds every frame (cheap: the
// panels run on the CPU in about a millisecond), but when its draw data
// is byte-identical to the last frame presented (same vertices, indices,
// textures, clip rectangles, display size) and no texture the frame shows
// has been written since (gl_content_serial(), views/gl.h), the last frame
// is still what the window holds: nothing is rasterised, nothing swapped.
// Anything that draws differently (a hover, a tooltip, a new step, text
// that changed) differs in the draw data and is drawn as before. A window
// system that lost the contents (expose, resize) asks again through
// invalidate().
#pragma once

#include <cstdint>
#include <vector>

struct ImDrawData;

namespace kvscope::gui {

class FrameSkip {
 public:
  // True when `d` and the texture writes counted by `content_serial`
  // are what the last presented frame showed. Remembers them otherwise.
  bool same_as_presented(const ImDrawData& d, std::uint64_t content_serial);
  // The window's contents are gone (expose, resize): draw the next frame.
  void invalidate() { valid_ = false; }

 private:
  std::vector<unsigned char> last_, now_;
  std::uint64_t last_serial_ = 0;
  bool valid_ = false;
};

}  // namespace kvscope::gui
