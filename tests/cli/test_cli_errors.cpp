// Bad input: one line naming the file and what is wrong, a non-zero exit,
// no crash, no half-written output.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstring>

#include "backend/backend.h"
#include "common/build_info.h"
#include "io/json_file.h"
#include "test_util.h"

namespace kvscope {
namespace {

// Runs the CLI; expects exit 1 and exactly one line containing every needle.
void expect_error(const std::string& args, std::initializer_list<std::string> needles) {
  const auto r = test::run_cli(args);
  EXPECT_EQ(r.exit_code, 1) << args << "\n" << r.output;
  EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << "not one line: " << r.output;
  EXPECT_EQ(r.output.rfind("kvscope-cli: error: ", 0), 0u) << r.output;
  for (const auto& n : needles) EXPECT_NE(r.output.find(n), std::string::npos) << "missing '" << n << "' in " << r.output;
}

namespace fs = std::filesystem;

fs::path copy_model(const test::TempDir& dir, const std::string& name) {
  fs::copy(test::model_dir(name), dir / name, fs::copy_options::recursive);
  return dir / name;
}

TEST(CliErrors, ModelFiles) {
  expect_error("inspect /nonexistent/dir",
               {"/nonexistent/dir: not found (a model is a Hugging Face model folder or a .gguf file)"});
  // A bare word that is neither a path here nor a fetchable model's name.
  expect_error("inspect smollm2", {"smollm2: not found: no file or folder of that name here, and not a model name (",
                                   "smollm2-135m", "tools/get-model.sh NAME"});
  test::TempDir dir;
  auto m = copy_model(dir, "llama_gqa");
  const std::string full = test::read_file(m / "model.safetensors");
  test::write_file(m / "model.safetensors", full.substr(0, full.size() - 100));
  expect_error("inspect " + test::quote(m.string()), {"model.safetensors", "truncated"});
  std::string bad = full;
  bad[0] = '\xff';  // header length far beyond the file
  bad[5] = '\x7f';
  test::write_file(m / "model.safetensors", bad);
  expect_error("inspect " + test::quote(m.string()), {"model.safetensors", "header length"});
  test::write_file(m / "model.safetensors", full);
  test::write_file(m / "config.json", "{\"model_type\": \"llama\",");
  expect_error("inspect " + test::quote(m.string()), {"config.json: invalid JSON"});
  auto cfg = read_json_file(test::model_dir("llama_gqa") / "config.json");
  cfg["model_type"] = "bloom";
  test::write_file(m / "config.json", cfg.dump());
  expect_error("inspect " + test::quote(m.string()), {"config.json: model_type: unsupported model type 'bloom'", "gpt_neox"});
  cfg["model_type"] = "llama";
  cfg["hidden_size"] = 64;
  test::write_file(m / "config.json", cfg.dump());
  expect_error("inspect " + test::quote(m.string()), {"model.safetensors", "disagrees with", "config.json"});
  test::write_file(m / "config.json", read_json_file(test::model_dir("llama_gqa") / "config.json").dump());
  test::write_file(m / "tokenizer.json", "{\"model\": {\"type\": \"Unigram\"}}");
  expect_error("inspect " + test::quote(m.string()), {"tokenizer.json", "model"});
  fs::remove(m / "tokenizer.json");
  expect_error("inspect " + test::quote(m.string()), {"tokenizer.json: file not found"});
}

// A corrupted key length in a GGUF file: the line says it is the length,
// whether it runs past the end or swallows the value type after the key.
TEST(CliErrors, GgufCorruptedKeyLength) {
  test::TempDir dir;
  const std::string full = test::read_file(test::data_dir() / "gguf" / "tiny_llama.gguf");
  const size_t at = 24;  // magic, version, tensor count, key count, then key 0's length
  uint64_t len = 0;
  std::memcpy(&len, full.data() + at, 8);
  ASSERT_GT(len, 0u);
  ASSERT_LT(len, 100u);
  auto corrupt = [&](uint64_t bad) {
    std::string b = full;
    std::memcpy(b.data() + at, &bad, 8);
    test::write_file(dir / "bad.gguf", b);
    return "inspect " + test::quote((dir / "bad.gguf").string());
  };
  expect_error(corrupt(uint64_t(1) << 40),
               {"bad.gguf: metadata key 0: key length 1099511627776",
                "runs past the end of the file (" + std::to_string(full.size()) + " bytes)"});
  // Four bytes too long: the key takes in the value type's bytes.
  expect_error(corrupt(len + 4), {"bad.gguf: metadata key 0: key of " + std::to_string(len + 4) + " bytes is not text",
                                  "length is corrupted"});
}

TEST(CliErrors, PickleCheckpoint) {
  test::TempDir dir;
  fs::create_directories(dir / "m");
  fs::copy(test::model_dir("gpt2") / "config.json", dir / "m" / "config.json");
  test::write_file(dir / "m" / "pytorch_model.bin", "PK");
  expect_error("inspect " + test::quote((dir / "m").string()), {"pytorch_model.bin", "convert to safetensors"});
}

TEST(CliErrors, PromptAndDevice) {
  std::string long_prompt;
  for (int i = 0; i < 200; ++i) long_prompt += "fox ";
  expect_error("generate " + test::model_arg("gpt2") + " --prompt '" + long_prompt + "'",
               {"--prompt", "maximum positions (128)"});
  // A machine without a GPU names the missing device; one with a GPU runs.
  std::string why;
  if (!cuda_available(&why)) {
    expect_error("generate " + test::model_arg("gpt2") + " --prompt hi --device cuda", {"--device: no CUDA device"});
  } else {
    const auto r =
        test::run_cli("generate " + test::model_arg("gpt2") + " --prompt hi --max-new-tokens 2 --device cuda");
    EXPECT_EQ(r.exit_code, 0) << r.output;
  }
  expect_error("bench --shape gpt5", {"unknown shape 'gpt5'"});
  expect_error("score " + test::model_arg("gpt2") + " --text-file /nonexistent.txt",
               {"/nonexistent.txt", "cannot open"});
  expect_error("generate " + test::model_arg("gpt2") + " --prompt hi --top-p 0", {"--top-p"});
}

TEST(CliErrors, ASequenceLongerThanTheSlidingWindowIsRefusedBeforeAnyOutput) {
  // Mistral with a sliding window of 8: a run that would reach past it is
  // refused up front (nothing printed, no export folder), on both the plain
  // and the session path.
  test::TempDir dir;
  std::filesystem::copy(test::model_dir("mistral"), dir / "m", std::filesystem::copy_options::recursive);
  auto cfg = read_json_file(dir / "m" / "config.json");
  cfg["sliding_window"] = 8;
  test::write_file(dir / "m" / "config.json", cfg.dump());
  const std::string m = test::quote((dir / "m").string());
  for (const std::string& extra : std::vector<std::string>{"", " --policy h2o --budget 50% --export " + test::quote((dir / "out").string())}) {
    const auto r = test::run_cli("generate " + m + " --prompt 'The quick brown fox jumps over' --max-new-tokens 6" + extra);
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_EQ(r.output.rfind("kvscope-cli: error: ", 0), 0u) << "printed before the error: " << r.output;
    EXPECT_NE(r.output.find("sliding window (sliding_window = 8)"), std::string::npos) << r.output;
    EXPECT_FALSE(std::filesystem::exists(dir / "out"));
  }
  // Within the window it runs.
  const auto ok = test::run_cli("generate " + m + " --prompt 'The quick' --max-new-tokens 2");
  EXPECT_EQ(ok.exit_code, 0) << ok.output;
}

TEST(CliErrors, PolicyFlags) {
  const std::string g =
      "generate " + test::model_arg("llama_gqa") + " --prompt 'The quick brown fox jumps' --max-new-tokens 2 ";
  expect_error(g + "--policy lru", {"--policy: unknown policy 'lru'", "h2o"});
  expect_error(g + "--policy h2o --budget 4 --window 3 --sinks 2", {"--budget: 4 is smaller than the recent window (3) plus the sinks (2)"});
  expect_error(g + "--policy a2sf --alpha 1.5", {"--alpha: must be in [0, 1]"});
  expect_error(g + "--policy keyformer --tau-init 0", {"--tau-init: must be > 0"});
  expect_error(g + "--policy keyformer --tau-end -1", {"--tau-end: must be > 0"});
  expect_error(g + "--policy h2o --budget 4096", {"--budget", "larger than the context"});
  // A flag the chosen policy ignores is named, not dropped.
  expect_error(g + "--policy tova --budget 50% --alpha 0.5", {"--alpha: has no effect with --policy tova", "a2sf"});
  expect_error(g + "--budget 50%", {"--budget: has no effect with --policy full"});
  expect_error(g + "--policy h2o --budget 50% --noise none", {"--noise: has no effect with --policy h2o", "keyformer"});
  expect_error(g + "--policy window --budget 50% --reduce max", {"--reduce: has no effect with --policy window"});
  expect_error(g + "--policy h2o --budget 50% --keyformer-variant code",
               {"--keyformer-variant: has no effect with --policy h2o", "keyformer"});
  expect_error(g + "--policy keyformer --keyformer-variant released",
               {"--keyformer-variant: unknown Keyformer variant 'released' (choose from paper, code)"});
  expect_error(g + "--policy h2o --budget 50% --a2sf-revision latest",
               {"--a2sf-revision: has no effect with --policy h2o", "a2sf"});
  expect_error(g + "--policy a2sf --budget 8 --a2sf-revision latest",
               {"--budget: 8 is smaller than the recent window (16)"});
  for (const char* typed : {"--policy keyformer --budget 50% --keyformer-variant code",
                            "--policy a2sf --budget 90% --window 2 --a2sf-revision latest"}) {
    const auto ok = test::run_cli(g + typed);
    EXPECT_EQ(ok.exit_code, 0) << typed << "\n" << ok.output;
  }
  expect_error(g + "--policy h2o --sharing grouped", {"--sharing: unknown sharing layout 'grouped'"});
  expect_error(g + "--policy h2o --sharing gqa:3", {"--sharing", "must divide"});
  // The flags the user typed, not the session file's fields.
  expect_error(g + "--policy h2o --export-layer 9 --export /tmp/kvscope-never", {"--export-layer: unknown layer 9"});
  expect_error(g + "--policy h2o --export-head 5 --export /tmp/kvscope-never", {"--export-head: unknown head 5"});
  expect_error(g + "--export-layer 7 --export /tmp/kvscope-never", {"--export-layer: unknown layer 7"});
  expect_error(g + "--policy h2o --record-layers 3", {"--record-layers: unknown layer 3"});
  expect_error(g + "--policy h2o --granularity head", {"--granularity: unknown granularity 'head'"});
  // kvpress's compression ratio: in [0, 1), for the budget only, one form at a time.
  expect_error(g + "--policy h2o --budget-ratio 1", {"--budget-ratio: a compression ratio", "in [0, 1), got '1'"});
  expect_error(g + "--policy h2o --budget ratio:1.5", {"--budget: a compression ratio", "got '1.5'"});
  expect_error(g + "--policy h2o --budget-ratio 0.5 --budget 4", {"--budget excludes --budget-ratio"});
  expect_error(g + "--budget-ratio 0.5", {"--budget-ratio: has no effect with --policy full"});
  expect_error(g + "--policy h2o --budget 50% --window ratio:0.5",
               {"--window: a compression ratio is a budget's form"});
  expect_error(g + "--policy h2o --budget-ratio 0.99 --window 2",
               {"--budget: 1 is smaller than the recent window (2)"});
  // The decoding schedule: a positive interval, the prompt left whole, evicting policies only.
  expect_error(g + "--policy knorm --budget 4 --compression-interval 0", {"--compression-interval: must be >= 1"});
  expect_error(g + "--policy knorm --budget 4 --compression-interval 2 --prefill streaming",
               {"--compression-interval: the decoding schedule leaves the prompt whole"});
  expect_error(g + "--policy ideal --budget 4 --compression-interval 2",
               {"--compression-interval: has no effect with --policy ideal"});
  // AdaKV's split is among a layer's KV heads: TOVA's default layer-wide decision refuses it.
  expect_error(g + "--policy tova --budget 4 --head-budgets adaptive",
               {"--head-budgets: adaptive splits a layer's budget among its KV heads", "(this run's is layer)"});
  expect_error(g + "--policy knorm --budget 4 --head-budgets adaptive --safeguard 1.5",
               {"--safeguard: must be in [0, 1]"});
  expect_error(g + "--policy window --budget 4 --head-budgets adaptive",
               {"--head-budgets: has no effect with --policy window"});
  EXPECT_FALSE(fs::exists("/tmp/kvscope-never"));
}

TEST(CliErrors, SessionFiles) {
  test::TempDir dir;
  // Each file states its format and version; then the settings under test.
  auto write = [&](const std::string& text) {
    test::write_file(dir / "s.json", "{\"format\": \"kvscope-session\", \"version\": 1, " + text.substr(1));
    return "run " + test::quote((dir / "s.json").string());
  };
  expect_error(write("{\"prompt\": \"hi\", \"policy\": {\"name\": \"lru\"}}"), {"s.json: policy.name: unknown policy 'lru'"});
  expect_error(write("{\"prompt\": \"hi\", \"policy\": {\"alpha\": -1}}"), {"s.json: policy.alpha"});
  expect_error(write("{\"prompt\": \"hi\", \"policy\": {\"tau_end\": 0}}"), {"s.json: policy.tau_end"});
  expect_error(write("{\"prompt\": \"hi\", \"sharing\": \"mlkv:x\"}"), {"s.json: sharing"});
  expect_error(write("{\"prompt\": \"hi\""), {"s.json: invalid JSON"});
  const std::string gpt2 = "\"model\": " + nlohmann::json(test::model_dir("gpt2").string()).dump();
  // Settings the engine names by their flags are the file's fields here.
  expect_error(write("{\"prompt\": \"hi\", " + gpt2 + ", \"policy\": {\"name\": \"h2o\", \"budget\": 9000}}"),
               {"s.json: policy.budget:", "larger than the context"});
  expect_error(write("{\"prompt\": \"hi\", " + gpt2 + ", \"export\": {\"layer\": 7}}"), {"s.json: export.layer: unknown layer 7"});
  expect_error(write("{\"prompt\": \"hi\", " + gpt2 + ", \"export\": {\"head\": 9}}"), {"s.json: export.head: unknown head 9"});
  expect_error(write("{\"prompt\": \"hi\", " + gpt2 + ", \"recording\": {\"layers\": [5]}}"),
               {"s.json: recording.layers: unknown layer 5"});
  // A model that does not load: the session file and its field.
  expect_error(write("{\"prompt\": \"hi\", \"model\": \"/nonexistent\"}"),
               {"s.json: model: /nonexistent: not found (a model is a Hugging Face model folder or a .gguf file)"});
  expect_error("run /nonexistent/session.json", {"/nonexistent/session.json: file not found"});
}

// Every parse error: one line, status 1 (not CLI11's own codes); --help and
// --version still print and exit 0.
TEST(CliErrors, ParseErrorsExitWithOne) {
  expect_error("generate --prompt hi --scale sqrt", {"--scale", "sqrt"});
  expect_error("eval --dataset x.jsonl --export D", {"--export"});
  expect_error("generate --prompt hi --max-new-tokens many", {"--max-new-tokens"});
  expect_error("generate", {"--prompt"});
  expect_error("frobnicate", {"frobnicate"});
  expect_error("", {"subcommand"});
  EXPECT_FALSE(fs::exists("D"));
  const auto help = test::run_cli("--help");
  EXPECT_EQ(help.exit_code, 0) << help.output;
  EXPECT_NE(help.output.find("generate"), std::string::npos) << help.output;
  const auto sub = test::run_cli("generate --help");
  EXPECT_EQ(sub.exit_code, 0) << sub.output;
  EXPECT_NE(sub.output.find("--colormap"), std::string::npos) << sub.output;
  const auto version = test::run_cli("--version");
  EXPECT_EQ(version.exit_code, 0) << version.output;
  EXPECT_EQ(version.output, std::string("kvscope-cli ") + kvscope_version() + " (commit " + kvscope_commit() + ")\n");
}

// A bad --colormap fails while parsing, before the run, with or without
// --export, and nothing is written.
TEST(CliErrors, ColormapCheckedBeforeTheRun) {
  test::TempDir dir;
  const std::string g = "generate " + test::model_arg("llama_gqa") + " --prompt 'The quick' --max-new-tokens 1 ";
  expect_error(g + "--colormap jet --export " + test::quote((dir / "D").string()), {"--colormap", "'jet'", "viridis"});
  EXPECT_FALSE(fs::exists(dir / "D"));
  expect_error(g + "--colormap jet", {"--colormap", "'jet'"});
  test::write_file(dir / "t.txt", "The quick brown fox jumps over the lazy dog.");
  expect_error("score " + test::model_arg("gpt2") + " --text-file " + test::quote((dir / "t.txt").string()) +
                   " --policy h2o --colormap Viridis --export " + test::quote((dir / "D").string()),
               {"--colormap", "'Viridis'"});
  EXPECT_FALSE(fs::exists(dir / "D"));
  const auto ok = test::run_cli(g + "--colormap magma --policy h2o --budget 50% --export " + test::quote((dir / "M").string()));
  ASSERT_EQ(ok.exit_code, 0) << ok.output;
  EXPECT_TRUE(fs::exists(dir / "M" / "attention_L0_H0.png"));
}

// The figure flags: a bad value is one line naming the flag, before any
// work, and nothing is written.
TEST(CliErrors, FigureFlagsCheckedBeforeTheRun) {
  test::TempDir dir;
  const std::string g = "generate " + test::model_arg("llama_gqa") +
                        " --prompt 'The quick' --max-new-tokens 1 --export " + test::quote((dir / "D").string()) + " ";
  expect_error(g + "--format png,gif", {"--format", "'gif'", "png, svg, pdf"});
  expect_error(g + "--dpi 5", {"--dpi", "between 36 and 600"});
  expect_error(g + "--dpi lots", {"--dpi", "'lots'"});
  expect_error(g + "--range 1:0", {"--range", "LO must be below HI"});
  expect_error(g + "--range everything", {"--range", "auto, shared or LO:HI"});
  expect_error(g + "--range 0:1 --scale log", {"--range", "log scale needs LO > 0"});
  expect_error(g + "--evicted hatch", {"--evicted", "outline, strip or none"});
  expect_error(g + "--figure-size A4", {"--figure-size", "natural, column, page or WxH"});
  expect_error(g + "--figure-size 3.3x2.5", {"--figure-size", "'3.3x2.5'"});
  expect_error(g + "--figure-size 0.5x0.5in", {"--figure-size", "between 1 in and 40 in"});
  expect_error(g + "--figure-positions 9:3", {"--figure-positions", "must not be above"});
  expect_error(g + "--figure-positions 5", {"--figure-positions", "A:B"});
  EXPECT_FALSE(fs::exists(dir / "D"));
  test::write_file(dir / "s.json", "{\"format\": \"kvscope-session\", \"version\": 1, \"prompt\": \"hi\"}");
  expect_error("run " + test::quote((dir / "s.json").string()) + " --format tiff", {"--format", "'tiff'"});
  expect_error("sweep " + test::quote((dir / "s.json").string()) + " --dpi 0 --out " + test::quote((dir / "S").string()),
               {"--dpi"});
  expect_error("sweep " + test::quote((dir / "s.json").string()) + " --heatmaps --dataset x.jsonl --out " +
                   test::quote((dir / "S").string()),
               {"--heatmaps"});
  EXPECT_FALSE(fs::exists(dir / "S"));
  const auto ok = test::run_cli(g + "--format svg --format pdf --dpi 200 --range 0:0.5 --evicted outline");
  ASSERT_EQ(ok.exit_code, 0) << ok.output;
  int svg = 0, pdf = 0, png = 0;
  for (const auto& e : fs::directory_iterator(dir / "D")) {
    svg += e.path().extension() == ".svg";
    pdf += e.path().extension() == ".pdf";
    png += e.path().extension() == ".png";
  }
  EXPECT_GE(svg, 2);
  EXPECT_EQ(svg, pdf);
  EXPECT_EQ(png, 0);
}

// --figure-size column: every figure of an export is 3.3 in wide (its PNG
// 3.3 x DPI pixels); --figure-positions past the last position is one line.
TEST(CliErrors, FigureSizeColumnAndPositionsPastTheEnd) {
  test::TempDir dir;
  const std::string g =
      "generate " + test::model_arg("llama_gqa") + " --prompt 'The quick brown fox jumps' --max-new-tokens 2 ";
  const auto ok = test::run_cli(g + "--figure-size column --dpi 100 --figure-positions 1:3 --export " +
                                test::quote((dir / "D").string()));
  ASSERT_EQ(ok.exit_code, 0) << ok.output;
  auto png_width = [](const fs::path& p) {  // the IHDR chunk's width, big-endian at byte 16
    const std::string b = test::read_file(p);
    return b.size() < 24
               ? -1
               : int(uint8_t(b[16])) << 24 | int(uint8_t(b[17])) << 16 | int(uint8_t(b[18])) << 8 | int(uint8_t(b[19]));
  };
  int pngs = 0;
  for (const auto& e : fs::directory_iterator(dir / "D"))
    if (e.path().extension() == ".png") {
      ++pngs;
      EXPECT_EQ(png_width(e.path()), 330) << e.path();  // ceil(237.6 pt x 100 / 72)
    }
  EXPECT_GE(pngs, 2);
  // Past the last position the run can reach: one line naming the flag,
  // before the run (no summary line), and no export is left.
  const auto past = test::run_cli(g + "--figure-positions 0:999 --export " + test::quote((dir / "E").string()));
  EXPECT_EQ(past.exit_code, 1) << past.output;
  EXPECT_EQ(
      past.output.rfind("kvscope-cli: error: --figure-positions: 0:999 reaches past the run's last position (6: ", 0),
      0u)
      << past.output;
  EXPECT_FALSE(fs::exists(dir / "E"));
  // A size too small for a figure's text is known when the figure is laid
  // out, after the run; the line names the flag.
  const auto tiny = test::run_cli(g + "--figure-size 80x80pt --export " + test::quote((dir / "T").string()));
  EXPECT_EQ(tiny.exit_code, 1) << tiny.output;
  EXPECT_NE(tiny.output.find("kvscope-cli: error: --figure-size: 80x80pt: the figure needs at least "),
            std::string::npos)
      << tiny.output;
  EXPECT_FALSE(fs::exists(dir / "T"));
}

// --export / --out: an existing file, a path under a file, or an empty name
// is refused before the run on every command that writes one; the file is
// left as it was and no directory is made.
TEST(CliErrors, OutputDirectoryCheckedBeforeTheRun) {
  test::TempDir dir;
  test::write_file(dir / "F", "keep");
  test::write_file(dir / "t.txt", "The quick brown fox jumps over the lazy dog.");
  nlohmann::json s = {{"format", "kvscope-session"},
                      {"version", 1},
                      {"model", test::model_dir("gpt2").string()}, {"prompt", "The quick brown fox"}, {"max_new_tokens", 1}};
  test::write_file(dir / "s.json", s.dump());
  const std::string file = test::quote((dir / "F").string()), under = test::quote((dir / "F" / "sub").string());
  const std::string g = "generate " + test::model_arg("gpt2") + " --prompt 'The quick' --max-new-tokens 1 --export ";
  const std::string sc =
      "score " + test::model_arg("gpt2") + " --text-file " + test::quote((dir / "t.txt").string()) + " --export ";
  const std::string run = "run " + test::quote((dir / "s.json").string()) + " --export ";
  const std::string sw = "sweep " + test::quote((dir / "s.json").string()) + " --policies h2o --budgets 50% --out ";
  for (const std::string& cmd : {g, sc, run}) {
    expect_error(cmd + file, {"--export: ", "/F: exists and is not a directory"});
    expect_error(cmd + under, {"--export: ", "/F/sub: cannot be created", "is not a directory"});
    expect_error(cmd + "''", {"--export: the directory name is empty"});
  }
  expect_error(sw + file, {"--out: ", "/F: exists and is not a directory"});
  expect_error(sw + under, {"--out: ", "cannot be created"});
  expect_error(sw + "''", {"--out: the directory name is empty"});
  EXPECT_EQ(test::read_file(dir / "F"), "keep");
  if (::geteuid() != 0) {  // root writes anywhere
    fs::create_directories(dir / "ro");
    fs::permissions(dir / "ro", fs::perms::owner_read | fs::perms::owner_exec);
    expect_error(g + test::quote((dir / "ro" / "x").string()), {"--export: ", "/ro is not writable"});
    expect_error(g + test::quote((dir / "ro").string()), {"--export: ", "not writable"});
    fs::permissions(dir / "ro", fs::perms::owner_all);
  }
}

// --record-layers 99 is refused with or without --export, by generate
// (full cache, no other eviction flag) and by run over a session file.
TEST(CliErrors, RecordLayersCheckedWithoutExport) {
  const std::string g = "generate " + test::model_arg("gpt2") + " --prompt hi --max-new-tokens 1 ";
  expect_error(g + "--record-layers 99", {"--record-layers: unknown layer 99"});
  test::TempDir dir;
  test::write_file(dir / "s.json", nlohmann::json({{"format", "kvscope-session"},
                                                   {"version", 1},
                                                   {"model", test::model_dir("gpt2").string()},
                                                   {"prompt", "hi"},
                                                   {"max_new_tokens", 1}})
                                       .dump());
  // (run names the session's field the flag overrides.)
  expect_error("run " + test::quote((dir / "s.json").string()) + " --record-layers 99",
               {"s.json: recording.layers: unknown layer 99"});
  const auto ok = test::run_cli(g + "--record-layers 1");
  EXPECT_EQ(ok.exit_code, 0) << ok.output;
}

// The recorder's heads are checked like its layers, and a run that will not
// fit the memory (KVSCOPE_MEMORY_MB stands in for a small machine) is
// refused before any output, naming the flag and what fits.
TEST(CliErrors, RecordingThatWillNotFitNamesTheFlag) {
  const std::string g = "generate " + test::model_arg("llama_gqa") + " --prompt 'The quick brown fox' ";
  expect_error(g + "--max-new-tokens 1 --record-heads 4",
               {"--record-heads: unknown head 4 (the model has heads 0..3)"});
  expect_error(g + "--max-new-tokens 1 --record-mb 0", {"--record-mb"});
  test::TempDir dir;
  const auto tight = test::run_shell("KVSCOPE_MEMORY_MB=0.2 " + std::string(KVSCOPE_CLI_PATH) + " " + g +
                                     "--max-new-tokens 100 --export " + test::quote((dir / "out").string()) + " 2>&1");
  EXPECT_EQ(tight.exit_code, 1) << tight.output;
  EXPECT_EQ(tight.output.rfind("kvscope-cli: error: --max-new-tokens: the masks and policy scores of 4 KV segments", 0),
            0u)
      << tight.output;
  EXPECT_NE(tight.output.find("new tokens fit\n"), std::string::npos) << tight.output;
  EXPECT_EQ(std::count(tight.output.begin(), tight.output.end(), '\n'), 1) << tight.output;
  EXPECT_FALSE(std::filesystem::exists(dir / "out")) << "refused before any output";
  // A plain generate (no recorder) holds its KV cache alone: checked too.
  // (Each segment's region is whole pages: 64 rows of this model's 16-float
  // rows at a time with 4 KiB pages, so 0.08 MB holds 128 rows of each of
  // its 4 segments' K and V, the 4-token prompt and 59 new tokens with the
  // slack.)
  const auto plain = test::run_shell("KVSCOPE_MEMORY_MB=0.08 " + std::string(KVSCOPE_CLI_PATH) + " " + g +
                                     "--max-new-tokens 100 2>&1");
  EXPECT_EQ(plain.exit_code, 1) << plain.output;
  EXPECT_EQ(plain.output.rfind("kvscope-cli: error: --max-new-tokens: the KV cache of ", 0), 0u) << plain.output;
  EXPECT_NE(plain.output.find("new tokens fit\n"), std::string::npos) << plain.output;
  if (sysconf(_SC_PAGESIZE) == 4096)
    EXPECT_NE(plain.output.find("at most 59 new tokens fit"), std::string::npos) << plain.output;
  EXPECT_EQ(std::count(plain.output.begin(), plain.output.end(), '\n'), 1) << plain.output;
  // Heads named: only those are recorded, and attention.npy holds them.
  const auto ok = test::run_cli(g + "--max-new-tokens 3 --policy h2o --budget 50% --record-heads 2 0 --export " +
                                test::quote((dir / "heads").string()));
  ASSERT_EQ(ok.exit_code, 0) << ok.output;
  const auto manifest = read_json_file(dir / "heads" / "manifest.json");
  EXPECT_EQ(manifest["attention.npy"]["heads"], nlohmann::json({0, 2})) << manifest.dump();
  const std::string npy = test::read_file(dir / "heads" / "attention.npy");
  EXPECT_NE(npy.find("'shape': (4,2,2,"), std::string::npos) << npy.substr(0, 128);
  // The heatmap of a recorded head is drawn; the all-heads grid, which would
  // replay the run with every head, is left out and the manifest says so.
  bool heatmap = false, grid = false;
  for (const auto& f : manifest["files"]) {
    const std::string name = f.get<std::string>();
    heatmap = heatmap || name.rfind("attention_L", 0) == 0;
    grid = grid || name.find("_grid") != std::string::npos;
  }
  EXPECT_TRUE(heatmap) << manifest.dump();
  EXPECT_FALSE(grid) << manifest.dump();
  EXPECT_NE(manifest["attention.npy"].value("grid", "").find("left out"), std::string::npos) << manifest.dump();
}

// An item longer than the model's positions is named by file, line and id,
// before any item runs (eval and sweep read the same sets).
TEST(CliErrors, EvalItemTooLongIsNamed) {
  test::TempDir dir;
  std::string prompt;
  for (int i = 0; i < 200; ++i) prompt += "fox ";
  test::write_file(dir / "d.jsonl", "{\"prompt\": \"The quick\", \"answer\": \" fox\"}\n\n" +
                                        nlohmann::json({{"prompt", prompt}, {"answer", " x"}, {"id", "q7"}}).dump() +
                                        "\n");
  const std::string ev = "eval " + test::model_arg("gpt2") + " --dataset " + test::quote((dir / "d.jsonl").string());
  expect_error(ev, {"d.jsonl:3 (item q7): ", " tokens (", " of answer), more than the model's 128 positions"});
  // Without an id or an answer: the line, and the tokens it would generate.
  test::write_file(dir / "d.jsonl", nlohmann::json({{"prompt", prompt}}).dump() + "\n");
  expect_error(ev, {"d.jsonl:1: ", " to generate), more than the model's 128 positions"});
}

TEST(CliErrors, LimitMustBePositive) {
  test::TempDir dir;
  test::write_file(dir / "d.jsonl", "{\"prompt\": \"The quick brown\", \"answer\": \" fox\"}\n");
  test::write_file(dir / "s.json", nlohmann::json({{"format", "kvscope-session"},
                                                     {"version", 1},
                                                     {"model", test::model_dir("gpt2").string()},
                                                     {"prompt", "The quick"}}).dump());
  const std::string ds = " --dataset " + test::quote((dir / "d.jsonl").string());
  const std::string ev = "eval " + test::model_arg("gpt2") + ds;
  const std::string sw = "sweep " + test::quote((dir / "s.json").string()) + " --policies h2o --budgets 50% --out " +
                         test::quote((dir / "out").string());
  for (const char* n : {"0", "-1"}) {
    expect_error(ev + " --limit " + n, {"--limit: must be at least 1, got " + std::string(n)});
    expect_error(sw + ds + " --limit " + n, {"--limit: must be at least 1, got " + std::string(n)});
  }
  expect_error(sw + " --limit 1", {"--limit", "--dataset"});
  EXPECT_FALSE(fs::exists(dir / "out"));
  const auto r = test::run_cli(ev + " --limit 1 --json", false);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(nlohmann::json::parse(r.output)["items"], 1);
}

// sweep names --policies / --budgets and the entry, refuses a mix of counts
// and percentages, and checks every cell before running any.
TEST(CliErrors, SweepChecksEveryCellFirst) {
  test::TempDir dir;
  nlohmann::json s = {{"format", "kvscope-session"},
                      {"version", 1},
                      {"model", test::model_dir("gpt2").string()},
                      {"prompt", "The quick brown fox jumps over the lazy dog."},
                      {"max_new_tokens", 1}};
  test::write_file(dir / "s.json", s.dump());
  const std::string sw = "sweep " + test::quote((dir / "s.json").string()) + " --out " + test::quote((dir / "out").string());
  expect_error(sw + " --policies h2o --budgets 20,50%", {"--budgets: mixes token counts ('20') and percentages ('50%')"});
  expect_error(sw + " --policies h2o,lru --budgets 50%", {"--policies: unknown policy 'lru'"});
  expect_error(sw + " --policies h2o --budgets 50%,lots", {"--budgets:", "'lots'"});
  // The second cell fails: nothing runs, nothing is written.
  expect_error(sw + " --policies window,h2o --budgets 50%,1%", {"--budgets: '1%' with policy 'window':", "keeps no token"});
  expect_error(sw + " --policies window,h2o --budgets 4,9000", {"--budgets: '9000' with policy 'window':", "larger than the context"});
  EXPECT_FALSE(fs::exists(dir / "out"));
  // A setting of the session file that the model refuses: the file and its field.
  s["recording"] = {{"layers", {7}}};
  test::write_file(dir / "bad.json", s.dump());
  expect_error("sweep " + test::quote((dir / "bad.json").string()) + " --policies h2o --budgets 50% --out " +
                   test::quote((dir / "out").string()),
               {"bad.json: recording.layers: unknown layer 7"});
  EXPECT_FALSE(fs::exists(dir / "out"));
  // A dataset item too short for a budget is named too.
  test::write_file(dir / "d.jsonl", "{\"prompt\": \"The quick brown fox jumps over the lazy dog.\", \"answer\": \" A\"}\n"
                                    "{\"prompt\": \"A\", \"answer\": \" fox\"}\n");
  expect_error(sw + " --policies h2o --budgets 10% --dataset " + test::quote((dir / "d.jsonl").string()),
               {"--budgets: '10%' with policy 'h2o':", "keeps no token", "d.jsonl: item 2"});
  EXPECT_FALSE(fs::exists(dir / "out"));
  // An item longer than the model (gpt2's 128 positions) is the item's
  // fault whatever the budget, named before anything is written, and a
  // second try is not taken for an interrupted sweep.
  std::string long_prompt;
  for (int i = 0; i < 20; ++i) long_prompt += "The quick brown fox jumps over the lazy dog. ";
  test::write_file(dir / "long.jsonl", "{\"prompt\": \"" + long_prompt + "\", \"answer\": \" A\"}\n");
  for (int attempt = 0; attempt < 2; ++attempt) {
    expect_error(sw + " --policies h2o --budgets 30% --dataset " + test::quote((dir / "long.jsonl").string()),
                 {"long.jsonl:1", "more than the model's 128 positions"});
    EXPECT_FALSE(fs::exists(dir / "out"));
  }
}

}  // namespace
}  // namespace kvscope

namespace kvscope {
namespace {

// The CPU backend's threads: --threads or KVSCOPE_THREADS, anything that is
// not a count from 1 to 64 refused in one line (not silently replaced by
// the default, which would measure something else).
TEST(CliErrors, ThreadCounts) {
  const std::string g = "generate " + test::model_arg("gpt2") + " --prompt hi --max-new-tokens 1";
  for (const char* bad : {"0", "abc", "-3", "65", ""}) {
    const auto r = test::run_shell("KVSCOPE_THREADS=" + test::quote(bad) + " " + KVSCOPE_CLI_PATH + " " + g + " 2>&1");
    EXPECT_EQ(r.exit_code, 1) << bad << ": " << r.output;
    EXPECT_NE(r.output.find("kvscope-cli: error: KVSCOPE_THREADS: expected a thread count from 1 to 64, got '" +
                            std::string(bad) + "'"),
              std::string::npos)
        << r.output;
    EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
  }
  expect_error(g + " --threads 0", {"--threads: expected a thread count from 1 to 64, got '0'"});
  expect_error("--threads=x " + g, {"--threads: expected a thread count from 1 to 64, got 'x'"});
  // A good value, before or after the command word, over a bad variable.
  for (const std::string& args : {g + " --threads 2", "--threads 1 " + g}) {
    const auto r = test::run_shell("KVSCOPE_THREADS=abc " + std::string(KVSCOPE_CLI_PATH) + " " + args + " 2>&1");
    EXPECT_EQ(r.exit_code, 0) << args << ": " << r.output;
  }
  const auto cpu = test::run_cli("cpu --threads 3");
  EXPECT_NE(cpu.output.find("threads          3"), std::string::npos) << cpu.output;
}

// A prompt from a file (a long prompt cannot go through the shell) gives
// what the same text as --prompt gives; a missing file is named.
TEST(CliErrors, PromptFile) {
  test::TempDir dir;
  const std::string text = "The quick brown fox jumps over the lazy dog.";
  test::write_file(dir / "p.txt", text);
  const std::string m = test::model_arg("gpt2") + " --max-new-tokens 3";
  const auto by_flag = test::run_cli("generate " + m + " --prompt " + test::quote(text), false);
  const auto by_file =
      test::run_cli("generate " + m + " --prompt-file " + test::quote((dir / "p.txt").string()), false);
  EXPECT_EQ(by_flag.exit_code, 0) << by_flag.output;
  EXPECT_EQ(by_file.output, by_flag.output);
  expect_error("generate " + m + " --prompt-file /nonexistent/p.txt",
               {"/nonexistent/p.txt: cannot open --prompt-file"});
  expect_error("generate " + m, {"--prompt: give the prompt as --prompt TEXT or --prompt-file FILE"});
  for (const char* v : {"inf", "nan"})
    expect_error("generate " + m + " --policy keyformer --budget 50% --tau-init " + v + " --prompt hi",
                 {"--tau-init: must be finite"});
}

}  // namespace
}  // namespace kvscope
