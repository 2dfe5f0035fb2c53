// The view a run opens on when nothing names one (views/first_view.h):
// the fit where every label can show, otherwise the newest cells at the
// smallest legible size. Sizes here are the window's at 1600x1000 with the
// default font: cells about 1000 x 700 px, a column label 14 px, a row 16.
#include <gtest/gtest.h>

#include "views/first_view.h"

using namespace kvscope::gui;

namespace {

constexpr double kW = 1000, kH = 700, kCol = 14, kRow = 16;

TEST(FirstView, ShortRunsOpenOnTheFit) {
  // 40 positions over 20 steps: 25 px columns, 35 px rows.
  EXPECT_TRUE(first_view(20, 40, kW, kH, kCol, kRow).fit);
  // Exactly legible is legible.
  EXPECT_TRUE(first_view(700 / 16, 1000 / 14, kW, kH, kCol, kRow).fit);
}

TEST(FirstView, ALongPromptOpensOnItsNewestPositionsWithLabels) {
  // 600 positions over 5 steps: the fit gives 1.7 px columns, no label shows.
  const FirstView v = first_view(5, 600, kW, kH, kCol, kRow);
  ASSERT_FALSE(v.fit);
  const double shown_cols = kW * v.cells_per_px_x;
  EXPECT_NEAR(shown_cols, kW / kCol, 1e-9);  // as many columns as carry a label
  EXPECT_GE(kW / shown_cols, kCol);
  EXPECT_NEAR(v.x0 + shown_cols, 600, 1e-9);  // ending at the newest position
  // The rows were legible at the fit: all 5 (the camera keeps an axis at
  // its fit when the legible size would show more than there is).
  EXPECT_GE(kH * v.cells_per_px_y, 5);
  EXPECT_EQ(v.y0, 0);
}

TEST(FirstView, ManyStepsOpenOnTheLastOnes) {
  // 2,048 positions over 300 steps: both axes too fine.
  const FirstView v = first_view(300, 2048, kW, kH, kCol, kRow);
  ASSERT_FALSE(v.fit);
  EXPECT_NEAR(v.y0 + kH * v.cells_per_px_y, 300, 1e-9);  // the last step at the bottom
  EXPECT_NEAR(1 / v.cells_per_px_y, kRow, 1e-9);
  EXPECT_NEAR(v.x0 + kW * v.cells_per_px_x, 2048, 1e-9);
  // Many steps over few positions: only the rows need it.
  const FirstView tall = first_view(300, 30, kW, kH, kCol, kRow);
  ASSERT_FALSE(tall.fit);
  EXPECT_EQ(tall.x0, 0);
  EXPECT_GE(kW * tall.cells_per_px_x, 30);
}

TEST(FirstView, NothingToShowIsTheFit) {
  EXPECT_TRUE(first_view(0, 600, kW, kH, kCol, kRow).fit);
  EXPECT_TRUE(first_view(5, 600, 0, kH, kCol, kRow).fit);
}

}  // namespace
