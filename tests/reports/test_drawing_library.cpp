// Cairo and Pango are opened when a figure is first drawn
// (figures/drawing_library.h), not when a program starts: a process that
// draws nothing never maps them, and the first figure it draws maps them
// and is written whole. (This binary does not link them; test_figures
// does, to read figures back.)
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "figures/drawing_library.h"
#include "figures/heatmap.h"
#include "test_util.h"

namespace kvscope {
namespace {

// Exit codes say which check failed: 2 mapped before any figure, 3 not
// mapped after one, 4 the PNG missing or not a PNG.
[[noreturn]] void draw_a_heatmap_and_exit() {
  if (drawing_library_is_mapped()) std::exit(2);
  test::TempDir dir;
  HeatmapData d;
  d.rows = 2;
  d.cols = 2;
  d.values = {0.0f, 0.5f, 0.25f, 1.0f};
  HeatmapFigureOptions o;
  o.title = "first figure";
  o.scale = {ScaleKind::linear, 0, 1};
  const auto written = write_heatmap(dir.path() / "first", d, o, FigureOutput{});
  if (!drawing_library_is_mapped()) std::exit(3);
  if (written.size() != 1) std::exit(4);
  std::ifstream in(written[0], std::ios::binary);
  std::string magic(8, '\0');
  in.read(magic.data(), 8);
  std::exit(magic == "\x89PNG\r\n\x1a\n" ? 0 : 4);
}

// In a fresh process: the death test re-runs this binary for this test
// alone.
TEST(DrawingLibrary, OpensWithTheFirstFigureNotBefore) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(draw_a_heatmap_and_exit(), testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace kvscope
