// What made an output, read back from every kind of file kvscope writes for
// a reader: the export's manifest.json and session.json, and its figures as
// PNG (text chunk), SVG (<metadata>) and PDF (document information).
#include <gtest/gtest.h>

#include <cstdlib>

#include "backend/parallel.h"
#include "common/build_info.h"
#include "io/figure_metadata.h"
#include "io/json_file.h"
#include "io/sha256.h"
#include "reports/exporter.h"
#include "reports/figure_export.h"
#include "reports/provenance.h"
#include "session_fixture.h"

namespace kvscope {
namespace {

namespace fs = std::filesystem;

// The value of /Key in a PDF's document information: a literal string with
// backslash escapes, or UTF-16BE hex (what Cairo writes for other text).
std::string pdf_info(const std::string& pdf, const std::string& key) {
  const std::size_t at = pdf.find("/" + key + " ");
  if (at == std::string::npos) return "";
  std::size_t p = at + key.size() + 2;
  std::string out;
  if (pdf[p] == '(') {
    int depth = 1;
    for (++p; p < pdf.size(); ++p) {
      const char c = pdf[p];
      if (c == '\\') {
        out += pdf[++p];
        continue;
      }
      if (c == '(') ++depth;
      if (c == ')' && --depth == 0) break;
      out += c;
    }
    return out;
  }
  if (pdf.compare(p, 5, "<FEFF") != 0) return "";
  std::u16string units;
  for (p += 5; pdf[p] != '>'; p += 4) units += char16_t(std::stoi(pdf.substr(p, 4), nullptr, 16));
  for (std::size_t i = 0; i < units.size(); ++i) {  // UTF-16 -> UTF-8
    uint32_t cp = units[i];
    if (cp >= 0xD800 && cp < 0xDC00) cp = 0x10000 + ((cp - 0xD800) << 10) + (units[++i] - 0xDC00);
    if (cp < 0x80) out += char(cp);
    else if (cp < 0x800) out += {char(0xC0 | cp >> 6), char(0x80 | (cp & 63))};
    else if (cp < 0x10000) out += {char(0xE0 | cp >> 12), char(0x80 | (cp >> 6 & 63)), char(0x80 | (cp & 63))};
    else
      out += {char(0xF0 | cp >> 18), char(0x80 | (cp >> 12 & 63)), char(0x80 | (cp >> 6 & 63)), char(0x80 | (cp & 63))};
  }
  return out;
}

class Provenance_ : public ::testing::Test {
 protected:
  // The hash cache of this test alone.
  void SetUp() override { ::setenv("XDG_CACHE_HOME", cache.path().c_str(), 1); }
  void TearDown() override { ::unsetenv("XDG_CACHE_HOME"); }
  test::TempDir cache, dir;
};

// Every field, checked against what the test computes on its own.
void expect_fields(const nlohmann::json& p, const Session& s, const std::string& where) {
  SCOPED_TRACE(where);
  EXPECT_EQ(p.at("kvscope").at("version"), kvscope_version());
  EXPECT_EQ(p.at("kvscope").at("commit"), kvscope_commit());
  EXPECT_FALSE(std::string(kvscope_commit()).empty());
  EXPECT_EQ(p.at("command_line"), command_line());
  const auto& m = p.at("model");
  EXPECT_EQ(m.at("name"), "llama_gqa");
  EXPECT_EQ(fs::path(m.at("path").get<std::string>()), fs::absolute(test::model_dir("llama_gqa")).lexically_normal());
  std::map<std::string, std::string> files;
  for (const auto& f : m.at("files")) files[f.at("name")] = f.at("sha256");
  ASSERT_EQ(files.count("model.safetensors"), 1u) << m.dump();
  EXPECT_EQ(files["model.safetensors"],
            sha256_hex(test::read_file(test::model_dir("llama_gqa") / "model.safetensors")));
  EXPECT_EQ(files["tokenizer.json"], sha256_hex(test::read_file(test::model_dir("llama_gqa") / "tokenizer.json")));
  EXPECT_TRUE(is_sha256_hex(m.at("config_sha256").get<std::string>()));
  EXPECT_EQ(p.at("policy").at("settings").at("name"), "tova");
  EXPECT_EQ(p.at("policy").at("settings").at("budget"), "50%");
  EXPECT_EQ(p.at("policy").at("in_effect").get<std::string>().rfind("tova k=", 0), 0u) << p.at("policy").dump();
  EXPECT_EQ(p.at("device").at("backend"), s.backend().name());
  EXPECT_FALSE(p.at("device").at("cpu").get<std::string>().empty());
  EXPECT_EQ(p.at("device").at("threads"), pool_threads());
}

TEST_F(Provenance_, EveryExportedFileSaysWhatMadeIt) {
  set_command_line("kvscope-cli run 'my session.json' --export out");
  SessionConfig cfg = test::config(PolicyKind::TOVA, "50%", 4);
  cfg.export_opts.formats = {"png", "svg", "pdf"};
  Session s(test::bundle("llama_gqa"), cfg);
  s.run_to_end();
  export_session(s, dir / "out");
  const nlohmann::json manifest = read_json_file(dir / "out" / "manifest.json");
  const nlohmann::json p = manifest.at("provenance");
  expect_fields(p, s, "manifest.json");
  EXPECT_EQ(p.at("command_line"), "kvscope-cli run 'my session.json' --export out");
  EXPECT_EQ(read_json_file(dir / "out" / "session.json").at("provenance"), p);
  // The exported session.json still runs (its provenance is ignored).
  EXPECT_NO_THROW(SessionConfig::load(dir / "out" / "session.json"));
  int figures = 0;
  for (const auto& e : fs::directory_iterator(dir / "out")) {
    const std::string ext = e.path().extension().string(), bytes = test::read_file(e.path());
    std::string text;
    if (ext == ".png") {
      const auto chunks = png_text_chunks(bytes);
      text = chunks.count(kPngProvenanceKey) ? chunks.at(kPngProvenanceKey) : "";
      // "kvscope 0.1.0 (c7d943400861)", "-dirty" kept after the short hash.
      const std::string software = chunks.count("Software") ? chunks.at("Software") : "", commit = kvscope_commit();
      EXPECT_EQ(software.rfind(std::string("kvscope ") + kvscope_version() + " (" + commit.substr(0, 7), 0), 0u)
          << software;
      EXPECT_EQ(software.find("-dirty") != std::string::npos, commit.ends_with("-dirty")) << software;
      EXPECT_TRUE(software.ends_with(")")) << software;
    } else if (ext == ".svg") {
      text = svg_provenance(bytes);
    } else if (ext == ".pdf") {
      text = pdf_info(bytes, "Subject");
      EXPECT_EQ(pdf_info(bytes, "Creator").rfind("kvscope ", 0), 0u) << pdf_info(bytes, "Creator");
    } else {
      continue;
    }
    ++figures;
    ASSERT_FALSE(text.empty()) << e.path();
    EXPECT_EQ(nlohmann::json::parse(text), p) << e.path();
  }
  EXPECT_GE(figures, 9) << "three figures in three formats";
  // The same export again: the same bytes (no time stamp in provenance).
  export_session(s, dir / "again");
  for (const char* f : {"manifest.json", "session.json", "attention_L0_grid.svg", "attention_L0_grid.png"})
    EXPECT_EQ(test::read_file(dir / "out" / f), test::read_file(dir / "again" / f)) << f;
  set_command_line("kvscope");
}

TEST_F(Provenance_, TheWindowsViewExportNamesItsAction) {
  set_command_line("kvscope (window)");
  SessionConfig cfg = test::config(PolicyKind::TOVA, "50%", 3);
  Session s(test::bundle("llama_gqa"), cfg);
  s.run_to_end();
  FigureExportOptions o;
  o.output.formats = {FigureFormat::svg};
  {
    const ProvenanceAction action("export to " + (dir / "view").string());
    fs::create_directories(dir / "view");
    for (const auto& f : export_view(s, 1, 2, dir / "view", o)) {
      const auto p = nlohmann::json::parse(svg_provenance(test::read_file(f)));
      expect_fields(p, s, f.string());
      EXPECT_EQ(p.at("command_line"), "kvscope (window): export to " + (dir / "view").string());
    }
  }
  EXPECT_EQ(command_line(), "kvscope (window)") << "the action ends with its scope";
  set_command_line("kvscope");
}

TEST(ProvenanceText, CommandLinesAreShellQuoted) {
  EXPECT_EQ(shell_quoted({"kvscope-cli", "run", "s.json", "--budget", "30%"}), "kvscope-cli run s.json --budget 30%");
  EXPECT_EQ(shell_quoted({"kvscope-cli", "my file.json", "it's", ""}), "kvscope-cli 'my file.json' 'it'\\''s' ''");
  const char* argv[] = {"/usr/local/bin/kvscope-cli", "sweep", "a b"};
  set_command_line(3, argv);
  EXPECT_EQ(command_line(), "kvscope-cli sweep 'a b'");
  set_command_line("kvscope");
}

}  // namespace
}  // namespace kvscope
