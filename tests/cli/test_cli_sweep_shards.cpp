// sweep --shard i/n and sweep-merge: the shards of a sweep, merged, write
// the files one sweep writes on one machine, byte for byte; a shard stopped
// by Ctrl-C goes on with --resume; shards that do not make one sweep are
// refused by name before anything is written.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <string>

#include "test_util.h"

namespace kvscope {
namespace {

namespace fs = std::filesystem;

fs::path assets() { return (test::data_dir() / ".." / ".." / "assets").lexically_normal(); }

// The story set's first 6 items, four policies (random with two seeds, the
// full cache once per item), two budgets, PNG and SVG plots.
std::string sweep_args(bool dataset = true, int limit = 6) {
  std::string s = test::quote((assets() / "sessions" / "story_h2o.json").string()) +
                  " --policies h2o,tova,random,full --budgets 20%,50% --seeds 2 --format png,svg --dpi 60";
  if (dataset)
    s +=
        " --dataset " + test::quote((assets() / "eval" / "story.jsonl").string()) + " --limit " + std::to_string(limit);
  return s;
}

std::set<std::string> files_in(const fs::path& dir) {
  std::set<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.insert(e.path().filename().string());
  return out;
}

void expect_same_files(const fs::path& want, const fs::path& got) {
  ASSERT_EQ(files_in(want), files_in(got));
  for (const auto& name : files_in(want))
    EXPECT_TRUE(test::read_file(want / name) == test::read_file(got / name)) << name << " differs";
}

void run_ok(const std::string& args) {
  const auto r = test::run_cli(args);
  ASSERT_EQ(r.exit_code, 0) << args << "\n" << r.output;
}

TEST(SweepShards, MergedShardsEqualTheOneMachineSweepByteForByte) {
  test::TempDir dir;
  for (const bool dataset : {true, false}) {
    SCOPED_TRACE(dataset ? "dataset sweep" : "session sweep");
    const fs::path base = dir / (dataset ? "d" : "s");
    run_ok("sweep " + sweep_args(dataset) + " --out " + test::quote((base / "one").string()));
    for (const int n : {2, 3}) {
      std::string shards;
      for (int i = 0; i < n; ++i) {
        const fs::path out = base / ("shard" + std::to_string(n) + "_" + std::to_string(i));
        run_ok("sweep " + sweep_args(dataset) + " --shard " + std::to_string(i) + "/" + std::to_string(n) + " --out " +
               test::quote(out.string()));
        EXPECT_TRUE(fs::exists(out / "sweep_shard.json"));
        EXPECT_FALSE(fs::exists(out / "sweep.csv")) << "a shard writes no summary of its own";
        EXPECT_FALSE(fs::exists(out / "cells")) << "a finished shard keeps no checkpoints";
        shards += " " + test::quote(out.string());
      }
      const fs::path merged = base / ("merged" + std::to_string(n));
      run_ok("sweep-merge " + test::quote(merged.string()) + shards);
      expect_same_files(base / "one", merged);
    }
  }
}

// The thread count changes no number, so shards run with different counts
// (machines of different sizes) are one sweep: they merge, and the
// summary's numbers are the one-machine sweep's.
TEST(SweepShards, ShardsRunWithOtherThreadCountsMerge) {
  test::TempDir dir;
  run_ok("sweep " + sweep_args(false) + " --out " + test::quote((dir / "one").string()));
  run_ok("--threads 1 sweep " + sweep_args(false) + " --shard 0/2 --out " + test::quote((dir / "s0").string()));
  run_ok("sweep " + sweep_args(false) + " --shard 1/2 --threads 2 --out " + test::quote((dir / "s1").string()));
  run_ok("sweep-merge " + test::quote((dir / "merged").string()) + " " + test::quote((dir / "s0").string()) + " " +
         test::quote((dir / "s1").string()));
  EXPECT_EQ(test::read_file(dir / "one" / "sweep.csv"), test::read_file(dir / "merged" / "sweep.csv"));
}

TEST(SweepShards, MergeRefusesShardsThatAreNotOneSweep) {
  test::TempDir dir;
  auto shard = [&](const std::string& name, const std::string& spec, int limit = 6) {
    run_ok("sweep " + sweep_args(true, limit) + " --shard " + spec + " --out " + test::quote((dir / name).string()));
    return " " + test::quote((dir / name).string());
  };
  const std::string s0 = shard("s0", "0/3"), s1 = shard("s1", "1/3"), s2 = shard("s2", "2/3");
  const std::string out = test::quote((dir / "out").string());
  // A missing shard: named, with the command that computes it.
  auto r = test::run_cli("sweep-merge " + out + s0 + s2);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("shard 1 of 3 missing; compute each with: kvscope-cli sweep"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("--shard 1/3 --out DIR"), std::string::npos) << r.output;
  // The same shard twice.
  r = test::run_cli("sweep-merge " + out + s0 + s1 + s1 + s2);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("is shard 1/3 again"), std::string::npos) << r.output;
  // A shard of a sweep with other settings.
  const std::string other = shard("other", "1/3", 5);
  r = test::run_cli("sweep-merge " + out + s0 + other + s2);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("other/sweep_shard.json: identity: belongs to another sweep"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("items differ"), std::string::npos) << r.output;
  // A shard of another split.
  const std::string half = shard("half", "1/2");
  r = test::run_cli("sweep-merge " + out + s0 + half + s2);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("of another split"), std::string::npos) << r.output;
  // A folder that is not a finished shard.
  fs::create_directories(dir / "empty");
  r = test::run_cli("sweep-merge " + out + s0 + " " + test::quote((dir / "empty").string()) + s2);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("empty/sweep_shard.json: missing: not a finished shard"), std::string::npos) << r.output;
  // Nothing was written by any refused merge.
  EXPECT_FALSE(fs::exists(dir / "out"));
  // Bad --shard values.
  for (const char* bad : {"3/3", "1/0", "x/2", "1"}) {
    r = test::run_cli("sweep " + sweep_args() + " --shard " + bad + " --out " + test::quote((dir / "bad").string()));
    EXPECT_NE(r.exit_code, 0) << bad;
    EXPECT_NE(r.output.find("--shard"), std::string::npos) << r.output;
  }
  EXPECT_FALSE(fs::exists(dir / "bad"));
  // And the three shards do merge.
  run_ok("sweep-merge " + out + s0 + s1 + s2);
  EXPECT_TRUE(fs::exists(dir / "out" / "sweep.csv"));
}

TEST(SweepShards, AnInterruptedShardResumesFromItsCells) {
  // Ctrl-C once shard 0 of 2 has saved two cells; --resume finishes it, and
  // the merge equals the sweep run whole.
  test::TempDir dir;
  const std::string cmd = std::string(KVSCOPE_CLI_PATH) + " sweep " + sweep_args() + " --shard 0/2 --out ";
  const std::string err = test::quote((dir / "err.txt").string());
  const auto r = test::run_shell(": > " + err + "; KVSCOPE_TEST_PAUSE_AT='second cell saved' " + cmd +
                                 test::quote((dir / "s0").string()) + " 2>" + err +
                                 " & pid=$!; "
                                 "for i in $(seq 1200); do grep -q 'paused at second cell saved' " +
                                 err + " && break; sleep 0.05; done; kill -INT $pid; wait $pid; echo rc=$?");
  ASSERT_NE(r.output.find("rc=130"), std::string::npos) << r.output << test::read_file(dir / "err.txt");
  EXPECT_FALSE(fs::exists(dir / "s0" / "sweep_shard.json"));
  EXPECT_TRUE(fs::exists(dir / "s0" / "cells" / "sweep.json"));
  // Resuming with another shard's spec is refused: its cells are shard 0's.
  const auto wrong = test::run_shell(std::string(KVSCOPE_CLI_PATH) + " sweep " + sweep_args() +
                                     " --shard 1/2 --resume --out " + test::quote((dir / "s0").string()) + " 2>&1");
  EXPECT_NE(wrong.exit_code, 0);
  EXPECT_NE(wrong.output.find("other settings"), std::string::npos) << wrong.output;
  const auto resumed = test::run_shell(cmd + test::quote((dir / "s0").string()) + " --resume 2>&1");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  run_ok("sweep " + sweep_args() + " --shard 1/2 --out " + test::quote((dir / "s1").string()));
  run_ok("sweep-merge " + test::quote((dir / "merged").string()) + " " + test::quote((dir / "s0").string()) + " " +
         test::quote((dir / "s1").string()));
  run_ok("sweep " + sweep_args() + " --out " + test::quote((dir / "one").string()));
  expect_same_files(dir / "one", dir / "merged");
}

// tools/slurm-sweep.sh without Slurm: its tasks run as the array would run
// them (SLURM_ARRAY_TASK_ID 0..N-1, one of them twice, as a requeue would),
// then its merge; the result equals the one-machine sweep.
TEST(SweepShards, SlurmScriptsTasksAndMergeEqualTheOneMachineSweep) {
  test::TempDir dir;
  const fs::path root = (test::data_dir() / ".." / "..").lexically_normal();
  const std::string script = test::quote((root / "tools" / "slurm-sweep.sh").string());
  ASSERT_EQ(test::run_shell("bash -n " + script).exit_code, 0) << "the script does not parse";
  const std::string env = "KVSCOPE_CLI=" + test::quote(KVSCOPE_CLI_PATH) + " ";
  const std::string out = test::quote((dir / "out").string());
  for (const int task : {0, 1, 2, 1}) {
    const auto r = test::run_shell(env + "SLURM_ARRAY_TASK_ID=" + std::to_string(task) + " bash " + script +
                                   " task 3 " + out + " -- " + sweep_args() + " 2>&1");
    ASSERT_EQ(r.exit_code, 0) << r.output;
  }
  EXPECT_TRUE(fs::exists(dir / "out.shards" / "shard-2" / "sweep_shard.json"));
  const auto merged = test::run_shell(env + "bash " + script + " merge 3 " + out + " -- " + sweep_args() + " 2>&1");
  ASSERT_EQ(merged.exit_code, 0) << merged.output;
  run_ok("sweep " + sweep_args() + " --out " + test::quote((dir / "one").string()));
  expect_same_files(dir / "one", dir / "out");
  // What the script sets itself is refused in the sweep's flags; a task
  // outside an array says so.
  auto r = test::run_shell(env + "bash " + script + " task 3 " + out + " -- " + sweep_args() + " --out x 2>&1");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("--out is the script's to set"), std::string::npos) << r.output;
  r = test::run_shell("env -u SLURM_ARRAY_TASK_ID " + env + "bash " + script + " task 3 " + out + " -- " +
                      sweep_args() + " 2>&1");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("SLURM_ARRAY_TASK_ID is not set"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace kvscope
