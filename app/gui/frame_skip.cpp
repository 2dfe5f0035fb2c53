#include "frame_skip.h"

#include <imgui.h>

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
  unsigned vtx_offset, idx_offset, elements, unused;  // no padding: compared as bytes
};

}  // namespace

bool FrameSkip::same_as_presented(const ImDrawData& d, std::uint64_t content_serial) {
  now_.clear();
  const float frame[4] = {d.DisplayPos.x, d.DisplayPos.y, d.DisplaySize.x, d.DisplaySize.y};
  append(now_, frame, 4);
  append(now_, &d.FramebufferScale, 1);
  for (int n = 0; n < d.CmdListsCount; ++n) {
    const ImDrawList& list = *d.CmdLists[n];
    const int sizes[3] = {list.CmdBuffer.Size, list.VtxBuffer.Size, list.IdxBuffer.Size};
    append(now_, sizes, 3);
    for (const ImDrawCmd& c : list.CmdBuffer) {
      CommandKey key{};
      key.clip = c.ClipRect;
      key.texture = c.TextureId;
      key.vtx_offset = c.VtxOffset;
      key.idx_offset = c.IdxOffset;
      key.elements = c.ElemCount;
      key.callback = reinterpret_cast<const void*>(c.UserCallback);
      append(now_, &key, 1);
    }
    append(now_, list.VtxBuffer.Data, list.VtxBuffer.Size);
    append(now_, list.IdxBuffer.Data, list.IdxBuffer.Size);
  }
  const bool same = valid_ && content_serial == last_serial_ && now_ == last_;
  if (!same) {
    last_.swap(now_);
    last_serial_ = content_serial;
    valid_ = true;
  }
  return same;
}

}  // namespace kvscope::gui
