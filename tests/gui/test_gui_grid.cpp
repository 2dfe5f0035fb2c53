// The layers x heads grid in the real window: every thumbnail lies inside
// the grid panel (no head clipped) and shows a picture in the A vs B mode
// (the masks compared, and the attention difference), where thumbnails
// used to come out blank. The layout rule itself is tested without a
// window in test_grid_layout.cpp.
#include <gtest/gtest.h>

#include <map>
#include <vector>
#include <string>

#include "test_util.h"
#include "window_harness.h"

using namespace kvscope::test::window;

namespace {

// Share of the pixels inside `r` (one pixel in from its edge) whose colour
// differs from the most common one by more than 40 in some channel: 0 for
// a flat (blank) thumbnail. (Measured on the attention difference: 1.8%
// and up with the grid's own range, down to 0.3% under one global maximum.)
double share_off_the_common_colour(const Image& img, const Rect& r) {
  std::map<unsigned, int> count;
  for (int y = r.y + 1; y < r.y + r.h - 1; ++y)
    for (int x = r.x + 1; x < r.x + r.w - 1; ++x) ++count[img.pixel(x, y)];
  unsigned common = 0;
  int best = -1;
  for (auto [c, n] : count)
    if (n > best) best = n, common = c;
  auto channel = [](unsigned c, int i) { return int((c >> (8 * i)) & 255); };
  int off = 0, total = 0;
  for (auto [c, n] : count) {
    total += n;
    bool far = false;
    for (int i = 0; i < 3; ++i) far = far || std::abs(channel(c, i) - channel(common, i)) > 40;
    if (far) off += n;
  }
  return total ? double(off) / total : 0;
}

}  // namespace

TEST(GuiGrid, EveryThumbnailInsideThePanelAndNeverBlankInAvsB) {
  REQUIRE_DISPLAY();
  // Lesson 3 opens in A vs B on the masks compared (step 1); its step 2
  // shows the attention difference.
  for (const char* step : {"1", "2"}) {
    SCOPED_TRACE(std::string("lesson step ") + step);
    TempDir tmp;
    const fs::path png = tmp / "grid.png";
    std::string out;
    ASSERT_EQ(run_app(tmp,
                      std::string("--lesson 3_h2o_vs_tova --lesson-step ") + step + " --size 1600x1000 --screenshot " +
                          quoted(png.string()) + " --exit",
                      &out),
              0)
        << out;
    const Image img = load_png(png);
    const json state = load_json(tmp / "grid.json");
    ASSERT_EQ(state["mode"], "diff_fork");
    const Rect panel = rect_of(state, "panel.grid");
    // The bundled model: 4 layers x 8 heads, all of them on screen.
    for (int l = 0; l < 4; ++l)
      for (int h = 0; h < 8; ++h) {
        const std::string name = "thumb." + std::to_string(l) + "." + std::to_string(h);
        ASSERT_TRUE(state["rects"].contains(name)) << name << " not drawn";
        const Rect t = rect_of(state, name);
        EXPECT_GE(t.w, 16) << name;
        EXPECT_GE(t.x, panel.x) << name;
        EXPECT_GE(t.y, panel.y) << name;
        EXPECT_LE(t.x + t.w, panel.x + panel.w) << name << " clipped on the right";
        EXPECT_LE(t.y + t.h, panel.y + panel.h) << name << " clipped at the bottom";
        EXPECT_GE(share_off_the_common_colour(img, t), 0.01) << name << " is blank";
      }
  }
}

// A long history (2,000 positions): the thumbnails of every layer show the
// picture in the screenshot, not the blank (light) background of cells not
// yet downsampled; the sidecar says the grid finished.
TEST(GuiGrid, LongHistoryFillsEveryThumbnail) {
  REQUIRE_DISPLAY();
  TempDir tmp;
  // The bundled model with room for 2,200 positions (its config's limit is
  // a check; the weights have no limit of their own).
  const fs::path src = fs::path(KVSCOPE_GUI_SESSIONS) / ".." / ".." / ".." / "assets" / "models" / "kvscope-tiny";
  const fs::path model = tmp / "tiny-long";
  fs::create_directories(model);
  for (const auto& e : fs::directory_iterator(src))
    if (e.path().filename() != "config.json") fs::create_symlink(fs::absolute(e.path()), model / e.path().filename());
  json cfg = load_json(src / "config.json");
  cfg["max_position_embeddings"] = 2200;
  kvscope::test::write_file(model / "config.json", cfg.dump(2));
  std::vector<int> ids;
  for (int i = 0; i < 2000; ++i) ids.push_back(10 + (i * 7919) % 2000);
  const fs::path session = tmp / "long_session.json";
  kvscope::test::write_file(session, json{{"format", "kvscope-session"},
                                          {"version", 1},
                                          {"model", model.string()},
                                          {"prompt_ids", ids},
                                          {"max_new_tokens", 150},
                                          {"stop_at_eos", false},
                                          {"policy", {{"name", "h2o"}, {"budget", "25%"}}},
                                          {"view", {{"mode", "attention"}}}}
                                         .dump());
  const fs::path png = tmp / "long.png";
  std::string out;
  ASSERT_EQ(run_app(tmp,
                    "--session " + quoted(session.string()) + " --size 1280x720 --screenshot " + quoted(png.string()) +
                        " --exit",
                    &out),
            0)
      << out;
  const Image img = load_png(png);
  const json state = load_json(tmp / "long.json");
  EXPECT_FALSE(state.value("grid_filling", true));
  for (int l = 0; l < 4; ++l)
    for (int h = 0; h < 8; ++h) {
      const std::string name = "thumb." + std::to_string(l) + "." + std::to_string(h);
      ASSERT_TRUE(state["rects"].contains(name)) << name;
      const Rect t = rect_of(state, name);
      int light = 0, n = 0;
      for (int y = t.y + 1; y < t.y + t.h - 1; ++y)
        for (int x = t.x + 1; x < t.x + t.w - 1; ++x) {
          const unsigned p = img.pixel(x, y);
          light += 0.299 * (p >> 16) + 0.587 * ((p >> 8) & 255) + 0.114 * (p & 255) > 200;
          ++n;
        }
      EXPECT_LT(light, n / 2) << name << " is blank (" << light << " of " << n << " pixels light)";
    }
}
