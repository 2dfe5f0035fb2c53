// The window's pure layout rules, without a window: where the layers x
// heads grid puts its thumbnails (views/grid_layout.h) and which tokens the
// score curves pick on their own (views/curve_picks.h).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "common/mask_codes.h"
#include "views/curve_picks.h"
#include "views/grid_layout.h"

using namespace kvscope::gui;

namespace {

GridLayoutInput panel(float w, float h, int layers, int heads) {
  GridLayoutInput in;
  in.width = w;
  in.height = h;
  in.label_w = 30;
  in.header_h = 16;
  in.share_h = 14;
  in.gap = 4;
  in.min_thumb = 24;
  in.scrollbar_w = 14;
  in.overview_w = 12;
  in.layers = layers;
  in.heads = heads;
  return in;
}

// The right edge of the last head's thumbnail, with the scroll bar and the
// overview beside the cells when the layers scroll.
float right_edge(const GridLayoutInput& in, const GridLayout& g) {
  return in.label_w + g.pitch_x * in.heads - in.gap + (g.scrolls ? in.scrollbar_w + in.overview_w : 0);
}

}  // namespace

TEST(GridLayout, SmallModelShowsEveryLayerAtOnce) {
  const GridLayoutInput in = panel(420, 700, 4, 8);
  const GridLayout g = layout_grid(in);
  EXPECT_FALSE(g.scrolls);
  EXPECT_EQ(g.visible_layers, 4);
  EXPECT_GE(g.thumb, 24);
  EXPECT_LE(right_edge(in, g), in.width);
  EXPECT_LE(in.header_h + g.content_h, in.height + in.gap);
}

// SmolLM2: 30 layers x 9 heads in the grid's default place. The ninth head
// was clipped and 6 of 30 layers showed.
TEST(GridLayout, ManyLayersScrollAndEveryHeadFits) {
  for (float w : {300.f, 420.f, 640.f}) {
    SCOPED_TRACE(w);
    const GridLayoutInput in = panel(w, 500, 30, 9);
    const GridLayout g = layout_grid(in);
    EXPECT_TRUE(g.scrolls);
    EXPECT_LE(right_edge(in, g), in.width) << "the ninth head is clipped";
    EXPECT_GT(g.thumb, 0);
    EXPECT_LT(g.visible_layers, 30);
    EXPECT_GE(g.visible_layers, 1);
    // What the scroll reaches covers every layer, and the visible count is true.
    EXPECT_FLOAT_EQ(g.content_h, 30 * g.pitch_y);
    EXPECT_LE(in.header_h + g.visible_layers * g.pitch_y - in.gap, in.height);
    EXPECT_GT(in.header_h + (g.visible_layers + 1) * g.pitch_y - in.gap, in.height);
  }
}

TEST(GridLayout, TallPanelFitsManyLayersWithoutScrolling) {
  // 30 layers at 24 px + share line + gap = 42 px each: 1276 px down.
  const GridLayoutInput in = panel(420, 1300, 30, 9);
  const GridLayout g = layout_grid(in);
  EXPECT_FALSE(g.scrolls);
  EXPECT_EQ(g.visible_layers, 30);
  EXPECT_LE(in.header_h + g.content_h - in.gap, in.height);
  EXPECT_LE(right_edge(in, g), in.width);
}

TEST(GridLayout, ManyHeadsShrinkRatherThanClip) {
  // 32 heads in 420 px: below the legible size across; still all there.
  const GridLayoutInput in = panel(420, 600, 4, 32);
  const GridLayout g = layout_grid(in);
  EXPECT_LT(g.thumb, 24);
  EXPECT_LE(right_edge(in, g), in.width);
}

TEST(GridLayout, SelectedLayerScrollsIntoViewByTheLeastMove) {
  EXPECT_EQ(first_layer_showing(3, 0, 6, 30), 0);    // already visible
  EXPECT_EQ(first_layer_showing(10, 0, 6, 30), 5);   // below: it becomes the last one shown
  EXPECT_EQ(first_layer_showing(2, 8, 6, 30), 2);    // above: it becomes the first
  EXPECT_EQ(first_layer_showing(29, 0, 6, 30), 24);  // never past the end
}

TEST(CurvePicks, TokensNearestTheThresholdOnEachSide) {
  using namespace kvscope;
  // Threshold 0.5 (the lowest kept on merit). Scores far from it (0.95,
  // 0.9, 0.05) are what the old rule picked; the close calls are 0.5 and
  // 0.55 above, 0.45 and 0.4 below.
  const std::vector<float> scores = {0.95f, 0.9f, 0.55f, 0.5f, 0.45f, 0.4f, 0.05f, 0.48f, 0.52f, NAN};
  const std::vector<uint8_t> masks = {kMaskKept,   kMaskKept,      kMaskKept, kMaskKept,       kMaskProtected,
                                      kEvictedNow, kMaskProtected, kNotSeen,  kEvictedEarlier, kMaskKept};
  // 0.48 is not seen and 0.52 left earlier: neither is a decision at this step.
  EXPECT_EQ(pick_curve_positions(scores, masks, 0.5f, 2), (std::vector<int>{3, 2, 4, 5}));
  EXPECT_EQ(pick_curve_positions(scores, masks, 0.5f, 1), (std::vector<int>{3, 4}));
  // A tie in distance goes to the earlier position.
  EXPECT_EQ(pick_curve_positions(std::vector<float>{0.6f, 0.4f, 0.6f}, std::vector<uint8_t>{1, 2, 1}, 0.5f, 1),
            (std::vector<int>{0, 1}));
}

TEST(CurvePicks, NoThresholdPicksTheBest) {
  using namespace kvscope;
  const std::vector<float> scores = {0.1f, 0.7f, 0.3f, 0.9f, 0.2f};
  const std::vector<uint8_t> masks(5, kMaskProtected);
  EXPECT_EQ(pick_curve_positions(scores, masks, NAN, 1), (std::vector<int>{3, 1}));
}
