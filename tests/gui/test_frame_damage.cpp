// FrameDamage (app/gui/frame_damage.h): which rectangles of a frame the
// window draws again. Draw lists are built by hand (a quad per list, as a
// window's background would be), so no ImGui context or display is needed.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "frame_damage.h"
#include "views/gl.h"

namespace kvscope::gui {
namespace {

// A display of 800 x 600 whose lists each draw one quad.
struct Frame {
  std::vector<std::unique_ptr<ImDrawList>> lists;
  std::vector<ImDrawList*> pointers;
  ImDrawData data;

  // A window `name` drawing the rectangle x0,y0..x1,y1 with texture `tex`.
  void add(const char* name, float x0, float y0, float x1, float y1, ImTextureID tex = nullptr) {
    auto list = std::make_unique<ImDrawList>(nullptr);
    list->_OwnerName = name;
    const ImVec2 corners[4] = {{x0, y0}, {x1, y0}, {x1, y1}, {x0, y1}};
    for (const ImVec2& p : corners) list->VtxBuffer.push_back(ImDrawVert{p, ImVec2(0, 0), 0xFFFFFFFF});
    for (ImDrawIdx i : {0, 1, 2, 0, 2, 3}) list->IdxBuffer.push_back(i);
    ImDrawCmd cmd;
    cmd.ClipRect = ImVec4(0, 0, 800, 600);  // like a window's first command: the whole display
    cmd.TextureId = tex;
    cmd.ElemCount = 6;
    list->CmdBuffer.push_back(cmd);
    lists.push_back(std::move(list));
  }
  ImDrawData& draw_data() {
    pointers.clear();
    for (auto& l : lists) pointers.push_back(l.get());
    data.Valid = true;
    data.CmdLists = pointers.data();
    data.CmdListsCount = int(pointers.size());
    data.DisplayPos = ImVec2(0, 0);
    data.DisplaySize = ImVec2(800, 600);
    data.FramebufferScale = ImVec2(1, 1);
    return data;
  }
};

Frame two_windows() {
  Frame f;
  f.add("left", 0, 0, 400, 600);
  f.add("right", 400, 0, 800, 600);
  return f;
}

bool same(const ImVec4& a, const ImVec4& b) { return a.x == b.x && a.y == b.y && a.z == b.z && a.w == b.w; }

TEST(FrameDamage, TheFirstFrameIsDrawnWholeAndAnUnchangedOneNotAtAll) {
  FrameDamage damage;
  Frame f = two_windows();
  const std::vector<ImVec4> first = damage.damaged(f.draw_data());
  ASSERT_EQ(first.size(), 1u);
  EXPECT_TRUE(same(first[0], ImVec4(0, 0, 800, 600)));
  Frame again = two_windows();
  EXPECT_TRUE(damage.damaged(again.draw_data()).empty());
}

TEST(FrameDamage, AChangedWindowIsRedrawnWhereItWasAndWhereItIsOnly) {
  FrameDamage damage;
  Frame f = two_windows();
  damage.damaged(f.draw_data());
  Frame moved;
  moved.add("left", 0, 0, 400, 600);
  moved.add("right", 420.5f, 10, 700, 300);  // smaller, and not on whole pixels
  const std::vector<ImVec4> rects = damage.damaged(moved.draw_data());
  ASSERT_EQ(rects.size(), 1u);
  // Its old place (400..800) and its new one merged; the left window stays.
  EXPECT_TRUE(same(rects[0], ImVec4(400, 0, 800, 600)));

  Frame shrunk_again;
  shrunk_again.add("left", 0, 0, 400, 600);
  shrunk_again.add("right", 420.5f, 10, 700, 300.2f);
  const std::vector<ImVec4> small = damage.damaged(shrunk_again.draw_data());
  ASSERT_EQ(small.size(), 1u);
  EXPECT_TRUE(same(small[0], ImVec4(420, 10, 700, 301)));  // whole pixels, outward
}

TEST(FrameDamage, ATextureWrittenRedrawsTheWindowsShowingIt) {
  FrameDamage damage;
  const GLuint tex = 4242;
  auto frame = [&] {
    Frame f;
    f.add("left", 0, 0, 400, 600);
    f.add("right", 400, 100, 600, 200, texture_id(tex));
    return f;
  };
  Frame a = frame();
  damage.damaged(a.draw_data());
  Frame b = frame();
  EXPECT_TRUE(damage.damaged(b.draw_data()).empty());
  note_texture_written(tex);
  Frame c = frame();
  const std::vector<ImVec4> rects = damage.damaged(c.draw_data());
  ASSERT_EQ(rects.size(), 1u);
  EXPECT_TRUE(same(rects[0], ImVec4(400, 100, 600, 200)));
}

TEST(FrameDamage, ANewWindowOrALostWindowContentsRedrawEverything) {
  FrameDamage damage;
  Frame f = two_windows();
  damage.damaged(f.draw_data());
  Frame with_tooltip = two_windows();
  with_tooltip.add("##Tooltip_00", 10, 10, 50, 30);
  std::vector<ImVec4> rects = damage.damaged(with_tooltip.draw_data());
  ASSERT_EQ(rects.size(), 1u);
  EXPECT_TRUE(same(rects[0], ImVec4(0, 0, 800, 600)));

  Frame same_again = two_windows();
  same_again.add("##Tooltip_00", 10, 10, 50, 30);
  EXPECT_TRUE(damage.damaged(same_again.draw_data()).empty());
  damage.invalidate();
  Frame after_expose = two_windows();
  after_expose.add("##Tooltip_00", 10, 10, 50, 30);
  rects = damage.damaged(after_expose.draw_data());
  ASSERT_EQ(rects.size(), 1u);
  EXPECT_TRUE(same(rects[0], ImVec4(0, 0, 800, 600)));
}

TEST(FrameDamage, ChangesApartStaySeparateUntilTheyCoverMostOfTheDisplay) {
  FrameDamage damage;
  auto frame = [](float shift) {
    Frame f;
    f.add("a", 0, 0, 100 + shift, 100);
    f.add("b", 700, 500, 800, 600 - shift);
    f.add("c", 300, 0, 500, 600);
    return f;
  };
  Frame f0 = frame(0);
  damage.damaged(f0.draw_data());
  Frame f1 = frame(10);
  const std::vector<ImVec4> rects = damage.damaged(f1.draw_data());
  ASSERT_EQ(rects.size(), 2u);  // the corners, not the middle window nor the box around all
  EXPECT_TRUE(same(rects[0], ImVec4(0, 0, 110, 100)));
  EXPECT_TRUE(same(rects[1], ImVec4(700, 500, 800, 600)));

  Frame everything;
  everything.add("a", 0, 0, 800, 600);
  everything.add("b", 700, 500, 800, 600);
  everything.add("c", 300, 0, 500, 600);
  const std::vector<ImVec4> whole = damage.damaged(everything.draw_data());
  ASSERT_EQ(whole.size(), 1u);
  EXPECT_TRUE(same(whole[0], ImVec4(0, 0, 800, 600)));
}

}  // namespace
}  // namespace kvscope::gui
