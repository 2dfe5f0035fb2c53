// The main view's background is drawn around its heatmaps
// (views/background_fill.h): every point of the panel is covered exactly
// once, by a background box or by a hole, never by both.
#include <gtest/gtest.h>

#include <random>

#include "views/background_fill.h"

namespace kvscope::gui {
namespace {

bool inside(const Box& b, float x, float y) { return x >= b.x0 && x < b.x1 && y >= b.y0 && y < b.y1; }

// Checks the partition on a grid of points between the boxes' edges.
void expect_partition(const Box& outer, const std::vector<Box>& holes, const std::vector<Box>& boxes) {
  for (float y = outer.y0 + 0.25f; y < outer.y1; y += 0.5f)
    for (float x = outer.x0 + 0.25f; x < outer.x1; x += 0.5f) {
      int covering = 0;
      for (const Box& b : boxes) covering += inside(b, x, y);
      bool in_hole = false;
      for (const Box& h : holes) in_hole = in_hole || inside(h, x, y);
      ASSERT_EQ(covering, in_hole ? 0 : 1) << "at (" << x << ", " << y << ")";
    }
  for (const Box& b : boxes) {
    EXPECT_LT(b.x0, b.x1);
    EXPECT_LT(b.y0, b.y1);
    EXPECT_GE(b.x0, outer.x0);
    EXPECT_LE(b.x1, outer.x1);
    EXPECT_GE(b.y0, outer.y0);
    EXPECT_LE(b.y1, outer.y1);
  }
}

TEST(BackgroundFill, OneHeatmapLeavesItsMarginsAsFourBoxesAtMost) {
  const Box panel{0, 0, 100, 80};
  const Box cells{20, 30, 90, 70};  // labels left and above, a margin right and below
  const std::vector<Box> boxes = boxes_around(panel, {cells});
  expect_partition(panel, {cells}, boxes);
  EXPECT_LE(boxes.size(), 4u);  // above, left, right, below
}

TEST(BackgroundFill, NoHolesIsThePanelAndAFullHoleIsNothing) {
  const Box panel{5, 5, 50, 40};
  EXPECT_EQ(boxes_around(panel, {}), std::vector<Box>{panel});
  EXPECT_TRUE(boxes_around(panel, {Box{0, 0, 60, 60}}).empty());
}

TEST(BackgroundFill, HolesOverlappingAndReachingOutsideArePartitioned) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> at(-10, 110);
  const Box panel{0, 0, 100, 100};
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<Box> holes;
    const int n = trial % 5;
    for (int i = 0; i < n; ++i) {
      int x0 = at(rng), x1 = at(rng), y0 = at(rng), y1 = at(rng);
      if (x0 > x1) std::swap(x0, x1);
      if (y0 > y1) std::swap(y0, y1);
      holes.push_back({float(x0), float(y0), float(x1), float(y1)});
    }
    expect_partition(panel, holes, boxes_around(panel, holes));
    if (HasFatalFailure()) return;
  }
}

TEST(BackgroundFill, ThreePanelsSideBySideLeaveTheGapsBetweenThem) {
  // The fork view: A | B | A - B with narrow margins between them.
  const Box panel{0, 0, 300, 100};
  const std::vector<Box> holes{{10, 20, 95, 95}, {105, 20, 195, 95}, {205, 20, 295, 95}};
  const std::vector<Box> boxes = boxes_around(panel, holes);
  expect_partition(panel, holes, boxes);
  EXPECT_LE(boxes.size(), 6u);  // above, four gaps, below
}

}  // namespace
}  // namespace kvscope::gui
