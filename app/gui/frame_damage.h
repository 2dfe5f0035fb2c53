// Rasterising only the parts of a frame that differ from the one on screen.
//
// Under a software rasteriser (Mesa llvmpipe: a VM, remote desktop, CI)
// filling a 1600 x 1000 window costs 15-30 ms of CPU per frame, most of it
// the panels' backgrounds and text, even where nothing moved; and the loop
// wakes at least ten times a second (main.cpp). So the frame is drawn where
// the last one persists (frame_present.h), and each frame ImGui still
// builds on the CPU (about a millisecond) is compared, draw list by draw
// list (window by window), with the last one drawn: its vertices, indices,
// textures (and their contents, texture_serial() in views/gl.h) and clip
// rectangles. Only the rectangles of the lists that changed are cleared
// and drawn again, every list clipped to them, in ImGui's order, so the
// pixels there are exactly those of a full redraw; nothing changed means
// nothing is drawn nor presented. When the lists themselves change (a
// window or tooltip appears, the order of windows changes) or the window
// system lost the contents (invalidate()), the whole frame is drawn.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <imgui.h>

namespace kvscope::gui {

class FrameDamage {
 public:
  // The rectangles of `d` (ImGui's display coordinates: x0, y0, x1, y1)
  // that differ from the last frame this was asked about; empty when none.
  // At most a few, merged; the whole display when most of it changed.
  std::vector<ImVec4> damaged(const ImDrawData& d);
  // The window's contents are gone (expose, resize): all of the next frame.
  void invalidate() { lists_.clear(); }

 private:
  struct ListPicture {
    std::string owner;
    std::vector<unsigned char> bytes;  // what the list draws
    ImVec4 bounds;                     // where (the union of its clip rectangles)
  };
  std::vector<ListPicture> lists_, now_;
};

struct PixelRect;

// (frame_canvas.cpp) Draws what changed of `d` into the framebuffer
// `target` (fb_w x fb_h pixels, holding the last frame: FramePresenter::
// target). Returns the rectangles drawn again (FramePresenter::present
// shows them): none when nothing changed.
std::vector<PixelRect> draw_damaged(FrameDamage& damage, unsigned target, ImDrawData& d, int fb_w, int fb_h);

// The share of a fb_w x fb_h frame's pixels that `rects` cover (0: none).
float drawn_share(const std::vector<PixelRect>& rects, int fb_w, int fb_h);

}  // namespace kvscope::gui
