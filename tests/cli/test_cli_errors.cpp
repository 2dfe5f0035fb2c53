// Bad input: one line naming the file and what is wrong, a non-zero exit,
// no crash, no half-written output (issue 2 item 8, issue 4 item 9).
#include <gtest/gtest.h>

#include "io/json_file.h"
#include "test_util.h"

namespace kvscope {
namespace {

std::string model(const std::string& name) { return test::quote(test::model_dir(name).string()); }

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
  expect_error("inspect /nonexistent/dir", {"/nonexistent/dir: model directory not found"});
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
  expect_error("generate " + model("gpt2") + " --prompt '" + long_prompt + "'", {"--prompt", "maximum positions (128)"});
  expect_error("generate " + model("gpt2") + " --prompt hi --device cuda", {"--device cuda: no CUDA device"});
  expect_error("bench --shape gpt5", {"unknown shape 'gpt5'"});
  expect_error("score " + model("gpt2") + " --text-file /nonexistent.txt", {"/nonexistent.txt", "cannot open"});
  expect_error("generate " + model("gpt2") + " --prompt hi --top-p 0", {"--top-p"});
}

TEST(CliErrors, PolicyFlags) {
  const std::string g = "generate " + model("llama_gqa") + " --prompt 'The quick brown fox jumps' --max-new-tokens 2 ";
  expect_error(g + "--policy lru", {"--policy: unknown policy 'lru'", "h2o"});
  expect_error(g + "--policy h2o --budget 4 --window 3 --sinks 2", {"--budget: 4 is smaller than the recent window (3) plus the sinks (2)"});
  expect_error(g + "--policy a2sf --alpha 1.5", {"--alpha: must be in [0, 1]"});
  expect_error(g + "--policy keyformer --tau-init 0", {"--tau-init: must be > 0"});
  expect_error(g + "--policy keyformer --tau-end -1", {"--tau-end: must be > 0"});
  expect_error(g + "--policy h2o --budget 4096", {"--budget", "larger than the context"});
  expect_error(g + "--policy h2o --sharing grouped", {"--sharing: unknown sharing layout 'grouped'"});
  expect_error(g + "--policy h2o --sharing gqa:3", {"--sharing", "must divide"});
  expect_error(g + "--policy h2o --export-layer 9 --export /tmp/kvscope-never", {"export.layer: unknown layer 9"});
  expect_error(g + "--policy h2o --export-head 5 --export /tmp/kvscope-never", {"export.head: unknown head 5"});
  expect_error(g + "--policy h2o --record-layers 3", {"recording.layers: unknown layer 3"});
  expect_error(g + "--policy h2o --granularity head", {"--granularity: unknown granularity 'head'"});
  EXPECT_FALSE(fs::exists("/tmp/kvscope-never"));
}

TEST(CliErrors, SessionFiles) {
  test::TempDir dir;
  auto write = [&](const std::string& text) {
    test::write_file(dir / "s.json", text);
    return "run " + test::quote((dir / "s.json").string());
  };
  expect_error(write("{\"prompt\": \"hi\", \"policy\": {\"name\": \"lru\"}}"), {"s.json: policy.name: unknown policy 'lru'"});
  expect_error(write("{\"prompt\": \"hi\", \"policy\": {\"alpha\": -1}}"), {"s.json: policy.alpha"});
  expect_error(write("{\"prompt\": \"hi\", \"policy\": {\"tau_end\": 0}}"), {"s.json: policy.tau_end"});
  expect_error(write("{\"prompt\": \"hi\", \"sharing\": \"mlkv:x\"}"), {"s.json: sharing"});
  expect_error(write("{\"prompt\": \"hi\""), {"s.json: invalid JSON"});
  expect_error(write("{\"prompt\": \"hi\", \"model\": " + nlohmann::json(test::model_dir("gpt2").string()).dump() +
                     ", \"policy\": {\"name\": \"h2o\", \"budget\": 9000}}"),
               {"--budget", "larger than the context"});
  expect_error("run /nonexistent/session.json", {"/nonexistent/session.json: file not found"});
}

}  // namespace
}  // namespace kvscope
