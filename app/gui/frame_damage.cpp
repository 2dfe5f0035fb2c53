#include "frame_damage.h"

#include <algorithm>
#include <cmath>

#include "views/gl.h"

namespace kvscope::gui {

namespace {

template <class T>
void append(std::vector<unsigned char>& out, const T* data, std::size_t count) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(data);
  out.insert(out.end(), bytes, bytes + count * sizeof(T));
}

// What a draw command contributes to the picture (not its pointers into
// ImGui's buffers, which differ from frame to frame).
struct CommandKey {
  ImVec4 clip;
  ImTextureID texture;
  const void* callback;
  std::uint64_t contents;                             // texture_serial(texture): its pixels changed since
  unsigned vtx_offset, idx_offset, elements, unused;  // no padding: compared as bytes
};

ImVec4 unite(const ImVec4& a, const ImVec4& b) {
  return {std::min(a.x, b.x), std::min(a.y, b.y), std::max(a.z, b.z), std::max(a.w, b.w)};
}
bool overlap(const ImVec4& a, const ImVec4& b) { return a.x < b.z && b.x < a.z && a.y < b.w && b.y < a.w; }
float area(const ImVec4& r) { return std::max(0.f, r.z - r.x) * std::max(0.f, r.w - r.y); }

// Lists' own rectangles, overlapping ones merged, few enough that drawing
// the frame once per rectangle stays cheap.
std::vector<ImVec4> merged(std::vector<ImVec4> rects, const ImVec4& display) {
  constexpr std::size_t kMostPasses = 3;
  constexpr float kMostOfTheDisplay = 0.6f;
  for (bool again = true; again;) {
    again = false;
    for (std::size_t i = 0; i < rects.size() && !again; ++i)
      for (std::size_t j = i + 1; j < rects.size() && !again; ++j)
        if (overlap(rects[i], rects[j])) {
          rects[i] = unite(rects[i], rects[j]);
          rects.erase(rects.begin() + long(j));
          again = true;
        }
  }
  float total = 0;
  for (const ImVec4& r : rects) total += area(r);
  if (rects.size() > kMostPasses || total > kMostOfTheDisplay * area(display)) return {display};
  return rects;
}

}  // namespace

std::vector<ImVec4> FrameDamage::damaged(const ImDrawData& d) {
  const ImVec4 display(d.DisplayPos.x, d.DisplayPos.y, d.DisplayPos.x + d.DisplaySize.x,
                       d.DisplayPos.y + d.DisplaySize.y);
  now_.resize(std::size_t(d.CmdListsCount));
  for (int n = 0; n < d.CmdListsCount; ++n) {
    const ImDrawList& list = *d.CmdLists[n];
    ListPicture& pic = now_[std::size_t(n)];
    pic.owner = list._OwnerName ? list._OwnerName : "";
    pic.bytes.clear();
    pic.bounds = ImVec4(display.z, display.w, display.x, display.y);  // empty
    const int sizes[3] = {list.CmdBuffer.Size, list.VtxBuffer.Size, list.IdxBuffer.Size};
    append(pic.bytes, sizes, 3);
    for (const ImDrawCmd& c : list.CmdBuffer) {
      CommandKey key{};
      key.clip = c.ClipRect;
      key.texture = c.TextureId;
      key.callback = reinterpret_cast<const void*>(c.UserCallback);
      key.contents = texture_serial(c.TextureId);
      key.vtx_offset = c.VtxOffset;
      key.idx_offset = c.IdxOffset;
      key.elements = c.ElemCount;
      append(pic.bytes, &key, 1);
      // Where the command can draw: its vertices' box within its clip
      // rectangle (a window's first clip rectangle is the whole display).
      ImVec4 box(c.ClipRect.z, c.ClipRect.w, c.ClipRect.x, c.ClipRect.y);
      for (unsigned e = 0; e < c.ElemCount; ++e) {
        const ImVec2 p = list.VtxBuffer.Data[c.VtxOffset + list.IdxBuffer.Data[c.IdxOffset + e]].pos;
        box = unite(box, ImVec4(p.x, p.y, p.x, p.y));
      }
      box = ImVec4(std::max(box.x, c.ClipRect.x), std::max(box.y, c.ClipRect.y), std::min(box.z, c.ClipRect.z),
                   std::min(box.w, c.ClipRect.w));
      if (area(box) > 0) pic.bounds = unite(pic.bounds, box);
    }
    append(pic.bytes, list.VtxBuffer.Data, std::size_t(list.VtxBuffer.Size));
    append(pic.bytes, list.IdxBuffer.Data, std::size_t(list.IdxBuffer.Size));
    pic.bounds = ImVec4(std::max(pic.bounds.x, display.x), std::max(pic.bounds.y, display.y),
                        std::min(pic.bounds.z, display.z), std::min(pic.bounds.w, display.w));
  }

  std::vector<ImVec4> rects;
  bool same_lists = lists_.size() == now_.size();
  for (std::size_t i = 0; same_lists && i < now_.size(); ++i) same_lists = lists_[i].owner == now_[i].owner;
  if (!same_lists) {
    rects.push_back(display);
  } else {
    for (std::size_t i = 0; i < now_.size(); ++i)
      if (lists_[i].bytes != now_[i].bytes) {
        if (area(lists_[i].bounds) > 0) rects.push_back(lists_[i].bounds);  // where it was
        if (area(now_[i].bounds) > 0) rects.push_back(now_[i].bounds);      // where it is
      }
    if (!rects.empty()) rects = merged(std::move(rects), display);
  }
  // Whole pixels, so that the clear and the clipped draws cover the same ones.
  for (ImVec4& r : rects) r = ImVec4(std::floor(r.x), std::floor(r.y), std::ceil(r.z), std::ceil(r.w));
  lists_.swap(now_);
  return rects;
}

}  // namespace kvscope::gui
