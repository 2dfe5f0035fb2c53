// What docs/cli.md promises about machines ("Same numbers on every
// machine"): kvscope's own vector paths give the same bits, and under every
// OpenBLAS kernel set the CPU can run, masks and tokens are the same while
// the floats agree to rounding. One machine checks every path and kernel
// set it has; tools/test.sh also runs the whole suite under each kernel set.
#include <gtest/gtest.h>

#include <cstdlib>
#include <sstream>

#include <nlohmann/json.hpp>

#include "file_compare.h"
#include "io/npy.h"
#include "test_util.h"

namespace kvscope {
namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) out.push_back(line);
  return out;
}

// Runs the CLI with one environment variable set (the others as they are).
test::CommandResult run_cli_with(const char* var, const std::string& value, const std::string& args) {
  ::setenv(var, value.c_str(), 1);
  auto r = test::run_cli(args);
  ::unsetenv(var);
  return r;
}

std::string tiny_model() {
  return test::quote((std::filesystem::path(KVSCOPE_SOURCE_DIR) / "assets" / "models" / "kvscope-tiny").string());
}

// Runs that exercise the vector code (Keyformer's noisy softmax, the random
// policy's batched draws, the recorder's scatter of a sparse cache) and the
// products in both shapes (the prompt's matrix products, the steps'
// matrix-vector ones).
const std::vector<std::pair<std::string, std::string>> kRuns = {
    {"keyformer", "--policy keyformer --budget 50%"},
    {"h2o", "--policy h2o --budget 40% --temperature 0.7 --seed 5"},
    {"random", "--policy random --budget 60%"},
    {"tova_streaming", "--policy tova --budget 30% --prefill streaming"},
};

std::string generate_cmd(const std::string& flags, const std::filesystem::path& out) {
  static const std::string prompt =
      test::read_file(std::filesystem::path(KVSCOPE_SOURCE_DIR) / "assets" / "prompts" / "story.txt");
  return "generate " + tiny_model() + " --prompt " + test::quote(prompt) + " --max-new-tokens 16 " + flags +
         " --export " + test::quote(out.string());
}

// `cpu` names what set the thread count: the flag, the variable, or the
// cores the process may use.
TEST(Machines, CpuSaysWhatSetTheThreads) {
  auto source = [](const std::string& prefix, const std::string& flags) {
    const auto r = test::run_shell(prefix + " " + KVSCOPE_CLI_PATH + " cpu --json" + flags + " 2>/dev/null");
    EXPECT_EQ(r.exit_code, 0) << r.output;
    const auto j = nlohmann::json::parse(r.output);
    return std::make_pair(j.at("threads").get<int>(), j.at("threads_source").get<std::string>());
  };
  EXPECT_EQ(source("env -u KVSCOPE_THREADS", "").second, "the cores this process may use");
  EXPECT_EQ(source("env KVSCOPE_THREADS=3", ""), std::make_pair(3, std::string("KVSCOPE_THREADS")));
  EXPECT_EQ(source("env KVSCOPE_THREADS=3", " --threads 1"), std::make_pair(1, std::string("--threads")));
  const auto text = test::run_shell(std::string("env -u KVSCOPE_THREADS ") + KVSCOPE_CLI_PATH + " --threads 2 cpu");
  EXPECT_NE(text.output.find("threads          2 (--threads)"), std::string::npos) << text.output;
}

TEST(Machines, EverySimdPathGivesTheSameBytes) {
  const auto r = test::run_cli("cpu --json", false);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto info = nlohmann::json::parse(r.output);
  const std::string widest = info["cpu_simd_path"];
  std::vector<std::string> paths = {"baseline"};
  if (widest != "baseline") paths.push_back("avx2");
  if (widest == "avx512") paths.push_back("avx512");
  std::printf("vector paths on this CPU: %zu (widest %s)\n", paths.size(), widest.c_str());
  if (widest != "avx512")
    std::printf("(the avx512 path is checked on CPUs with AVX-512; this one has %s)\n", widest.c_str());
  test::TempDir dir;
  for (const auto& [name, flags] : kRuns) {
    for (const auto& p : paths) {
      const auto g = run_cli_with("KVSCOPE_SIMD", p, generate_cmd(flags, dir / (name + "_" + p)));
      ASSERT_EQ(g.exit_code, 0) << p << ": " << g.output;
    }
    for (const auto& p : paths)
      for (const char* f : {"masks.npy", "attention.npy", "scores.npy", "events.csv", "metrics.csv", "tokens.json"})
        EXPECT_TRUE(test::same_file(dir / (name + "_baseline") / f, dir / (name + "_" + p) / f)) << name << " on " << p;
  }
}

// events.csv without its statistic column (a float).
std::vector<std::string> events_without_statistic(const std::filesystem::path& csv) {
  std::vector<std::string> out;
  for (const auto& line : lines_of(test::read_file(csv))) {
    std::vector<std::string> cols;
    std::istringstream in(line);
    for (std::string c; std::getline(in, c, ',');) cols.push_back(c);
    if (cols.size() == 7) cols.erase(cols.begin() + 5);
    std::string joined;
    for (const auto& c : cols) joined += c + ",";
    out.push_back(joined);
  }
  return out;
}

TEST(Machines, MasksAndTokensAreTheSameUnderEveryOpenblasKernelSet) {
  const auto r = test::run_cli("cpu --openblas-core-types", false);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto types = lines_of(r.output);
  ASSERT_FALSE(types.empty()) << "no OpenBLAS kernel set listed for this CPU";
  std::string listed;
  for (const auto& t : types) listed += " " + t;
  std::printf("OpenBLAS kernel sets on this CPU:%s\n", listed.c_str());
  test::TempDir dir;
  for (const auto& [name, flags] : kRuns) {
    for (const auto& t : types) {
      // The kernels really are the ones asked for.
      const auto c = run_cli_with("OPENBLAS_CORETYPE", t, "cpu --json");
      ASSERT_EQ(c.exit_code, 0) << c.output;
      const auto info = nlohmann::json::parse(c.output.substr(c.output.find('{')));
      ASSERT_EQ(info["openblas_core"], t);
      const auto g = run_cli_with("OPENBLAS_CORETYPE", t, generate_cmd(flags, dir / (name + "_" + t)));
      ASSERT_EQ(g.exit_code, 0) << t << ": " << g.output;
    }
    const auto first = dir / (name + "_" + types[0]);
    for (const auto& t : types) {
      const auto other = dir / (name + "_" + t);
      EXPECT_TRUE(test::same_file(first / "masks.npy", other / "masks.npy")) << name << " under " << t;
      EXPECT_TRUE(test::same_file(first / "tokens.json", other / "tokens.json")) << name << " under " << t;
      EXPECT_EQ(events_without_statistic(first / "events.csv"), events_without_statistic(other / "events.csv"))
          << name << " under " << t;
      for (const char* f : {"attention.npy", "scores.npy"}) {
        const auto a = read_npy(first / f).as_f32(), b = read_npy(other / f).as_f32();
        ASSERT_EQ(a.size(), b.size()) << f;
        // NaN marks "no statistic" in both or neither.
        for (std::size_t i = 0; i < a.size(); ++i)
          ASSERT_EQ(std::isnan(a[i]), std::isnan(b[i])) << f << " element " << i << " under " << t;
        std::vector<float> fa, fb;
        for (std::size_t i = 0; i < a.size(); ++i)
          if (!std::isnan(a[i])) fa.push_back(a[i]), fb.push_back(b[i]);
        // Rounding carried through four layers and sixteen steps: about 1e-5
        // of the largest value measured on a Zen 3 (Prescott vs Haswell).
        const double rel = test::max_rel_error(fb, fa);
        EXPECT_LE(rel, 1e-4) << name << " " << f << " under " << t;
        if (t != types[0]) std::printf("%s %s: %s vs %s differ by %.2g of the largest value\n", name.c_str(), f,
                                       t.c_str(), types[0].c_str(), rel);
      }
    }
  }
}

}  // namespace
}  // namespace kvscope
