// kvscope-cli end to end, the way a user runs it, on the tiny checkpoints.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include "backend/golden.h"
#include "common/build_info.h"
#include "io/figure_metadata.h"
#include "io/json_file.h"
#include "io/npy.h"
#include "io/sha256.h"
#include "file_compare.h"
#include "test_util.h"

namespace kvscope {
namespace {

TEST(Cli, InspectJson) {
  const auto r = test::run_cli("inspect " + test::model_arg("llama_gqa") + " --json", false);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto j = nlohmann::json::parse(r.output);
  EXPECT_EQ(j["layers"], 2);
  EXPECT_EQ(j["heads"], 4);
  EXPECT_EQ(j["kv_heads"], 2);
  EXPECT_EQ(j["head_dim"], 16);
  EXPECT_EQ(j["kv_bytes_per_token"], 2 * 2 * 2 * 16 * 4);
  EXPECT_EQ(j["parameters"], 77040);
  // An fp32 checkpoint: stored is f32; f16 halves the matrices.
  const auto& held = j["cpu_weight_bytes"];
  EXPECT_EQ(held["stored"], held["f32"]);
  EXPECT_LT(held["f16"].get<int64_t>(), held["f32"].get<int64_t>());
  EXPECT_GE(held["f32"].get<int64_t>(), 77040 * 4);
  EXPECT_EQ(j["parameters_by_storage"], nlohmann::json({{"F32", 77040}}));
  // What made it: the build, the command, the model's files by hash.
  const auto& p = j.at("provenance");
  EXPECT_EQ(p.at("kvscope").at("version"), kvscope_version());
  EXPECT_EQ(p.at("command_line").get<std::string>().rfind("kvscope-cli inspect ", 0), 0u) << p.dump();
  std::set<std::string> files;
  for (const auto& f : p.at("model").at("files")) files.insert(f.at("name").get<std::string>());
  EXPECT_EQ(files, (std::set<std::string>{"model.safetensors", "tokenizer.json"})) << p.dump();
}

// A quantized GGUF file: its matrices stay in their blocks under stored,
// which then holds less than the file (its norms are the rest) and far
// less than f32.
TEST(Cli, InspectForecastsTheWeightsMemoryOfEachFormat) {
  const auto file = test::data_dir() / "gguf" / "tiny_llama.gguf";
  const auto r = test::run_cli("inspect " + test::quote(file.string()) + " --json", false);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto j = nlohmann::json::parse(r.output);
  const auto held = j["cpu_weight_bytes"];
  const auto stored = held["stored"].get<int64_t>(), f32 = held["f32"].get<int64_t>();
  EXPECT_LT(stored, int64_t(std::filesystem::file_size(file)));
  EXPECT_LT(3 * stored, f32);
  // The parameters by the file's block types (the file has a matrix of
  // each; its norms are F32), adding up to all of them.
  int64_t total = 0;
  for (const auto& [type, n] : j["parameters_by_storage"].items()) total += n.get<int64_t>();
  EXPECT_EQ(total, j["parameters"].get<int64_t>());
  for (const char* type : {"Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "Q4_K", "Q5_K", "Q6_K", "F16", "BF16", "F32"})
    EXPECT_TRUE(j["parameters_by_storage"].contains(type)) << type << " in " << j["parameters_by_storage"].dump();
  const auto text = test::run_cli("inspect " + test::quote(file.string()), false);
  EXPECT_NE(text.output.find("CPU weights      stored "), std::string::npos) << text.output;
  EXPECT_NE(text.output.find("stored as        "), std::string::npos) << text.output;
  // A 16-bit checkpoint's KV as the paper counts it, and as a CPU run holds it.
  const auto bf16 = test::run_cli("inspect " + test::model_arg("qwen3_bf16"), false);
  EXPECT_NE(bf16.output.find("KV bytes/token   384 in BF16 (2 x 2 layers x 2 heads x 24 dims x 2 bytes); the CPU "
                             "backend's cache holds F32: 768\n"),
            std::string::npos)
      << bf16.output;
}

// eval --json says what made its numbers, the dataset by its bytes.
TEST(Cli, EvalJsonCarriesItsProvenance) {
  test::TempDir dir;
  const std::string set = "{\"prompt\": \"The quick brown fox jumps over the lazy\", \"answer\": \" dog\"}\n";
  test::write_file(dir / "d.jsonl", set);
  const auto r = test::run_cli("eval " + test::model_arg("gpt2") + " --dataset " +
                                   test::quote((dir / "d.jsonl").string()) + " --policy h2o --budget 50% --json",
                               false);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto p = nlohmann::json::parse(r.output).at("provenance");
  const auto& dataset = p.at("policy").at("dataset");
  EXPECT_EQ(dataset.at("sha256"), sha256_hex(set)) << p.dump();
  EXPECT_EQ(dataset.at("bytes"), set.size());
  EXPECT_EQ(dataset.at("items"), 1);
  EXPECT_EQ(p.at("policy").at("settings").at("name"), "h2o");
  EXPECT_FALSE(p.at("model").at("files").empty());
}

TEST(Cli, TokenizeJson) {
  const auto r = test::run_cli("tokenize " + test::model_arg("gpt2") + " --text 'Hello world' --json", false);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto j = nlohmann::json::parse(r.output);
  EXPECT_FALSE(j["ids"].empty());
  EXPECT_EQ(j["ids"].size(), j["pieces"].size());
}

TEST(Cli, TokenizeReadsAFileAndStdinAndDetokenizeInvertsIt) {
  test::TempDir dir;
  const std::string text = "Héllo wörld, 12 Ω\nsecond line";
  test::write_file(dir / "t.txt", text);
  const std::string m = test::model_arg("llama_gqa");
  const auto direct = test::run_cli("tokenize " + m + " --json --text " + test::quote(text), false);
  const auto file = test::run_cli("tokenize " + m + " --json --text-file " + test::quote((dir / "t.txt").string()), false);
  const auto piped = test::run_shell("cat " + test::quote((dir / "t.txt").string()) + " | " + KVSCOPE_CLI_PATH +
                                     " tokenize " + m + " --json 2>/dev/null");
  ASSERT_EQ(direct.exit_code, 0) << direct.output;
  EXPECT_EQ(file.output, direct.output);
  EXPECT_EQ(piped.output, direct.output);
  const auto ids = nlohmann::json::parse(direct.output)["ids"];
  ASSERT_GT(ids.size(), 3u);
  const auto back = test::run_cli("detokenize " + m + " --skip-special --ids " + test::quote(ids.dump()), false);
  ASSERT_EQ(back.exit_code, 0);
  EXPECT_EQ(back.output, text + "\n");
  const auto bad = test::run_cli("detokenize " + m + " --ids 3,x");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.output.find("--ids: 'x' is not a token id"), std::string::npos) << bad.output;
}

TEST(Cli, AnEmptyValueDoesNotSwallowTheNextArgument) {
  // "--text=" is the empty text; "--json" after it is still the flag.
  const auto r = test::run_cli("tokenize " + test::model_arg("llama_gqa") + " --no-special --text= --json", false);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(nlohmann::json::parse(r.output)["ids"].size(), 0u);
}

TEST(Cli, LogitsMatchHuggingFace) {
  // The golden prompt as text is not available; a prompt's logits are
  // compared with a CPU forward of the same ids through `score`'s tokens
  // instead: write logits and check shape and finiteness, then the first
  // row against a second run (determinism).
  test::TempDir dir;
  const auto r = test::run_cli("logits " + test::model_arg("mistral") + " --prompt 'The quick brown fox' --out " +
                               test::quote((dir / "l.npy").string()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto a = read_npy(dir / "l.npy");
  ASSERT_EQ(a.shape.size(), 2u);
  EXPECT_EQ(a.shape[1], 320);
  for (float v : a.as_f32()) ASSERT_TRUE(std::isfinite(v));
}

TEST(Cli, GenerateIsDeterministicAndSeeded) {
  const std::string cmd =
      "generate " + test::model_arg("llama_gqa") + " --prompt 'The quick' --max-new-tokens 8 --temperature 0.8 --seed ";
  const auto a = test::run_cli(cmd + "3"), b = test::run_cli(cmd + "3");
  ASSERT_EQ(a.exit_code, 0) << a.output;
  EXPECT_EQ(a.output.substr(0, a.output.find('[')), b.output.substr(0, b.output.find('[')));
}

TEST(Cli, ScoreReportsPerplexity) {
  test::TempDir dir;
  test::write_file(dir / "t.txt", "The quick brown fox jumps over the lazy dog.");
  const auto r = test::run_cli(
      "score " + test::model_arg("gpt2") + " --text-file " + test::quote((dir / "t.txt").string()) + " --json", false);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto j = nlohmann::json::parse(r.output);
  EXPECT_NEAR(std::exp(j["mean_nll"].get<double>()), j["perplexity"].get<double>(), 1e-6);
  // With a policy, the second half is scored under eviction and compared with the full cache.
  const auto p = test::run_cli("score " + test::model_arg("gpt2") + " --text-file " +
                                   test::quote((dir / "t.txt").string()) + " --policy h2o --budget 50% --json",
                               false);
  ASSERT_EQ(p.exit_code, 0) << p.output;
  const auto jp = nlohmann::json::parse(p.output.substr(0, p.output.rfind('}') + 1));
  EXPECT_TRUE(jp.contains("mean_nll_full"));
  // The per-token NLL the help promises, one per scored token, with a policy too.
  for (const auto* jj : {&j, &jp}) {
    ASSERT_TRUE(jj->contains("nll")) << jj->dump();
    ASSERT_EQ((*jj)["nll"].size(), (*jj)["scored"].get<size_t>());
    double sum = 0;
    for (const auto& v : (*jj)["nll"]) sum += v.get<double>();
    EXPECT_NEAR(sum / (*jj)["nll"].size(), (*jj)["mean_nll"].get<double>(), 1e-9);
  }
  EXPECT_EQ(jp["nll_full"].size(), jp["nll"].size());
}

TEST(Cli, GenerateWithPolicyExportsAndRunReplaysIt) {
  test::TempDir dir;
  const auto r = test::run_cli("generate " + test::model_arg("llama_gqa") +
                               " --prompt 'The quick brown fox jumps over the lazy dog' --max-new-tokens 6 --policy "
                               "keyformer --budget 50% --export " +
                               test::quote((dir / "a").string()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("keyformer k="), std::string::npos) << r.output;
  for (const char* f : {"masks.npy", "attention.npy", "scores.npy", "events.csv", "metrics.csv", "tokens.json", "session.json"})
    EXPECT_TRUE(std::filesystem::exists(dir / "a" / f)) << f;
  // The exported session.json runs again headless to the same masks.
  auto s = read_json_file(dir / "a" / "session.json");
  s["model"] = test::model_dir("llama_gqa").string();
  test::write_file(dir / "s.json", s.dump());
  const auto r2 = test::run_cli("run " + test::quote((dir / "s.json").string()) + " --quiet --export " +
                                test::quote((dir / "b").string()));
  ASSERT_EQ(r2.exit_code, 0) << r2.output;
  EXPECT_TRUE(test::same_file(dir / "a" / "masks.npy", dir / "b" / "masks.npy"));
  // Each export names the command that made it, as a shell reads it back.
  EXPECT_EQ(read_json_file(dir / "a" / "manifest.json").at("provenance").at("command_line"),
            "kvscope-cli generate " + test::model_dir("llama_gqa").string() +
                " --prompt 'The quick brown fox jumps over the lazy dog' --max-new-tokens 6 --policy keyformer "
                "--budget 50% --export " +
                (dir / "a").string());
  EXPECT_EQ(read_json_file(dir / "b" / "session.json").at("provenance").at("command_line"),
            "kvscope-cli run " + (dir / "s.json").string() + " --quiet --export " + (dir / "b").string());
}

// --budget-ratio R (kvpress's compression_ratio) is --budget ratio:R: k =
// max(1, int(n (1 - R))), the session file keeps the ratio, and the run is
// the one of the count it resolves to.
TEST(Cli, BudgetRatioKeepsWhatKvpressRoundingKeeps) {
  test::TempDir dir;
  const std::string g = "generate " + test::model_arg("llama_gqa") +
                        " --prompt 'The quick brown fox jumps over the lazy dog' --max-new-tokens 4 --policy h2o ";
  const auto r = test::run_cli(g + "--budget-ratio 0.3 --export " + test::quote((dir / "a").string()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const int n = read_json_file(dir / "a" / "tokens.json").at("prompt_length").get<int>();
  const int k = static_cast<int>(n * (1.0 - 0.3));
  EXPECT_NE(r.output.find("h2o k=" + std::to_string(k) + " "), std::string::npos) << r.output;
  EXPECT_EQ(read_json_file(dir / "a" / "session.json").at("policy").at("budget"), "ratio:0.3");
  for (const std::string& typed : {std::string("--budget ratio:0.3"), "--budget " + std::to_string(k)}) {
    const auto r2 = test::run_cli(g + typed + " --export " + test::quote((dir / "b").string()));
    ASSERT_EQ(r2.exit_code, 0) << r2.output;
    EXPECT_TRUE(test::same_file(dir / "a" / "masks.npy", dir / "b" / "masks.npy")) << typed;
    std::filesystem::remove_all(dir / "b");
  }
}

TEST(Cli, RunExportsTheForkBesideTheSession) {
  // A session file's fork block gives DIR/fork: the same run up to
  // fork.at_step, then the fork's policy — the window's "compare" branch,
  // reproducible headless. Its session.json reruns to the same masks.
  test::TempDir dir;
  nlohmann::json s = {{"format", "kvscope-session"}, {"version", 1}, {"model", test::model_dir("llama_gqa").string()},
                      {"prompt", "The quick brown fox jumps over the lazy dog"}, {"max_new_tokens", 8},
                      {"stop_at_eos", false}, {"policy", {{"name", "h2o"}, {"budget", "50%"}}},
                      {"fork", {{"at_step", 3}, {"policy", {{"name", "tova"}, {"budget", "50%"}}}}}};
  test::write_file(dir / "s.json", s.dump());
  const auto r = test::run_cli("run " + test::quote((dir / "s.json").string()) + " --quiet --export " +
                               test::quote((dir / "a").string()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ASSERT_TRUE(std::filesystem::exists(dir / "a" / "fork" / "masks.npy")) << r.output;
  EXPECT_FALSE(test::same_file(dir / "a" / "masks.npy", dir / "a" / "fork" / "masks.npy"))
      << "the fork's policy must change the masks, or the test shows nothing";
  const auto b = read_json_file(dir / "a" / "fork" / "session.json");
  ASSERT_EQ(b["policy_changes"].size(), 1u);
  EXPECT_EQ(b["policy_changes"][0]["from_step"], 4);
  EXPECT_EQ(read_json_file(dir / "a" / "session.json")["fork"]["at_step"], 3);
  // A's set holds the figure comparing the two (of the figures' head), listed by its manifest.
  int comparisons = 0;
  const auto manifest = read_json_file(dir / "a" / "manifest.json");
  for (const auto& f : manifest["files"]) {
    const std::string name = f.get<std::string>();
    if (name.rfind("fork_difference_L", 0) == 0 && name.ends_with(".png")) {
      ++comparisons;
      EXPECT_TRUE(std::filesystem::exists(dir / "a" / name)) << name;
    }
  }
  EXPECT_EQ(comparisons, 1) << r.output;
  const auto r2 = test::run_cli("run " + test::quote((dir / "a" / "fork" / "session.json").string()) +
                                " --quiet --export " + test::quote((dir / "b").string()));
  ASSERT_EQ(r2.exit_code, 0) << r2.output;
  EXPECT_TRUE(test::same_file(dir / "a" / "fork" / "masks.npy", dir / "b" / "masks.npy"));
  EXPECT_TRUE(test::same_file(dir / "a" / "fork" / "attention.npy", dir / "b" / "attention.npy"));
}

TEST(Cli, RunTakesPolicyAndSamplingFlagsOverTheFile) {
  test::TempDir dir;
  nlohmann::json s = {{"format", "kvscope-session"}, {"version", 1}, {"model", test::model_dir("llama_gqa").string()},
                      {"prompt", "The quick brown fox jumps over the lazy dog"}, {"max_new_tokens", 6},
                      {"stop_at_eos", false}, {"policy", {{"name", "h2o"}, {"budget", "50%"}}}};
  test::write_file(dir / "h2o.json", s.dump());
  s["policy"] = {{"name", "a2sf"}, {"budget", "40%"}, {"alpha", 0.5}};
  s["sampling"] = {{"temperature", 0.8}};
  s["seed"] = 5;
  test::write_file(dir / "a2sf.json", s.dump());
  const auto flags = test::run_cli("run " + test::quote((dir / "h2o.json").string()) +
                                   " --quiet --policy a2sf --budget 40% --alpha 0.5 --temperature 0.8 --seed 5 --export " +
                                   test::quote((dir / "a").string()));
  const auto file = test::run_cli("run " + test::quote((dir / "a2sf.json").string()) + " --quiet --export " +
                                  test::quote((dir / "b").string()));
  ASSERT_EQ(flags.exit_code, 0) << flags.output;
  ASSERT_EQ(file.exit_code, 0) << file.output;
  EXPECT_TRUE(test::same_file(dir / "a" / "masks.npy", dir / "b" / "masks.npy"));
  EXPECT_TRUE(test::same_file(dir / "a" / "tokens.json", dir / "b" / "tokens.json"));
  // Settings held as floats are written by their shortest decimal.
  const std::string session = test::read_file(dir / "a" / "session.json");
  EXPECT_NE(session.find("\"temperature\": 0.8,"), std::string::npos) << session;
  EXPECT_EQ(session.find("0.800000011920929"), std::string::npos) << session;
  // A flag the file's policy ignores is named.
  const auto bad = test::run_cli("run " + test::quote((dir / "h2o.json").string()) + " --quiet --alpha 0.3");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.output.find("--alpha: has no effect with --policy h2o"), std::string::npos) << bad.output;
  // The heatmap flags generate takes, over the file's export block.
  const auto view = test::run_cli("run " + test::quote((dir / "h2o.json").string()) +
                                  " --quiet --export-layer 1 --export-head 3 --colormap magma --scale log --export " +
                                  test::quote((dir / "c").string()));
  ASSERT_EQ(view.exit_code, 0) << view.output;
  EXPECT_TRUE(std::filesystem::exists(dir / "c" / "attention_L1_H3.png"));
  EXPECT_TRUE(std::filesystem::exists(dir / "c" / "masks_L1_H3.csv"));
  const auto exported = nlohmann::json::parse(test::read_file(dir / "c" / "session.json")).at("export");
  EXPECT_EQ(exported.at("colormap"), "magma") << exported;
  EXPECT_EQ(exported.at("scale"), "log") << exported;
  const auto wrong = test::run_cli("run " + test::quote((dir / "h2o.json").string()) + " --quiet --colormap jet");
  EXPECT_NE(wrong.exit_code, 0);
  EXPECT_NE(wrong.output.find("--colormap"), std::string::npos) << wrong.output;
}

// Runs the CLI from `cwd`; stdout and stderr together.
test::CommandResult run_cli_in(const std::filesystem::path& cwd, const std::string& args) {
  return test::run_shell("cd " + test::quote(cwd.string()) + " && " + test::quote(KVSCOPE_CLI_PATH) + " " + args + " 2>&1");
}

// A MODEL given as a relative path goes into session.json as an absolute
// one, so the export reruns from any directory; so does the bundled default.
TEST(Cli, ExportedSessionRerunsFromAnotherDirectory) {
  test::TempDir dir;
  std::filesystem::create_directories(dir / "work");
  std::filesystem::copy(test::model_dir("llama_gqa"), dir / "work" / "m", std::filesystem::copy_options::recursive);
  const auto r = run_cli_in(dir / "work", "generate m --prompt 'The quick brown fox' --max-new-tokens 2 --policy h2o "
                                          "--budget 50% --export out");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto s = read_json_file(dir / "work" / "out" / "session.json");
  const std::filesystem::path saved = s["model"].get<std::string>();
  EXPECT_TRUE(saved.is_absolute()) << saved;
  EXPECT_TRUE(std::filesystem::equivalent(saved, dir / "work" / "m")) << saved;
  const auto again = run_cli_in(dir.path(), "run work/out/session.json --quiet --export again");
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_TRUE(test::same_file(dir / "work" / "out" / "masks.npy", dir / "again" / "masks.npy"));
  EXPECT_EQ(read_json_file(dir / "again" / "session.json")["model"], s["model"]);
  // No MODEL: the bundled model's absolute path.
  const auto d = run_cli_in(dir.path(), "generate --prompt 'Once' --max-new-tokens 1 --export def");
  ASSERT_EQ(d.exit_code, 0) << d.output;
  const std::filesystem::path def = read_json_file(dir / "def" / "session.json")["model"].get<std::string>();
  EXPECT_TRUE(def.is_absolute()) << def;
  EXPECT_TRUE(std::filesystem::exists(def / "config.json")) << def;
}

// One new token has no timed decode step: no made-up "decode 0.0 tok/s".
TEST(Cli, GenerateReportsADecodeRateOnlyWhenOneWasTimed) {
  const std::string g =
      "generate " + test::model_arg("llama_gqa") + " --prompt 'The quick' --ignore-eos --max-new-tokens ";
  const auto one = test::run_cli(g + "1");
  ASSERT_EQ(one.exit_code, 0) << one.output;
  EXPECT_EQ(one.output.find("decode"), std::string::npos) << one.output;
  EXPECT_NE(one.output.find("; 1 new token; stop:"), std::string::npos) << one.output;
  const auto two = test::run_cli(g + "2");
  ASSERT_EQ(two.exit_code, 0) << two.output;
  EXPECT_NE(two.output.find("2 new tokens, decode "), std::string::npos) << two.output;
  EXPECT_EQ(two.output.find("decode 0.0 tok/s"), std::string::npos) << two.output;
}

// A recorder budget too small for every layer: one note naming the layers
// recorded; none when everything fits.
TEST(Cli, RunNotesLayersLeftOutOfTheRecording) {
  test::TempDir dir;
  nlohmann::json s = {{"format", "kvscope-session"},
                      {"version", 1},
                      {"model", test::model_dir("llama_gqa").string()},
                      {"prompt", "The quick brown fox"},
                      {"max_new_tokens", 1},
                      {"recording", {{"memory_mb", 1e-6}}}};
  test::write_file(dir / "s.json", s.dump());
  const auto r = test::run_cli("run " + test::quote((dir / "s.json").string()) + " --quiet --export " +
                               test::quote((dir / "out").string()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string note = "kvscope-cli: note: " + (dir / "s.json").string() +
                           ": recording.memory_mb (1e-06 MB) holds the attention of layer 0 of 2; the other layers "
                           "are replayed on demand\n";
  EXPECT_NE(r.output.find(note), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("note:"), r.output.rfind("note:")) << r.output;
  EXPECT_TRUE(std::filesystem::exists(dir / "out" / "attention.npy"));
  s["recording"]["memory_mb"] = 512;
  test::write_file(dir / "s.json", s.dump());
  const auto all = test::run_cli("run " + test::quote((dir / "s.json").string()) + " --quiet");
  ASSERT_EQ(all.exit_code, 0) << all.output;
  EXPECT_EQ(all.output.find("note:"), std::string::npos) << all.output;
}

TEST(Cli, ExportsDoNotDependOnTheThreadCount) {
  // The CPU backend cuts each product into bands of a fixed width and its
  // attention into KV heads; the pool only decides which thread runs which
  // piece, so 1, 2, 3 and 16 threads give the same bytes whatever kernels
  // OpenBLAS picked for this CPU (tools/test.sh runs this test under each
  // OPENBLAS_CORETYPE the CPU can run). The default model is large enough
  // for every product to be cut; the prefill is a matrix product, the steps
  // matrix-vector products, and Keyformer's scores read both.
  test::TempDir dir;
  const std::string cmd = "generate " + test::quote((std::filesystem::path(KVSCOPE_SOURCE_DIR) / "assets" / "models" / "kvscope-tiny").string()) +
                          " --prompt 'Once upon a time there was a little fox who' --max-new-tokens 12 --policy "
                          "keyformer --budget 60% --export ";
  const char* counts[] = {"1", "2", "3", "16"};
  for (const char* threads : counts) {
    ::setenv("KVSCOPE_THREADS", threads, 1);
    const auto r = test::run_cli(cmd + test::quote((dir / threads).string()));
    ::unsetenv("KVSCOPE_THREADS");
    ASSERT_EQ(r.exit_code, 0) << r.output;
  }
  for (const char* threads : counts)
    for (const char* f : {"masks.npy", "attention.npy", "scores.npy", "metrics.csv", "events.csv", "tokens.json"})
      EXPECT_TRUE(test::same_file(dir / "1" / f, dir / threads / f)) << threads << " threads";
}

TEST(Cli, PolicyBenchRecordsTheLayersAsked) {
  // Timings are not asserted (bench/NOTES.md has them); what was run is.
  const auto one = test::run_cli("bench --policy h2o --budget 50% --prompt-tokens 16 --decode-tokens 2 --repeats 1 "
                                 "--record-layers 1 --json");
  ASSERT_EQ(one.exit_code, 0) << one.output;
  const auto j = nlohmann::json::parse(one.output);
  EXPECT_EQ(j["recorded_layers"], nlohmann::json::array({1}));
  EXPECT_EQ(j["policy"], "h2o");
  for (const char* key : {"backend_decode_ms_per_token", "policy_recorded_decode_ms_per_token",
                          "policy_metrics_decode_ms_per_token"})
    EXPECT_GT(j[key].get<double>(), 0.0) << key;
  EXPECT_LT(j["kv_bytes_policy"].get<int64_t>(), j["kv_bytes_full"].get<int64_t>());
  const auto all = test::run_cli("bench --policy window --budget 50% --prompt-tokens 16 --decode-tokens 2 --repeats 1 --json");
  ASSERT_EQ(all.exit_code, 0) << all.output;
  EXPECT_EQ(nlohmann::json::parse(all.output)["recorded_layers"].size(), 4u);  // the bundled model's layers
  const auto bad = test::run_cli("bench --policy h2o --decode-tokens 2 --repeats 1 --record-layers 99");
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.output.find("--record-layers: unknown layer 99"), std::string::npos) << bad.output;
}

TEST(Cli, PolicyBenchRunsOnAShapesRandomWeights) {
  // What bench/gpu/on_device.sh runs for each shape on the GPU, here on the
  // CPU with the smallest real shape and a few tokens: one layer recorded,
  // no metrics run.
  const auto r = test::run_cli("bench --shape pythia-160m --policy h2o --budget 50% --prompt-tokens 8 --decode-tokens 2 "
                               "--repeats 1 --record-layers 0 --no-metrics --json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto j = nlohmann::json::parse(r.output);
  EXPECT_EQ(j["shape"], "pythia-160m");
  EXPECT_FALSE(j.contains("model"));
  EXPECT_EQ(j["device"].get<std::string>().substr(0, 3), "cpu");
  EXPECT_EQ(j["policy"], "h2o");
  EXPECT_EQ(j["recorded_layers"], nlohmann::json::array({0}));
  for (const char* key : {"backend_decode_ms_per_token", "full_recorded_decode_ms_per_token",
                          "policy_recorded_decode_ms_per_token"})
    EXPECT_GT(j[key].get<double>(), 0.0) << key;
  EXPECT_FALSE(j.contains("policy_metrics_decode_ms_per_token"));  // --no-metrics
  EXPECT_LT(j["kv_bytes_policy"].get<int64_t>(), j["kv_bytes_full"].get<int64_t>());
  const auto both = test::run_cli("bench " + test::model_arg("gpt2") + " --shape pythia-160m --policy h2o");
  EXPECT_EQ(both.exit_code, 1);
  EXPECT_NE(both.output.find("give either a MODEL (directory or .gguf file) or --shape NAME"), std::string::npos)
      << both.output;
}

TEST(Cli, BenchFloorCountsTheWeightsAndTheKvCache) {
  // The floor of a decode step: the weights and the KV cache (fp32 on the
  // CPU) at the steps' mean length, read once at the measured bandwidth;
  // the weights-only roofline stays beside it.
  const auto r =
      test::run_cli("bench " + test::model_arg("llama_gqa") + " --prompt-tokens 20 --decode-tokens 5 --json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto j = nlohmann::json::parse(r.output);
  const auto info = test::run_cli("inspect " + test::model_arg("llama_gqa") + " --json");
  ASSERT_EQ(info.exit_code, 0) << info.output;
  const double kv_row = nlohmann::json::parse(info.output)["kv_bytes_per_token_fp32"].get<double>();
  ASSERT_GT(kv_row, 0.0);
  EXPECT_DOUBLE_EQ(j["kv_bytes_read_per_token"].get<double>(), kv_row * (20 + 3.0));  // rows 21..25
  const double bw = j["bandwidth_gbs"].get<double>(), w = j["weight_bytes_per_token"].get<double>();
  ASSERT_GT(bw, 0.0);
  EXPECT_NEAR(j["floor_tokens_per_s"].get<double>(), bw * 1e9 / (w + kv_row * 23.0),
              1e-9 * j["floor_tokens_per_s"].get<double>());
  EXPECT_NEAR(j["roofline_tokens_per_s"].get<double>(), bw * 1e9 / w, 1e-9 * j["roofline_tokens_per_s"].get<double>());
  EXPECT_NEAR(j["decode_fraction_of_floor"].get<double>(),
              j["decode_tokens_per_s"].get<double>() / j["floor_tokens_per_s"].get<double>(), 1e-12);
  // The CPU it ran on, as `cpu` names it.
  const auto cpu = test::run_cli("cpu --json");
  ASSERT_EQ(cpu.exit_code, 0) << cpu.output;
  const std::string name = nlohmann::json::parse(cpu.output)["model_name"].get<std::string>();
  EXPECT_EQ(j["cpu"].get<std::string>().rfind(name, 0), 0u) << j["cpu"];
}

TEST(Cli, SweepWritesCsvAndPlots) {
  test::TempDir dir;
  nlohmann::json s = {{"format", "kvscope-session"},
                      {"version", 1},
                      {"model", test::model_dir("gpt2").string()},
                      {"prompt", "The quick brown fox jumps over the lazy dog. Pack my box"},
                      {"continuation", " with five dozen liquor jugs!"},
                      {"recording", {{"layers", {0}}}}};
  test::write_file(dir / "s.json", s.dump());
  const auto r = test::run_cli("sweep " + test::quote((dir / "s.json").string()) +
                               " --policies window,h2o --budgets 25%,50%,75% --out " + test::quote((dir / "out").string()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string csv = test::read_file(dir / "out" / "sweep.csv");
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 7);  // header + 2 x 3
  EXPECT_NE(csv.find("h2o,50%"), std::string::npos);
  EXPECT_TRUE(std::filesystem::exists(dir / "out" / "sweep_kl.png"));
  EXPECT_TRUE(std::filesystem::exists(dir / "out" / "sweep_nll.svg"));
  // Standard errors are columns of their own (a session sweep's are over
  // its decode steps: Cli.SessionSweepScoresTheFullCachesContinuation).
  const std::string header = csv.substr(0, csv.find('\n'));
  EXPECT_NE(header.find(",kl_se,"), std::string::npos) << header;
  EXPECT_NE(csv.find("h2o,50%"), std::string::npos);
  const std::string items = test::read_file(dir / "out" / "sweep_items.csv");
  EXPECT_EQ(items.substr(0, items.find('\n')),
            "item,policy,budget,seed,attention_recall,ideal_similarity,kl,kv_bytes,nll,top1_agreement");
  EXPECT_EQ(std::count(items.begin(), items.end(), '\n'), 7);  // header + 2 policies x 3 budgets x 1 item
  // What made it: beside the CSV (which stays one header row) and in each plot.
  const nlohmann::json side = read_json_file(dir / "out" / "sweep.provenance.json");
  const nlohmann::json& p = side.at("provenance");
  // The command that computes the numbers: where they went (--out) is not part of it (docs/exports.md).
  EXPECT_EQ(p.at("command_line"),
            "kvscope-cli sweep " + (dir / "s.json").string() + " --policies window,h2o --budgets 25%,50%,75%");
  EXPECT_EQ(p.at("model").at("name"), "gpt2");
  EXPECT_EQ(p.at("policy").at("sweep").at("policies"), nlohmann::json({"window", "h2o"}));
  EXPECT_EQ(p.at("device").at("backend"), "cpu");
  EXPECT_EQ(side.at("files").front(), "sweep.csv");
  EXPECT_NE(std::find(side.at("files").begin(), side.at("files").end(), "sweep_kl.png"), side.at("files").end());
  const auto chunks = png_text_chunks(test::read_file(dir / "out" / "sweep_kl.png"));
  ASSERT_TRUE(chunks.count(kPngProvenanceKey));
  EXPECT_EQ(nlohmann::json::parse(chunks.at(kPngProvenanceKey)), p);
  EXPECT_EQ(nlohmann::json::parse(svg_provenance(test::read_file(dir / "out" / "sweep_nll.svg"))), p);
  // --heatmaps: every cell's picture, in the formats asked for.
  const auto h = test::run_cli("sweep " + test::quote((dir / "s.json").string()) +
                               " --policies window,h2o --budgets 50% --heatmaps --format pdf --out " +
                               test::quote((dir / "h").string()));
  ASSERT_EQ(h.exit_code, 0) << h.output;
  EXPECT_TRUE(std::filesystem::exists(dir / "h" / "heatmap_window_50pct.pdf"));
  EXPECT_TRUE(std::filesystem::exists(dir / "h" / "heatmap_h2o_50pct.pdf"));
  EXPECT_TRUE(std::filesystem::exists(dir / "h" / "sweep_kl.pdf"));
  EXPECT_FALSE(std::filesystem::exists(dir / "h" / "sweep_kl.png"));
}

// A dataset sweep: each metric's standard error over the items and the item
// count in sweep.csv, for the plots' error bars.
TEST(Cli, DatasetSweepHasStandardErrors) {
  test::TempDir dir;
  nlohmann::json s = {{"format", "kvscope-session"}, {"version", 1}, {"model", test::model_dir("gpt2").string()}, {"prompt", "x"}};
  test::write_file(dir / "s.json", s.dump());
  test::write_file(dir / "d.jsonl", "{\"prompt\": \"The quick brown fox jumps over the\", \"answer\": \" lazy dog\"}\n"
                                    "{\"prompt\": \"Pack my box with five dozen\", \"answer\": \" liquor jugs\"}\n"
                                    "{\"prompt\": \"How vexingly quick daft zebras\", \"answer\": \" jump\"}\n");
  const auto r = test::run_cli("sweep " + test::quote((dir / "s.json").string()) + " --dataset " +
                               test::quote((dir / "d.jsonl").string()) +
                               " --policies full,h2o --budgets 50%,80% --out " + test::quote((dir / "out").string()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string csv = test::read_file(dir / "out" / "sweep.csv");
  const std::string header = csv.substr(0, csv.find('\n'));
  EXPECT_NE(header.find("accuracy_se"), std::string::npos) << header;
  EXPECT_NE(header.find("answer_nll_se"), std::string::npos) << header;
  EXPECT_NE(header.find(",n,seeds,"), std::string::npos) << header;
  EXPECT_NE(header.find("accuracy_diff_lo"), std::string::npos) << header;
  EXPECT_TRUE(std::filesystem::exists(dir / "out" / "sweep_accuracy.png"));
  EXPECT_TRUE(std::filesystem::exists(dir / "out" / "sweep_accuracy.svg"));
}

// A CSV without quoted fields, as rows of fields.
std::vector<std::vector<std::string>> read_plain_csv(const std::filesystem::path& p) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream in(test::read_file(p));
  for (std::string line; std::getline(in, line);) {
    rows.emplace_back();
    std::istringstream f(line);
    for (std::string field; std::getline(f, field, ',');) rows.back().push_back(field);
  }
  return rows;
}

// --seeds: random runs once per seed, h2o once, full once for every
// budget; one row per item x policy x budget x seed in sweep_items.csv,
// and sweep.csv's mean is over the items of each item's seed mean.
TEST(Cli, SweepWritesEveryItemAndSeed) {
  test::TempDir dir;
  nlohmann::json s = {
      {"format", "kvscope-session"}, {"version", 1}, {"model", test::model_dir("gpt2").string()}, {"prompt", "x"}};
  test::write_file(dir / "s.json", s.dump());
  test::write_file(dir / "d.jsonl",
                   "{\"prompt\": \"The quick brown fox jumps over the\", \"answer\": \" lazy dog\"}\n"
                   "{\"prompt\": \"Pack my box with five dozen\", \"answer\": \" liquor jugs\"}\n"
                   "{\"prompt\": \"How vexingly quick daft zebras\", \"answer\": \" jump\"}\n");
  const auto r = test::run_cli(
      "sweep " + test::quote((dir / "s.json").string()) + " --dataset " + test::quote((dir / "d.jsonl").string()) +
      " --seeds 3" + " --policies full,h2o,random --budgets 40%,80% --out " + test::quote((dir / "out").string()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto items = read_plain_csv(dir / "out" / "sweep_items.csv");
  ASSERT_FALSE(items.empty());
  EXPECT_EQ(items[0][0], "item");
  EXPECT_EQ(items[0][3], "seed");
  // 3 items x (full 1 seed + h2o 1 seed + random 3 seeds) x 2 budgets.
  ASSERT_EQ(items.size(), 1u + 3 * (1 + 1 + 3) * 2);
  std::map<std::string, std::set<std::string>> seeds;
  std::map<std::string, std::map<std::string, std::string>> full_nll;  // budget -> item -> answer_nll
  const std::size_t nll_col = std::find(items[0].begin(), items[0].end(), "answer_nll") - items[0].begin();
  ASSERT_LT(nll_col, items[0].size());
  for (std::size_t i = 1; i < items.size(); ++i) {
    seeds[items[i][1]].insert(items[i][3]);
    if (items[i][1] == "full") full_nll[items[i][2]][items[i][0]] = items[i][nll_col];
  }
  EXPECT_EQ(seeds["random"], (std::set<std::string>{"0", "1", "2"}));
  EXPECT_EQ(seeds["h2o"], (std::set<std::string>{"0"}));
  EXPECT_EQ(full_nll["40%"], full_nll["80%"]) << "full ran once; its result is every budget's";
  // sweep.csv: random's answer NLL at 40% is the mean over items of the seed means.
  const auto sum = read_plain_csv(dir / "out" / "sweep.csv");
  auto col = [&](const std::string& name) {
    return static_cast<std::size_t>(std::find(sum[0].begin(), sum[0].end(), name) - sum[0].begin());
  };
  std::map<std::string, double> per_item;
  for (std::size_t i = 1; i < items.size(); ++i)
    if (items[i][1] == "random" && items[i][2] == "40%") per_item[items[i][0]] += std::stod(items[i][nll_col]) / 3;
  double mean = 0;
  for (const auto& [item, v] : per_item) mean += v / 3;
  bool found = false;
  for (std::size_t i = 1; i < sum.size(); ++i)
    if (sum[i][0] == "random" && sum[i][1] == "40%") {
      found = true;
      EXPECT_NEAR(std::stod(sum[i][col("answer_nll")]), mean, 1e-6 * std::max(1.0, mean));
      EXPECT_EQ(sum[i][col("n")], "3");
      EXPECT_EQ(sum[i][col("seeds")], "3");
      EXPECT_EQ(sum[i][col("answer_nll_vs")], "h2o");
      const double lo = std::stod(sum[i][col("answer_nll_diff_lo")]), hi = std::stod(sum[i][col("answer_nll_diff_hi")]);
      const double d = std::stod(sum[i][col("answer_nll_diff")]);
      EXPECT_LE(lo, d);
      EXPECT_GE(hi, d);
    }
  EXPECT_TRUE(found);
  // Reruns give the same bytes (the bootstrap's draws are seeded).
  const auto again = test::run_cli(
      "sweep " + test::quote((dir / "s.json").string()) + " --dataset " + test::quote((dir / "d.jsonl").string()) +
      " --seeds 3" + " --policies full,h2o,random --budgets 40%,80% --out " + test::quote((dir / "again").string()));
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_EQ(test::read_file(dir / "out" / "sweep.csv"), test::read_file(dir / "again" / "sweep.csv"));
}

// A session sweep scores every cell on the full cache's continuation,
// teacher forced: a window cell's NLL equals that of `run` with the full
// run's tokens as the session's continuation_ids, averaged here from metrics.csv
// over the decode steps (step 0 left out).
TEST(Cli, SessionSweepScoresTheFullCachesContinuation) {
  test::TempDir dir;
  nlohmann::json s = {{"format", "kvscope-session"},
                      {"version", 1},
                      {"model", test::model_dir("gpt2").string()},
                      {"prompt", "The quick brown fox jumps over the lazy dog. Pack my box with five dozen"},
                      {"max_new_tokens", 8},
                      {"stop_at_eos", false}};
  test::write_file(dir / "s.json", s.dump());
  const auto full = test::run_cli("run " + test::quote((dir / "s.json").string()) + " --export " +
                                  test::quote((dir / "full").string()));
  ASSERT_EQ(full.exit_code, 0) << full.output;
  const auto toks = nlohmann::json::parse(test::read_file(dir / "full" / "tokens.json"));
  const int prompt_len = toks["prompt_length"].get<int>();
  const std::vector<int> ids = toks["ids"].get<std::vector<int>>();
  s["continuation_ids"] = std::vector<int>(ids.begin() + prompt_len, ids.end());
  test::write_file(dir / "forced.json", s.dump());
  const auto forced = test::run_cli("run " + test::quote((dir / "forced.json").string()) +
                                    " --policy window --budget 50% --export " + test::quote((dir / "forced").string()));
  ASSERT_EQ(forced.exit_code, 0) << forced.output;
  const auto metrics = read_plain_csv(dir / "forced" / "metrics.csv");
  const auto mcol = [&](const std::string& name) {
    return static_cast<std::size_t>(std::find(metrics[0].begin(), metrics[0].end(), name) - metrics[0].begin());
  };
  double nll = 0, kl = 0;
  int n_nll = 0, n_kl = 0;
  for (std::size_t r = 1; r < metrics.size(); ++r) {
    if (std::stoi(metrics[r][mcol("step")]) == 0) continue;
    if (metrics[r][mcol("nll")] != "nan") nll += std::stod(metrics[r][mcol("nll")]), ++n_nll;
    kl += std::stod(metrics[r][mcol("kl")]), ++n_kl;
  }
  ASSERT_EQ(n_kl, 8);
  const auto sw = test::run_cli("sweep " + test::quote((dir / "s.json").string()) +
                                " --policies window --budgets 50% --out " + test::quote((dir / "sweep").string()));
  ASSERT_EQ(sw.exit_code, 0) << sw.output;
  const auto items = read_plain_csv(dir / "sweep" / "sweep_items.csv");
  ASSERT_EQ(items.size(), 2u);
  const auto icol = [&](const std::string& name) {
    return static_cast<std::size_t>(std::find(items[0].begin(), items[0].end(), name) - items[0].begin());
  };
  EXPECT_NEAR(std::stod(items[1][icol("nll")]), nll / n_nll, 1e-6);
  EXPECT_NEAR(std::stod(items[1][icol("kl")]), kl / n_kl, 1e-6);
  // Its one text's statistics are over the decode steps: sweep_steps.csv
  // holds each step's values (those of metrics.csv), and sweep.csv's n, mean
  // and standard error are over them (computed here by hand).
  const auto steps = read_plain_csv(dir / "sweep" / "sweep_steps.csv");
  ASSERT_EQ(steps.size(), 1u + 8);
  EXPECT_EQ(steps[0][0], "step");
  const auto scol = [&](const std::string& name) {
    return static_cast<std::size_t>(std::find(steps[0].begin(), steps[0].end(), name) - steps[0].begin());
  };
  std::vector<double> kls;
  for (std::size_t r = 1; r < metrics.size(); ++r)
    if (std::stoi(metrics[r][mcol("step")]) != 0) kls.push_back(std::stod(metrics[r][mcol("kl")]));
  for (std::size_t r = 1; r < steps.size(); ++r) {
    EXPECT_EQ(steps[r][0], std::to_string(r));
    EXPECT_NEAR(std::stod(steps[r][scol("kl")]), kls[r - 1], 1e-6 * std::max(1.0, kls[r - 1]));
  }
  double sq = 0;
  for (double v : kls) sq += (v - kl / n_kl) * (v - kl / n_kl);
  const double se = std::sqrt(sq / (kls.size() - 1)) / std::sqrt(double(kls.size()));
  const auto sum = read_plain_csv(dir / "sweep" / "sweep.csv");
  ASSERT_EQ(sum.size(), 2u);
  const auto ccol = [&](const std::string& name) {
    return static_cast<std::size_t>(std::find(sum[0].begin(), sum[0].end(), name) - sum[0].begin());
  };
  EXPECT_EQ(sum[1][ccol("n")], "8");
  EXPECT_NEAR(std::stod(sum[1][ccol("kl")]), kl / n_kl, 1e-6);
  EXPECT_NEAR(std::stod(sum[1][ccol("kl_se")]), se, 1e-6 * std::max(1.0, se));
  EXPECT_GT(se, 0.0);
  // With seeds, a step's value is the mean of its seeds'.
  const auto seeded =
      test::run_cli("sweep " + test::quote((dir / "s.json").string()) +
                    " --policies random --budgets 50% --seeds 2 --out " + test::quote((dir / "seeded").string()));
  ASSERT_EQ(seeded.exit_code, 0) << seeded.output;
  EXPECT_EQ(read_plain_csv(dir / "seeded" / "sweep_steps.csv").size(), 1u + 8 * 2);
  const auto ssum = read_plain_csv(dir / "seeded" / "sweep.csv");
  EXPECT_EQ(ssum[1][ccol("n")], "8");
  EXPECT_EQ(ssum[1][ccol("seeds")], "2");
  EXPECT_NE(ssum[1][ccol("kl_se")], "nan");
}

TEST(Cli, InterruptedSweepResumesToTheSameResult) {
  // Ctrl-C after the first cells: they stay on disk and --resume finishes
  // the sweep to exactly the numbers of an uninterrupted one.
  test::TempDir dir;
  const auto assets = (test::data_dir() / ".." / ".." / "assets").lexically_normal();
  const std::string session = test::quote((assets / "sessions" / "story_h2o.json").string());
  const std::string data = test::quote((assets / "eval" / "story.jsonl").string());
  const std::string cmd = std::string(KVSCOPE_CLI_PATH) + " sweep " + session + " --dataset " + data +
                          " --limit 6 --policies h2o,tova,window --budgets 20%,50%,80% --format svg --out ";
  const std::string cells = test::quote((dir / "a" / "cells").string());
  // Interrupt once two cells are saved: the sweep pauses there (io/interrupt.h)
  // and says so, so the signal never races the sweep's own pace.
  const std::string err = test::quote((dir / "err.txt").string());
  const auto r = test::run_shell(": > " + err + "; KVSCOPE_TEST_PAUSE_AT='second cell saved' " + cmd +
                                 test::quote((dir / "a").string()) + " 2>" + err +
                                 " & pid=$!; "
                                 "for i in $(seq 1200); do grep -q 'paused at second cell saved' " +
                                 err + " && break; sleep 0.05; done; kill -INT $pid; wait $pid; echo rc=$?");
  ASSERT_NE(r.output.find("rc=130"), std::string::npos) << r.output << test::read_file(dir / "err.txt");
  EXPECT_NE(test::read_file(dir / "err.txt").find("interrupted: 2 of 9 cells are saved in"), std::string::npos)
      << test::read_file(dir / "err.txt");
  EXPECT_NE(test::read_file(dir / "err.txt").find("run the same command with --resume"), std::string::npos);
  EXPECT_EQ(test::read_file(dir / "err.txt").find(" done in "), std::string::npos) << "a \"N done\" line after Ctrl-C";
  EXPECT_FALSE(std::filesystem::exists(dir / "a" / "sweep.csv"));
  // Without --resume the folder is not silently reused.
  const auto again = test::run_shell(cmd + test::quote((dir / "a").string()) + " 2>&1");
  EXPECT_NE(again.exit_code, 0);
  EXPECT_NE(again.output.find("add --resume"), std::string::npos) << again.output;
  const auto resumed = test::run_shell(cmd + test::quote((dir / "a").string()) + " --resume 2>&1");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  const auto whole = test::run_shell(cmd + test::quote((dir / "b").string()) + " 2>&1");
  ASSERT_EQ(whole.exit_code, 0) << whole.output;
  EXPECT_EQ(test::read_file(dir / "a" / "sweep.csv"), test::read_file(dir / "b" / "sweep.csv"));
  EXPECT_FALSE(std::filesystem::exists(dir / "a" / "cells")) << "a finished sweep keeps no checkpoints";
}

}  // namespace
}  // namespace kvscope

namespace kvscope {
namespace {

// run's flags override the session file's settings only when typed, so its
// --help shows no default (which the run would not use) and says so.
TEST(CliHelp, RunShowsNoDefaultsThatDoNotApply) {
  const auto run = test::run_cli("run --help");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  for (const char* flag :
       {"--policy", "--budget", "--tau-init", "--alpha", "--sharing", "--weights", "--granularity"}) {
    const std::size_t at = run.output.find(std::string("  ") + flag + " ");
    ASSERT_NE(at, std::string::npos) << flag << "\n" << run.output;
    const std::string line = run.output.substr(at, run.output.find('\n', at) - at);
    const std::string head = line.substr(0, line.find("  ", 2 + std::string(flag).size()));
    EXPECT_EQ(head.find('='), std::string::npos) << "a default shown: " << line;
    EXPECT_NE(run.output.find("Over the file's setting.", at), std::string::npos) << flag;
  }
  // generate's defaults do apply, and are shown.
  const auto gen = test::run_cli("generate --help");
  EXPECT_NE(gen.output.find("--policy TEXT=full"), std::string::npos) << gen.output;
}

TEST(CliHelp, BenchTakesAGgufFile) {
  const auto r = test::run_cli("bench --help");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find(".gguf file"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace kvscope
