// Exported files reloaded and checked against the session that wrote them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>

#include "io/json_file.h"
#include "io/npy.h"
#include "figures/canvas.h"
#include "reports/exporter.h"
#include "reports/figure_export.h"
#include "reports/informative_head.h"
#include "session/fork_session.h"
#include "session_fixture.h"

namespace kvscope {
namespace {

int count_lines(const std::filesystem::path& p) {
  std::ifstream in(p);
  int n = 0;
  std::string line;
  while (std::getline(in, line)) ++n;
  return n;
}

TEST(Export, FilesMatchTheRecorder) {
  test::TempDir dir;
  SessionConfig cfg = test::config(PolicyKind::TOVA, "50%", 8);
  cfg.export_opts.heatmaps = {{0, 1}, {1, 3}};
  cfg.export_opts.scale = "log";
  Session s(test::bundle("llama_gqa"), cfg);
  s.run_to_end();
  const auto files = export_session(s, dir.path());
  for (const char* f : {"masks.npy", "attention.npy", "scores.npy", "masks_L0_H0.csv", "scores_L0_H0.csv", "events.csv",
                        "metrics.csv", "tokens.json", "session.json", "manifest.json", "attention_L0_H1.png",
                        "attention_L1_H3.png", "attention_L0_grid.png"})
    EXPECT_TRUE(std::filesystem::exists(dir / f)) << f;
  const auto& rec = s.recorder();
  const int rows = rec.rows_recorded(), P = static_cast<int>(s.tokens().size());
  const auto masks = read_npy(dir / "masks.npy");
  EXPECT_EQ(masks.descr, "|u1");
  EXPECT_EQ(masks.shape, (std::vector<int64_t>{rows, 2, 2, P}));
  const auto mv = masks.as_i64();
  for (int r = 0; r < rows; ++r)
    for (int seg = 0; seg < 4; ++seg)
      for (int p = 0; p < P; ++p) ASSERT_EQ(mv[(size_t(r) * 4 + seg) * P + p], rec.mask(r, seg, p));
  const auto scores = read_npy(dir / "scores.npy");
  EXPECT_EQ(scores.shape, (std::vector<int64_t>{rows, 2, 2, P}));
  const auto sv = scores.as_f32();
  int nan = 0, finite = 0;
  for (float v : sv) (std::isnan(v) ? nan : finite)++;
  EXPECT_GT(nan, 0);     // evicted and unseen positions
  EXPECT_GT(finite, 0);  // TOVA keeps a statistic
  const auto attn = read_npy(dir / "attention.npy");
  EXPECT_EQ(attn.shape, (std::vector<int64_t>{rows, 2, 4, P}));
  const auto av = attn.as_f32();
  for (int r = 0; r < rows; ++r)
    for (int h = 0; h < 4; ++h) {
      double sum = 0;
      for (int p = 0; p < P; ++p) sum += av[((size_t(r) * 2 + 1) * 4 + h) * P + p];
      EXPECT_NEAR(sum, 1.0, 1e-5) << "each recorded row is a distribution over the kept positions";
    }
  EXPECT_EQ(count_lines(dir / "events.csv"), 1 + int(rec.events().size()));
  EXPECT_EQ(count_lines(dir / "metrics.csv"), 1 + rows);
  EXPECT_EQ(count_lines(dir / "masks_L0_H0.csv"), 1 + rows);
  const auto tokens = read_json_file(dir / "tokens.json");
  EXPECT_EQ(tokens.at("ids").get<std::vector<int>>(), s.tokens());
  EXPECT_EQ(tokens.at("prompt_length").get<int>(), s.prompt_length());
  // The resolved session.json replays to the same run.
  SessionConfig again = SessionConfig::load(dir / "session.json");
  again.model.clear();
  Session t(test::bundle("llama_gqa"), again);
  t.run_to_end();
  EXPECT_EQ(t.tokens(), s.tokens());
  EXPECT_EQ(t.recorder().masks(), rec.masks());
  const auto png = test::read_file(dir / "attention_L0_grid.png");
  EXPECT_EQ(png.compare(0, 8, "\x89PNG\r\n\x1a\n"), 0);
}

// No layer or head chosen: the CSV twins stay at layer 0 / head 0 and the
// figures show the most informative head, in every format asked for.
TEST(Export, FiguresOfTheInformativeHeadInEveryFormat) {
  test::TempDir dir;
  SessionConfig cfg = test::config(PolicyKind::H2O, "50%", 6);
  cfg.export_opts.formats = {"png", "svg", "pdf"};
  Session s(test::bundle("llama_gqa"), cfg);
  s.run_to_end();
  const HeadChoice c = informative_head(s);
  // The rule's choice is the highest score over every recorded head.
  for (int l : s.recorder().attention_layers())
    for (int h = 0; h < s.model_config().n_heads; ++h) EXPECT_LE(head_informativeness(s, l, h), c.score) << l << "," << h;
  EXPECT_GT(c.score, 0);
  const auto files = export_session(s, dir.path());
  const std::string tag = "L" + std::to_string(c.layer) + "_H" + std::to_string(c.head);
  for (const char* ext : {".png", ".svg", ".pdf"}) {
    for (const std::string stem : {"attention_" + tag, "attention_L" + std::to_string(c.layer) + "_grid", "score_curves_" + tag}) {
      EXPECT_TRUE(std::find(files.begin(), files.end(), stem + ext) != files.end()) << stem << ext;
      EXPECT_GT(std::filesystem::file_size(dir / (stem + ext)), 1000u) << stem << ext;
    }
  }
  EXPECT_TRUE(std::filesystem::exists(dir / "masks_L0_H0.csv"));
  // A chosen head is drawn as chosen.
  test::TempDir dir2;
  cfg.export_opts.formats = {"png"};
  cfg.export_opts.layer = 1;
  cfg.export_opts.head = 2;
  Session t(test::bundle("llama_gqa"), cfg);
  t.run_to_end();
  export_session(t, dir2.path());
  EXPECT_TRUE(std::filesystem::exists(dir2 / "attention_L1_H2.png"));
  EXPECT_TRUE(std::filesystem::exists(dir2 / "masks_L1_H2.csv"));
}

// A rerun of an exported session.json draws the layer and head the export
// drew: layer 0 / head 0 are not written as a choice nobody made, so the
// rerun applies the rule again to the same (bit-identical) recording.
TEST(Export, RerunOfAnExportDrawsTheSameHead) {
  test::TempDir dir, again;
  SessionConfig cfg = test::config(PolicyKind::TOVA, "50%", 8);
  Session s(test::bundle("llama_gqa"), cfg);
  s.run_to_end();
  const HeadChoice c = informative_head(s);
  ASSERT_FALSE(c.layer == 0 && c.head == 0) << "the test needs a rule's choice other than the old default";
  const auto first = export_session(s, dir.path());
  const nlohmann::json j = nlohmann::json::parse(test::read_file(dir / "session.json"));
  EXPECT_FALSE(j["export"].contains("layer") || j["export"].contains("head")) << j["export"].dump();
  EXPECT_TRUE(j["export"]["heatmaps"].empty()) << j["export"].dump();  // the rule runs again, as the app writes it too
  const SessionConfig back = SessionConfig::from_json(j, "session.json");
  Session t(test::bundle("llama_gqa"), back);
  t.run_to_end();
  const auto second = export_session(t, again.path());
  auto figures = [](std::vector<std::string> files) {
    std::vector<std::string> out;
    for (auto& f : files)
      if (f.ends_with(".png")) out.push_back(f);
    std::sort(out.begin(), out.end());
    return out;
  };
  EXPECT_EQ(figures(first), figures(second));  // same heatmap, grid and score-curve files: same layer and head
  const std::string tag = "L" + std::to_string(c.layer) + "_H" + std::to_string(c.head);
  EXPECT_TRUE(std::filesystem::exists(again / ("attention_" + tag + ".png")));
  EXPECT_TRUE(std::filesystem::exists(again / ("attention_L" + std::to_string(c.layer) + "_grid.png")));
  EXPECT_TRUE(std::filesystem::exists(again / "masks_L0_H0.csv"));  // the CSV twins stay where they were
  EXPECT_EQ(test::read_file(dir / "masks.npy"), test::read_file(again / "masks.npy"));
}

// The app's "export the current view": the heatmap's data is the
// recorder's, and a failed write names the file and leaves nothing.
TEST(Export, ViewExportMatchesTheRecorder) {
  SessionConfig cfg = test::config(PolicyKind::TOVA, "50%", 5);
  Session s(test::bundle("llama_gqa"), cfg);
  s.run_to_end();
  const HeatmapData d = attention_heatmap_data(s, 1, 3);
  const int P = static_cast<int>(s.tokens().size());
  ASSERT_EQ(d.rows, s.recorder().rows_recorded());
  ASSERT_EQ(d.cols, P);
  const int seg = s.recorder().layout().segment_of(1, 3);
  for (int r = 0; r < d.rows; ++r)
    for (int p = 0; p < P; ++p) {
      const float v = d.values[std::size_t(r) * P + p];
      if (s.recorder().mask(r, seg, p) == kNotSeen) EXPECT_TRUE(std::isnan(v));
      else EXPECT_EQ(v, s.recorder().attention(r, 1, 3, p));
    }
  EXPECT_EQ(d.col_labels[0], s.text_of(0));
  EXPECT_EQ(d.row_labels[1], s.text_of(s.prompt_length()));
  EXPECT_EQ(d.first_generated_col, s.prompt_length());
  const HeatmapData upto = attention_heatmap_data(s, 1, 3, 2);
  EXPECT_EQ(upto.rows, 3);
  test::TempDir dir;
  FigureExportOptions o;
  o.output.formats = {FigureFormat::pdf};
  const auto files = export_view(s, 1, 3, dir.path(), o);
  EXPECT_EQ(files.size(), 3u);  // heatmap, grid, score curves
  EXPECT_THROW(export_view(s, 1, 3, dir / "missing", o), Error);
  EXPECT_FALSE(std::filesystem::exists(dir / "missing"));
  EXPECT_NE(figure_title(s, 1, 3, d.rows).find("tova k="), std::string::npos) << figure_title(s, 1, 3, d.rows);
}

TEST(Recorder, HeadSummariesComeFromTheRecordedRows) {
  SessionConfig cfg = test::config(PolicyKind::H2O, "50%", 6);
  cfg.recording.layers = {1};
  Session s(test::bundle("llama_gqa"), cfg);
  s.run_to_end();
  const auto& rec = s.recorder();
  for (int r = 0; r < rec.rows_recorded(); ++r)
    for (int h = 0; h < 4; ++h) {
      double ent = 0;
      float mx = 0;
      for (int p = 0; p < rec.positions(); ++p) {
        const double a = rec.attention(r, 1, h, p);
        if (a > 0) ent -= a * std::log(a);
        mx = std::max(mx, rec.attention(r, 1, h, p));
      }
      EXPECT_NEAR(rec.entropy(r, 1, h), ent, 1e-5);
      EXPECT_GT(rec.entropy(r, 1, h), 0.0f);  // a real distribution over several positions
      EXPECT_EQ(rec.max_attention(r, 1, h), mx);
      EXPECT_GT(mx, 0.0f);
    }
  EXPECT_TRUE(std::isnan(rec.entropy(0, 0, 0))) << "layer 0 is not recorded";
  EXPECT_TRUE(std::isnan(rec.max_attention(rec.rows_recorded(), 1, 0))) << "row not recorded yet";
}

TEST(Export, UnwritableDirectoryIsAnError) {
  Session s(test::bundle("gpt2"), test::config(PolicyKind::Window, "8", 2));
  s.run_to_end();
  EXPECT_THROW(export_session(s, "/proc/kvscope-cannot-write"), Error);
}

}  // namespace
}  // namespace kvscope

namespace kvscope {
namespace {

std::vector<std::string> sorted_files(const std::filesystem::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

TEST(Export, ReplacesAnEarlierExportAsOneSetAndListsItInTheManifest) {
  // Exporting layer 1's heatmap over an export of layer 0 must not leave
  // layer 0's figures beside the new files looking current.
  test::TempDir dir;
  SessionConfig cfg = test::config(PolicyKind::H2O, "50%", 4);
  cfg.export_opts.heatmaps = {{0, 0}};
  Session a(test::bundle("llama_gqa"), cfg);
  a.run_to_end();
  export_session(a, dir / "out");
  ASSERT_TRUE(std::filesystem::exists(dir / "out" / "attention_L0_H0.png"));
  cfg.export_opts.heatmaps = {{1, 2}};
  Session b(test::bundle("llama_gqa"), cfg);
  b.run_to_end();
  auto files = export_session(b, dir / "out");
  EXPECT_FALSE(std::filesystem::exists(dir / "out" / "attention_L0_H0.png")) << "a stale figure of the earlier export";
  EXPECT_TRUE(std::filesystem::exists(dir / "out" / "attention_L1_H2.png"));
  std::sort(files.begin(), files.end());
  EXPECT_EQ(sorted_files(dir / "out"), files);
  const auto manifest = read_json_file(dir / "out" / "manifest.json");
  EXPECT_EQ(manifest["format"], "kvscope-export");
  auto listed = manifest["files"].get<std::vector<std::string>>();
  std::sort(listed.begin(), listed.end());
  EXPECT_EQ(listed, files);
  // Nothing but the export itself beside it (no staging or retired folder).
  EXPECT_EQ(sorted_files(dir.path()), std::vector<std::string>{"out"});
}

TEST(Export, AForkAddsTheFigureComparingItWithTheRun) {
  // The window's fork view's third panel, in A's set: attention A - B of
  // the figures' head, and A's masks against B's, cell by cell.
  test::TempDir dir;
  SessionConfig cfg = test::config(PolicyKind::H2O, "50%", 8);
  cfg.export_opts.heatmaps = {{1, 2}};
  PolicyParams tova = cfg.policy;
  tova.kind = PolicyKind::TOVA;
  cfg.fork = ForkConfig{3, tova};
  Session a(test::bundle("llama_gqa"), cfg);
  std::unique_ptr<Session> b = fork_session_from_prompt(test::bundle("llama_gqa"), a);
  a.run_to_end();
  b->run_to_end();
  const HeatmapData d = fork_difference_data(a, *b, 1, 2);
  const HeatmapData da = attention_heatmap_data(a, 1, 2), db = attention_heatmap_data(*b, 1, 2);
  ASSERT_EQ(d.rows, da.rows);
  ASSERT_EQ(d.cols, da.cols);
  int only_a = 0, only_b = 0, differ = 0;
  for (int r = 0; r < d.rows; ++r)
    for (int p = 0; p < d.cols; ++p) {
      const std::size_t i = std::size_t(r) * d.cols + p;
      ASSERT_EQ(d.mask[i], fork_code(da.mask[i], db.mask[i])) << r << " " << p;
      if (d.mask[i] == kNotSeen) {
        EXPECT_TRUE(std::isnan(d.values[i]));
        continue;
      }
      ASSERT_EQ(d.values[i], da.values[i] - db.values[i]) << r << " " << p;
      if (r <= 3) {  // one run up to the fork
        EXPECT_EQ(d.values[i], 0.0f) << r << " " << p;
        EXPECT_TRUE(d.mask[i] == kForkBothKeep || d.mask[i] == kForkBothEvicted) << r << " " << p;
      }
      only_a += d.mask[i] == kForkOnlyA;
      only_b += d.mask[i] == kForkOnlyB;
      differ += d.values[i] != 0.0f;
    }
  EXPECT_GT(only_a + only_b, 0) << "TOVA must keep other slots than H2O after the fork, or the test shows nothing";
  EXPECT_GT(differ, 0);
  const auto files = export_session(a, *open_export_folder(dir / "out"), {}, nullptr, b.get());
  EXPECT_NE(std::find(files.begin(), files.end(), "fork_difference_L1_H2.png"), files.end());
  EXPECT_TRUE(std::filesystem::exists(dir / "out" / "fork_difference_L1_H2.png"));
  EXPECT_TRUE(is_export_file_name("fork_difference_L1_H2.svg"));
  // Without the fork the next export of the folder leaves no stale comparison.
  export_session(a, dir / "out");
  EXPECT_FALSE(std::filesystem::exists(dir / "out" / "fork_difference_L1_H2.png"));
}

TEST(Export, KeepsTheUsersFilesAndRefusesOneInTheWayBeforeWriting) {
  test::TempDir dir;
  std::filesystem::create_directories(dir / "mine" / "sub");
  test::write_file(dir / "mine" / "notes.txt", "keep me");
  test::write_file(dir / "mine" / "sub" / "masks.npy", "not the export's");  // a subfolder is not the export's
  Session s(test::bundle("llama_gqa"), test::config(PolicyKind::H2O, "50%", 2));
  s.run_to_end();
  const auto files = export_session(s, dir / "mine");
  EXPECT_EQ(test::read_file(dir / "mine" / "notes.txt"), "keep me");
  EXPECT_EQ(test::read_file(dir / "mine" / "sub" / "masks.npy"), "not the export's");
  for (const auto& f : files) EXPECT_TRUE(std::filesystem::exists(dir / "mine" / f)) << f;
  // A file of the user's with a name the export writes: refused when the
  // folder is opened (before any work), and left as it was.
  std::filesystem::create_directories(dir / "theirs");
  test::write_file(dir / "theirs" / "tokens.json", "{}");
  try {
    open_export_folder(dir / "theirs");
    ADD_FAILURE() << "a user's tokens.json would have been replaced";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("theirs/tokens.json: is not a file kvscope wrote"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(test::read_file(dir / "theirs" / "tokens.json"), "{}");
  EXPECT_EQ(sorted_files(dir.path()), (std::vector<std::string>{"mine", "theirs"}));
}

TEST(Export, AManifestCannotPointOutsideItsFolder) {
  // A hand-edited manifest listing "../victim" or a folder: only plain
  // files directly in the export folder count as the export's.
  test::TempDir dir;
  Session s(test::bundle("llama_gqa"), test::config(PolicyKind::H2O, "50%", 2));
  s.run_to_end();
  export_session(s, dir / "out");
  test::write_file(dir / "victim", "mine");
  std::filesystem::create_directories(dir / "out" / "data");
  auto m = read_json_file(dir / "out" / "manifest.json");
  m["files"].push_back("../victim");
  m["files"].push_back("data");
  test::write_file(dir / "out" / "manifest.json", m.dump());
  export_session(s, dir / "out");
  EXPECT_EQ(test::read_file(dir / "victim"), "mine");
  EXPECT_TRUE(std::filesystem::is_directory(dir / "out" / "data"));
}

}  // namespace
}  // namespace kvscope
