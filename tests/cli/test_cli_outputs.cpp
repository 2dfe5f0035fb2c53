// The rule of every output folder (docs/exports.md, io/output_folder.h),
// the way a user meets it: kvscope replaces only the files it wrote; a
// file of the user's in the way is refused before any work; one writer
// per folder; Ctrl-C, SIGTERM and a full disk leave nothing behind.
//
// The interrupt tests send the signal at a known point with the test-only
// hook KVSCOPE_TEST_PAUSE_AT (io/interrupt.h): the CLI prints "kvscope-test:
// paused at POINT" and waits for a signal there, so nothing races a timer.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <sstream>

#include "file_compare.h"
#include "io/json_file.h"
#include "test_util.h"

namespace kvscope {
namespace {

namespace fs = std::filesystem;

std::string q(const fs::path& p) { return test::quote(p.string()); }

// A small export: the tiny GQA model, three new tokens.
std::string generate(const fs::path& out, const std::string& extra = "") {
  return "generate " + test::quote(test::model_dir("llama_gqa").string()) +
         " --prompt 'The quick brown' --max-new-tokens 3 --policy h2o --budget 50% " + extra + " --export " + q(out);
}

std::vector<std::string> listing(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

// Every file under `dir` with its bytes: "the folder is unchanged".
std::map<std::string, std::string> snapshot(const fs::path& dir) {
  std::map<std::string, std::string> m;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    m[fs::relative(e.path(), dir).string()] = e.is_regular_file() ? test::read_file(e.path()) : "<dir>";
  return m;
}

int count_lines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

int count_errors(const std::string& s) {
  int n = 0;
  for (std::size_t at = 0; (at = s.find("kvscope-cli: error: ", at)) != std::string::npos; ++at) ++n;
  return n;
}

// A process id that is certainly not running: a child that has exited and
// been waited for.
long dead_pid() {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(0);
  ::waitpid(pid, nullptr, 0);
  return pid;
}

// A shell line that starts the CLI with `args` in the background, paused
// at `point` (stderr to `err`), and waits until it says so; $pid is its id.
// `err` is emptied before the start: a file left by an earlier run says
// "paused at" already, and the shell would signal the new process before it
// has installed its handler (a background job of a script ignores SIGINT
// until then, and would run to the end).
std::string start_paused(const std::string& args, const std::string& point, const fs::path& err) {
  return ": > " + q(err) + "; KVSCOPE_TEST_PAUSE_AT=" + point + " " + std::string(KVSCOPE_CLI_PATH) + " " + args +
         " >/dev/null 2>" + q(err) + " & pid=$!; for i in $(seq 1200); do grep -q 'paused at " + point + "' " + q(err) +
         " && break; sleep 0.05; done; ";
}

// Then signals it and prints its exit status.
std::string signal_and_wait(const std::string& sig = "INT") { return "kill -" + sig + " $pid; wait $pid; echo $?"; }

TEST(CliOutputs, AnExportBesideTheUsersFilesKeepsThemByteForByte) {
  test::TempDir dir;
  const fs::path out = dir / "out";
  ASSERT_EQ(test::run_cli(generate(out)).exit_code, 0);
  // The user's script, their own sweep placed there, a folder of theirs.
  test::write_file(out / "analysis.py", "import numpy as np\nprint(np.load('masks.npy').shape)\n");
  test::write_file(out / "sweep.csv", "policy,budget,kl\nh2o,50%,0.1\n");
  fs::create_directories(out / "notes");
  test::write_file(out / "notes" / "draft.md", "results\n");
  const auto before = snapshot(out);
  // Another head: the earlier figures of layer 0 go, the user's files stay.
  const auto r = test::run_cli(generate(out, "--export-layer 1 --export-head 2"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto after = snapshot(out);
  for (const char* mine : {"analysis.py", "sweep.csv", "notes", "notes/draft.md"}) {
    ASSERT_TRUE(after.count(mine)) << mine << " was removed";
    EXPECT_EQ(after.at(mine), before.at(mine)) << mine << " was changed";
  }
  EXPECT_FALSE(fs::exists(out / "attention_L0_H0.png")) << "a stale figure of the earlier export";
  EXPECT_TRUE(fs::exists(out / "attention_L1_H2.png"));
  auto listed = read_json_file(out / "manifest.json")["files"].get<std::vector<std::string>>();
  for (const auto& f : listed) EXPECT_TRUE(fs::exists(out / f)) << f;
  for (const char* mine : {"analysis.py", "sweep.csv", "notes"})
    EXPECT_EQ(std::count(listed.begin(), listed.end(), mine), 0) << mine;
  // Nothing else beside it: no lock, no staging folder.
  EXPECT_EQ(listing(dir.path()), std::vector<std::string>{"out"});
}

TEST(CliOutputs, AUsersFileWithAnExportsNameIsRefusedBeforeAnyWork) {
  test::TempDir dir;
  const fs::path out = dir / "out";
  fs::create_directories(out);
  test::write_file(out / "metrics.csv", "my,own,metrics\n");
  const auto before = snapshot(out);
  const auto r = test::run_cli(generate(out));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(count_lines(r.output), 1) << r.output;
  EXPECT_NE(r.output.find("out/metrics.csv: is not a file kvscope wrote"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("The quick"), std::string::npos) << "the model ran before the refusal: " << r.output;
  EXPECT_EQ(snapshot(out), before);
  EXPECT_EQ(listing(dir.path()), std::vector<std::string>{"out"});
  // A figure name too (its head is only known after the run).
  fs::remove(out / "metrics.csv");
  test::write_file(out / "attention_L1_H3.svg", "<svg/>");
  const auto fig = test::run_cli(generate(out));
  EXPECT_EQ(fig.exit_code, 1);
  EXPECT_NE(fig.output.find("out/attention_L1_H3.svg: is not a file kvscope wrote"), std::string::npos) << fig.output;
}

TEST(CliOutputs, SweepOverTheUsersSweepCsvIsRefusedAndAKvscopeSweepIsReplaced) {
  test::TempDir dir;
  const auto assets = (test::data_dir() / ".." / ".." / "assets").lexically_normal();
  const std::string sweep =
      "sweep " + q(assets / "sessions" / "story_h2o.json") + " --policies h2o,window --budgets 50% --format svg --out ";
  const fs::path out = dir / "out";
  fs::create_directories(out);
  test::write_file(out / "sweep.csv", "policy,budget\nmine,1\n");
  const auto r = test::run_cli(sweep + q(out));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(count_lines(r.output), 1) << r.output;
  EXPECT_NE(r.output.find("out/sweep.csv: is not a file kvscope wrote"), std::string::npos) << r.output;
  EXPECT_EQ(test::read_file(out / "sweep.csv"), "policy,budget\nmine,1\n");
  EXPECT_EQ(listing(out), std::vector<std::string>{"sweep.csv"}) << "no checkpoints: no cell ran";
  // A sweep kvscope wrote is replaced (its manifest lists it); the user's
  // file beside it stays.
  fs::rename(out / "sweep.csv", out / "my_sweep.csv");
  ASSERT_EQ(test::run_cli(sweep + q(out)).exit_code, 0);
  ASSERT_TRUE(fs::exists(out / "sweep_manifest.json"));
  const auto again = test::run_cli(sweep + q(out));
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_EQ(test::read_file(out / "my_sweep.csv"), "policy,budget\nmine,1\n");
  const auto listed = read_json_file(out / "sweep_manifest.json")["files"].get<std::vector<std::string>>();
  EXPECT_NE(std::find(listed.begin(), listed.end(), "sweep.csv"), listed.end());
  EXPECT_EQ(std::find(listed.begin(), listed.end(), "my_sweep.csv"), listed.end());
}

TEST(CliOutputs, ASecondExportToTheSameFolderIsRefusedThenCtrlCLeavesNothing) {
  test::TempDir dir;
  const fs::path out = dir / "out";
  ASSERT_EQ(test::run_cli(generate(out)).exit_code, 0);
  test::write_file(out / "analysis.py", "print(1)\n");
  const auto before = snapshot(out);
  // The first export pauses while writing (its staging folder half full),
  // a second one is started meanwhile, then the first gets Ctrl-C.
  const auto r =
      test::run_shell(start_paused(generate(out, "--export-layer 1"), "writing", dir / "err.txt") +
                      "echo $pid; ls -A " + q(dir.path()) + " > " + q(dir / "during.txt") + "; " + KVSCOPE_CLI_PATH +
                      " " + generate(out) + " > " + q(dir / "second.txt") + " 2>&1; echo $?; " + signal_and_wait());
  std::istringstream lines(r.output);
  long pid = 0;
  int second_status = 0, first_status = 0;
  lines >> pid >> second_status >> first_status;
  ASSERT_GT(pid, 0) << r.output;
  const std::string during = test::read_file(dir / "during.txt");
  EXPECT_NE(during.find(".out.partial-" + std::to_string(pid)), std::string::npos) << during;
  EXPECT_NE(during.find(".out.lock"), std::string::npos) << during;
  // The second was refused in one line naming the first ...
  const std::string second = test::read_file(dir / "second.txt");
  EXPECT_EQ(second_status, 1);
  EXPECT_EQ(count_lines(second), 1) << second;
  EXPECT_NE(second.find("is being written by process " + std::to_string(pid)), std::string::npos) << second;
  EXPECT_EQ(first_status, 130);
  // ... and Ctrl-C removes the staging folder and the lock, and says so.
  const std::string err = test::read_file(dir / "err.txt");
  EXPECT_NE(err.find("kvscope-cli: interrupted: nothing written to " + out.string() +
                     "; the files already in it are unchanged"),
            std::string::npos)
      << err;
  EXPECT_EQ(listing(dir.path()), (std::vector<std::string>{"during.txt", "err.txt", "out", "second.txt"}))
      << "a staging folder or lock is left";
  EXPECT_EQ(snapshot(out), before);
}

TEST(CliOutputs, CtrlCOrSigtermWhileComputingSaysNothingWasWritten) {
  test::TempDir dir;
  for (const auto& [sig, status] : {std::pair{SIGINT, 130}, std::pair{SIGTERM, 143}}) {
    const fs::path out = dir / ("new" + std::to_string(sig));
    const auto r = test::run_shell(start_paused(generate(out), "computing", dir / "err.txt") +
                                   signal_and_wait(std::to_string(sig)));
    EXPECT_EQ(std::stoi(r.output), status) << test::read_file(dir / "err.txt");
    const std::string err = test::read_file(dir / "err.txt");
    EXPECT_NE(err.find("kvscope-cli: interrupted: nothing written; " + out.string() + " was not created"),
              std::string::npos)
        << err;
    EXPECT_EQ(listing(dir.path()), std::vector<std::string>{"err.txt"}) << "the target, a lock or staging is left";
  }
}

// Ctrl-C inside the prompt's forward pass (between two of its layers, where
// a long prompt spends minutes) stops there: the test pauses the pass at
// its first layer and signals it, so the check inside the pass is the only
// one that can see the signal before the pass ends.
TEST(CliOutputs, CtrlCInsideThePromptPassStopsThere) {
  test::TempDir dir;
  const fs::path out = dir / "new";
  const auto r = test::run_shell(start_paused(generate(out), "prompt", dir / "err.txt") + signal_and_wait());
  const std::string err = test::read_file(dir / "err.txt");
  EXPECT_EQ(std::stoi(r.output), 130) << err;
  EXPECT_NE(err.find("paused at prompt"), std::string::npos) << err;
  EXPECT_NE(err.find("kvscope-cli: interrupted: nothing written; " + out.string() + " was not created"),
            std::string::npos)
      << err;
  EXPECT_EQ(listing(dir.path()), std::vector<std::string>{"err.txt"});
  // A sweep's run stopped in its prompt pass says what was saved and how to go on.
  const auto assets = (test::data_dir() / ".." / ".." / "assets").lexically_normal();
  const auto s = test::run_shell(start_paused("sweep " + q(assets / "sessions" / "story_h2o.json") + " --dataset " +
                                                  q(assets / "eval" / "story.jsonl") +
                                                  " --limit 2 --policies h2o --budgets 50% --out " + q(dir / "sweep"),
                                              "prompt", dir / "err.txt") +
                                 signal_and_wait());
  const std::string serr = test::read_file(dir / "err.txt");
  EXPECT_EQ(std::stoi(s.output), 130) << serr;
  EXPECT_NE(serr.find("interrupted: 0 of 1 cells are saved in"), std::string::npos) << serr;
  EXPECT_NE(serr.find("run the same command with --resume"), std::string::npos) << serr;
}

TEST(CliOutputs, AStaleLockAndStaleStagingFoldersOfDeadProcessesAreTakenOver) {
  test::TempDir dir;
  const fs::path out = dir / "out";
  const long dead = dead_pid();
  test::write_file(dir / ".out.lock", std::to_string(dead) + "\n");
  fs::create_directories(dir / (".out.partial-" + std::to_string(dead)));
  test::write_file(dir / (".out.partial-" + std::to_string(dead)) / "masks.npy", std::string(1000, 'x'));
  // Another folder's staging is not this export's to remove.
  fs::create_directories(dir / (".other.partial-" + std::to_string(dead)));
  const auto r = test::run_cli(generate(out));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("kvscope-cli: note: took over " + out.string() + "'s lock of process " +
                          std::to_string(dead) + ", which is no longer running"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(listing(dir.path()), (std::vector<std::string>{".other.partial-" + std::to_string(dead), "out"}));
  // A lock whose process runs (this test's own) is honoured.
  test::write_file(dir / ".out.lock", std::to_string(::getpid()) + "\n");
  const auto held = test::run_cli(generate(out));
  EXPECT_EQ(held.exit_code, 1);
  EXPECT_NE(held.output.find("is being written by process " + std::to_string(::getpid())), std::string::npos)
      << held.output;
  EXPECT_EQ(test::read_file(dir / ".out.lock"), std::to_string(::getpid()) + "\n") << "a lock not its own was touched";
}

TEST(CliOutputs, AFullDiskLeavesNothingAndNamesTheFile) {
  // Writes fail with EFBIG past a 10 KiB file size limit (RLIMIT_FSIZE,
  // SIGXFSZ ignored so the write returns the error instead of killing).
  test::TempDir dir;
  const std::string limited = "sh -c \"trap '' XFSZ; ulimit -f 20; exec " + std::string(KVSCOPE_CLI_PATH) + " ";
  // A new folder: not created.
  const auto fresh = test::run_shell(limited + generate(dir / "new" / "out") + "\" 2>&1 >/dev/null");
  EXPECT_EQ(fresh.exit_code, 1);
  EXPECT_EQ(count_errors(fresh.output), 1) << fresh.output;
  EXPECT_NE(fresh.output.find((dir / "new" / "out").string() + "/"), std::string::npos)
      << "names the file: " << fresh.output;
  EXPECT_TRUE(fs::is_empty(dir.path())) << "left: " << listing(dir.path()).front();
  // The same under a plain `ulimit -f`, whose signal (SIGXFSZ) would kill
  // the process mid-write: the CLI ignores it, so the write fails and
  // nothing is left either.
  const auto plain = test::run_shell("sh -c \"ulimit -f 20; exec " + std::string(KVSCOPE_CLI_PATH) + " " +
                                     generate(dir / "new" / "out") + "\" 2>&1 >/dev/null");
  EXPECT_EQ(plain.exit_code, 1) << plain.output;
  EXPECT_EQ(count_errors(plain.output), 1) << plain.output;
  EXPECT_TRUE(fs::is_empty(dir.path())) << "left: " << listing(dir.path()).front();
  // An earlier export (and a file of the user's): unchanged.
  const fs::path out = dir / "out";
  ASSERT_EQ(test::run_cli(generate(out)).exit_code, 0);
  test::write_file(out / "analysis.py", "print(1)\n");
  const auto before = snapshot(out);
  const auto full = test::run_shell(limited + generate(out, "--export-layer 1") + "\" 2>&1 >/dev/null");
  EXPECT_EQ(full.exit_code, 1);
  EXPECT_EQ(count_errors(full.output), 1) << full.output;
  EXPECT_NE(full.output.find(out.string() + "/"), std::string::npos) << full.output;
  EXPECT_EQ(full.output.find(".partial-"), std::string::npos) << "names the staging folder: " << full.output;
  EXPECT_EQ(snapshot(out), before);
  EXPECT_EQ(listing(dir.path()), std::vector<std::string>{"out"});
}

}  // namespace
}  // namespace kvscope
