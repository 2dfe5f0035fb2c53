// The app's engine worker, without a window: commands posted as the UI
// would, results compared with plain Sessions run by hand on the bundled
// tiny model (and with what `kvscope-cli run --export` writes).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <regex>
#include <set>
#include <thread>

#include "engine_worker.h"
#include "export_defaults.h"
#include "io/json_file.h"
#include "bundle/downloaded_models.h"
#include "reports/exporter.h"
#include "session/session_file.h"
#include "test_util.h"

namespace kvscope::gui {
namespace {

using namespace std::chrono_literals;

// Polls until the worker has nothing queued, running or playing.
bool wait_idle(const EngineWorker& w, std::chrono::seconds timeout = 120s) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!w.idle()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

// Polls until `pred` holds (e.g. a replay has started).
template <class Pred>
bool wait_for(Pred pred, std::chrono::seconds timeout = 60s) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(100us);
  }
  return true;
}

PolicyParams policy(PolicyKind kind, const std::string& budget) {
  PolicyParams p;
  p.kind = kind;
  p.budget = Amount::parse(budget, "budget");
  return p;
}

// The bundled model (as the worker makes it: an absolute path), sampling
// on so that tokens depend on what the cache kept.
SessionConfig config(PolicyKind kind, const std::string& budget, int new_tokens = 10) {
  SessionConfig c;
  c.model = absolute_model_path("");
  c.prompt = "The quick brown fox jumps over the lazy dog. Pack my box with five dozen jugs! The dog sleeps.";
  c.max_new_tokens = new_tokens;
  c.stop_at_eos = false;
  c.sampling.temperature = 0.8f;
  c.policy = policy(kind, budget);
  c.seed = 5;
  return c;
}

std::shared_ptr<const ModelBundle> tiny() {
  static auto b = bundle_for(absolute_model_path(""));
  return b;
}

// A plain session run to `row`.
std::unique_ptr<Session> run_to(const SessionConfig& c, int row) {
  auto s = std::make_unique<Session>(tiny(), c);
  s->prefill();
  while (s->current_row() < row && s->step()) {
  }
  return s;
}

// Masks of rows 0..rows-1, the part every session records.
std::vector<uint8_t> masks(const Session& s, int rows) {
  const auto& m = s.recorder().masks();
  const size_t per_row = m.size() / s.recorder().rows();
  return {m.begin(), m.begin() + per_row * rows};
}

// Bit patterns, so that NaN (no statistic) compares equal to itself.
std::string bytes_of(const std::vector<float>& v) {
  return {reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float)};
}

void expect_same_run(const PublishedRun& p, const Session& s) {
  EXPECT_EQ(p.rows, s.recorder().rows_recorded());
  EXPECT_EQ(p.tokens, s.tokens());
  EXPECT_EQ(masks(*p.session, p.rows), masks(s, p.rows));
  EXPECT_EQ(bytes_of(p.session->recorder().scores()), bytes_of(s.recorder().scores()));
  EXPECT_EQ(p.events.size(), s.recorder().events().size());
}

class Worker : public ::testing::Test {
 protected:
  void open(const SessionConfig& c) {
    const uint64_t errors = w.status().error_serial;
    w.open(c);
    ASSERT_TRUE(wait_idle(w));
    ASSERT_EQ(w.status().error_serial, errors) << w.status().error;
    ASSERT_TRUE(w.a());
  }
  void run(const std::function<void()>& command) {
    command();
    ASSERT_TRUE(wait_idle(w));
  }
  EngineWorker w;
};

TEST_F(Worker, OpenAndStepMatchAPlainSession) {
  const SessionConfig c = config(PolicyKind::H2O, "40%");
  open(c);
  EXPECT_EQ(w.a()->rows, 1);
  run([&] { w.step(5); });
  const auto a = w.a();
  ASSERT_EQ(a->rows, 6);
  expect_same_run(*a, *run_to(c, 5));
  EXPECT_EQ(a->token_text.size(), a->tokens.size());
  EXPECT_EQ(a->metrics.size(), 6u);
  EXPECT_EQ(a->policy_label.rfind("h2o k=", 0), 0u) << a->policy_label;
  EXPECT_FALSE(a->device.empty());
  // The sharing panel's bytes per token come from the engine's formula at
  // this element size: they must add up to the full cache it reports.
  EXPECT_EQ(a->kv_element_bytes, 4);  // the CPU backend's fp32 cache
  EXPECT_EQ(a->kv_bytes_full,
            a->session->model_config().kv_bytes_per_token(a->kv_element_bytes) * static_cast<int64_t>(a->tokens.size()));
  EXPECT_EQ(w.b(), nullptr);
  EXPECT_EQ(w.status().error, "");
}

TEST_F(Worker, ForkUnderTheSamePolicyStaysIdenticalToA) {
  // Every policy, the stateful ones above all (statistics, noise, draws).
  for (PolicyKind kind : {PolicyKind::Full, PolicyKind::Window, PolicyKind::Sink, PolicyKind::H2O, PolicyKind::TOVA,
                          PolicyKind::Keyformer, PolicyKind::A2SF, PolicyKind::Random, PolicyKind::Ideal}) {
    SCOPED_TRACE(policy_name(kind));
    const SessionConfig c = config(kind, kind == PolicyKind::Full ? "100%" : "40%");
    open(c);
    run([&] { w.step(3); });
    run([&] { w.fork(c.policy); });
    ASSERT_TRUE(w.b());
    EXPECT_EQ(w.a()->config.fork->at_step, 3);
    run([&] { w.step(5); });
    const auto a = w.a(), b = w.b();
    ASSERT_EQ(a->rows, 9);
    ASSERT_EQ(b->rows, 9);
    EXPECT_EQ(b->tokens, a->tokens);
    EXPECT_EQ(masks(*b->session, 9), masks(*a->session, 9));
    EXPECT_EQ(bytes_of(b->session->recorder().scores()), bytes_of(a->session->recorder().scores()));  // NaN-safe
    EXPECT_EQ(b->events.size(), a->events.size());
  }
}

TEST_F(Worker, ForkUnderAnotherPolicyEqualsItsBranchConfig) {
  SessionConfig c = config(PolicyKind::H2O, "40%");
  open(c);
  run([&] { w.step(6); });
  const PolicyParams tova = policy(PolicyKind::TOVA, "40%");
  run([&] { w.fork(tova, 2); });  // earlier than A's row: replay, then catch up
  ASSERT_TRUE(w.b());
  EXPECT_EQ(w.b()->rows, 7);
  c.fork = ForkConfig{2, tova};
  expect_same_run(*w.b(), *run_to(fork_branch_config(c), 6));
  expect_same_run(*w.a(), *run_to(config(PolicyKind::H2O, "40%"), 6));  // A untouched
}

TEST_F(Worker, ApplyToTheForkAtItsForkPointBecomesItsPolicy) {
  SessionConfig c = config(PolicyKind::H2O, "40%");
  open(c);
  run([&] { w.step(2); });
  run([&] { w.fork(c.policy); });
  const PolicyParams tova = policy(PolicyKind::TOVA, "40%");
  run([&] { w.apply(tova, SharingLayout{}, ApplyMode::FromNow, true); });
  ASSERT_EQ(w.status().error, "");
  EXPECT_EQ(w.a()->config.fork->policy.kind, PolicyKind::TOVA);
  run([&] { w.step(4); });
  c.fork = ForkConfig{2, tova};
  expect_same_run(*w.b(), *run_to(fork_branch_config(c), 6));
  expect_same_run(*w.a(), *run_to(config(PolicyKind::H2O, "40%"), 6));
  // Later, the change cannot go into the fork block: said, not hidden.
  const uint64_t serial = w.status().message_serial;
  run([&] { w.apply(policy(PolicyKind::Window, "40%"), SharingLayout{}, ApplyMode::FromNow, true); });
  EXPECT_EQ(w.a()->config.fork->policy.kind, PolicyKind::TOVA);
  EXPECT_GT(w.status().message_serial, serial);
  // Replay makes it the fork's policy.
  run([&] { w.apply(policy(PolicyKind::Window, "40%"), SharingLayout{}, ApplyMode::Replay, true); });
  EXPECT_EQ(w.a()->config.fork->policy.kind, PolicyKind::Window);
  c.fork = ForkConfig{2, policy(PolicyKind::Window, "40%")};
  expect_same_run(*w.b(), *run_to(fork_branch_config(c), 6));
}

TEST_F(Worker, ApplyReplayEqualsAFreshSessionWithThePolicy) {
  open(config(PolicyKind::H2O, "40%"));
  run([&] { w.step(4); });
  const uint64_t before = w.a()->generation;
  const PolicyParams tova = policy(PolicyKind::TOVA, "40%");
  run([&] { w.apply(tova, SharingLayout{}, ApplyMode::Replay); });
  const auto a = w.a();
  EXPECT_NE(a->generation, before);
  EXPECT_TRUE(a->config.policy_changes.empty());
  expect_same_run(*a, *run_to(config(PolicyKind::TOVA, "40%"), 4));
}

TEST_F(Worker, ApplyFromNowEqualsAPolicyChangeAtTheNextStep) {
  open(config(PolicyKind::H2O, "40%"));
  run([&] { w.step(4); });
  const uint64_t before = w.a()->generation;
  const PolicyParams tova = policy(PolicyKind::TOVA, "40%");
  const std::string h2o_label = w.a()->policy_label;
  EXPECT_EQ(h2o_label.rfind("h2o k=", 0), 0u) << h2o_label;
  run([&] { w.apply(tova, SharingLayout{}, ApplyMode::FromNow); });
  // The shown (latest) step was still H2O's: the label says so until the
  // next step runs under TOVA.
  EXPECT_EQ(w.a()->policy_label, h2o_label);
  run([&] { w.step(3); });
  const auto a = w.a();
  EXPECT_EQ(a->policy_label.rfind("tova k=", 0), 0u) << a->policy_label;
  EXPECT_EQ(a->generation, before);  // the same session goes on
  ASSERT_EQ(a->config.policy_changes.size(), 1u);
  EXPECT_EQ(a->config.policy_changes[0].from_step, 5);
  SessionConfig changed = config(PolicyKind::H2O, "40%");
  changed.policy_changes = {{5, tova}};
  expect_same_run(*a, *run_to(changed, 7));
  // The past stayed H2O's: unlike a replay under TOVA.
  EXPECT_NE(masks(*a->session, 5), masks(*run_to(config(PolicyKind::TOVA, "40%"), 4), 5));
}

TEST_F(Worker, SharingChangeReplaysEvenFromNow) {
  open(config(PolicyKind::H2O, "40%"));
  run([&] { w.step(3); });
  const uint64_t serial = w.status().message_serial;
  run([&] { w.apply(policy(PolicyKind::H2O, "40%"), SharingLayout::parse("mqa"), ApplyMode::FromNow); });
  EXPECT_GT(w.status().message_serial, serial);
  EXPECT_NE(w.status().message.find("sharing"), std::string::npos) << w.status().message;
  SessionConfig c = config(PolicyKind::H2O, "40%");
  c.sharing = SharingLayout::parse("mqa");
  expect_same_run(*w.a(), *run_to(c, 3));
  EXPECT_LT(w.a()->kv_bytes_full, w.a()->kv_bytes_native);
}

TEST_F(Worker, ImpossibleBudgetIsAnErrorAndLeavesAAlone) {
  const SessionConfig c = config(PolicyKind::H2O, "40%");
  open(c);
  run([&] { w.step(2); });
  const auto before = w.a();
  PolicyParams bad = policy(PolicyKind::Sink, "2");  // below its 4 sinks
  for (ApplyMode mode : {ApplyMode::FromNow, ApplyMode::Replay}) {
    const uint64_t serial = w.status().error_serial;
    run([&] { w.apply(bad, SharingLayout{}, mode); });
    const WorkerStatus st = w.status();
    EXPECT_EQ(st.error_serial, serial + 1);
    EXPECT_NE(st.error.find("smaller than the recent window"), std::string::npos) << st.error;
    // In the window's words: the control's label, not a flag or a field path.
    EXPECT_EQ(st.error.rfind("budget k: ", 0), 0u) << st.error;
    EXPECT_EQ(w.a()->generation, before->generation);
    EXPECT_EQ(w.a()->config.policy.kind, PolicyKind::H2O);
    EXPECT_TRUE(w.a()->config.policy_changes.empty());
  }
  run([&] { w.step(3); });  // the run goes on as if nothing had been tried
  expect_same_run(*w.a(), *run_to(c, 5));
}

TEST_F(Worker, MalformedSessionFileIsAnErrorNamingIt) {
  test::TempDir dir;
  const auto file = dir / "broken.json";
  test::write_file(file, "{\"format\": \"kvscope-session\", \"version\": 1, \"polcy\": {}}");
  run([&] { w.open_file(file); });
  EXPECT_NE(w.status().error.find("broken.json"), std::string::npos) << w.status().error;
  EXPECT_EQ(w.a(), nullptr);
  test::write_file(file, "{ not json");
  const uint64_t serial = w.status().error_serial;
  run([&] { w.open_file(file); });
  EXPECT_EQ(w.status().error_serial, serial + 1);
  EXPECT_NE(w.status().error.find("broken.json"), std::string::npos) << w.status().error;
  run([&] { w.open_file(dir / "missing.json"); });
  EXPECT_NE(w.status().error.find("missing.json"), std::string::npos) << w.status().error;
  // A step asked for after the failed open (as --steps does) says why
  // nothing is open, rather than replacing that error with its own.
  run([&] { w.step(2); });
  EXPECT_NE(w.status().error.find("no session is open (opening failed: "), std::string::npos) << w.status().error;
  EXPECT_NE(w.status().error.find("missing.json"), std::string::npos) << w.status().error;
  // A session open before stays as it was.
  open(config(PolicyKind::H2O, "40%"));
  const uint64_t generation = w.a()->generation;
  run([&] { w.open_file(file); });
  EXPECT_EQ(w.a()->generation, generation);
  SessionConfig bad_model = config(PolicyKind::H2O, "40%");
  bad_model.model = (dir / "no-model-here").string();
  run([&] { w.open(bad_model); });
  EXPECT_NE(w.status().error.find("no-model-here"), std::string::npos) << w.status().error;
  EXPECT_EQ(w.a()->generation, generation);
}

TEST_F(Worker, StepFromAnEarlierRowDropsTheFuture) {
  const SessionConfig c = config(PolicyKind::H2O, "40%");
  open(c);
  run([&] { w.step(8); });
  const auto old = w.a();
  run([&] { w.step_from(3, 1); });
  const auto a = w.a();
  EXPECT_NE(a->generation, old->generation);
  EXPECT_EQ(a->rows, 5);
  EXPECT_EQ(w.status().message, "continued from step 3: steps 4..8 of the old run dropped");
  // Sampling is keyed by seed and step: the same run again.
  expect_same_run(*a, *run_to(c, 4));
  EXPECT_EQ(old->rows, 9);  // the old snapshot is still whole for whoever holds it
}

TEST_F(Worker, StepFromKeepsAForkMadeEarlier) {
  SessionConfig c = config(PolicyKind::H2O, "40%");
  open(c);
  run([&] { w.step(2); });
  const PolicyParams tova = policy(PolicyKind::TOVA, "40%");
  run([&] { w.fork(tova); });
  run([&] { w.step(6); });
  run([&] { w.step_from(5, 1); });
  ASSERT_TRUE(w.b());
  c.fork = ForkConfig{2, tova};
  expect_same_run(*w.b(), *run_to(fork_branch_config(c), 6));
  run([&] { w.step_from(1, 1); });  // before the fork: it goes
  EXPECT_EQ(w.b(), nullptr);
  EXPECT_FALSE(w.a()->config.fork);
}

TEST_F(Worker, CancelStopsALongReplay) {
  const SessionConfig c = config(PolicyKind::H2O, "40%", 300);
  open(c);
  run([&] { w.step(300); });
  const auto before = w.a();
  ASSERT_EQ(before->rows, 301);
  // Cancelled while it runs...
  w.step_from(290, 1);
  ASSERT_TRUE(wait_for([&] {
    const auto st = w.status();
    return st.busy && st.progress > 0;
  }));
  w.cancel();
  ASSERT_TRUE(wait_idle(w));
  EXPECT_EQ(w.a()->generation, before->generation);
  EXPECT_EQ(w.a()->rows, 301);
  EXPECT_NE(w.status().message.find("canceled"), std::string::npos) << w.status().message;
  // ...and before it started.
  w.step_from(290, 1);
  w.cancel();
  ASSERT_TRUE(wait_idle(w));
  EXPECT_EQ(w.a()->generation, before->generation);
  // A replay under a new policy, cancelled while it runs.
  w.apply(policy(PolicyKind::TOVA, "40%"), SharingLayout{}, ApplyMode::Replay);
  ASSERT_TRUE(wait_for([&] {
    const auto st = w.status();
    return st.busy && st.progress > 0;
  }));
  w.cancel();
  ASSERT_TRUE(wait_idle(w));
  EXPECT_EQ(w.a()->generation, before->generation);
  EXPECT_EQ(w.a()->config.policy.kind, PolicyKind::H2O);
  // A later command is not cancelled.
  run([&] { w.step_from(2, 1); });
  EXPECT_EQ(w.a()->rows, 4);
}

TEST_F(Worker, PlayRunsToTheEndAndStops) {
  open(config(PolicyKind::TOVA, "40%", 12));
  w.set_play_speed(1e6);
  w.play(true);
  ASSERT_TRUE(wait_idle(w));
  EXPECT_TRUE(w.a()->finished);
  EXPECT_EQ(w.a()->rows, 13);
  EXPECT_FALSE(w.status().playing);
}

TEST_F(Worker, FullReferenceOfAFullCacheIsItsOwnAttention) {
  open(config(PolicyKind::Full, "100%", 6));
  run([&] { w.step(6); });
  run([&] { w.request_full_reference(2); });
  const auto ref = w.full_reference();
  ASSERT_TRUE(ref);
  EXPECT_EQ(ref->generation, w.a()->generation);
  EXPECT_EQ(ref->rows, 7);
  EXPECT_EQ(ref->positions, w.a()->positions);
  EXPECT_EQ(ref->attention, w.a()->session->layer_attention(2));
}

TEST_F(Worker, FullReferenceFollowsTheTokensAEvictedOn) {
  open(config(PolicyKind::Window, "30%", 6));
  run([&] { w.step(4); });  // mid-run: A plans more positions than it has seen
  run([&] { w.request_full_reference(1); });
  const auto ref = w.full_reference();
  ASSERT_TRUE(ref);
  EXPECT_EQ(ref->rows, 5);
  EXPECT_EQ(ref->positions, w.a()->positions);
  SessionConfig full = config(PolicyKind::Full, "100%");
  full.prompt_ids.assign(w.a()->tokens.begin(), w.a()->tokens.begin() + w.a()->prompt_length);
  full.continuation_ids.assign(w.a()->tokens.begin() + w.a()->prompt_length, w.a()->tokens.end());
  const auto s = run_to(full, 4);
  const auto att = s->layer_attention(1);
  const int H = ref->heads, P = s->recorder().positions();
  for (int r = 0; r < 5; ++r)
    for (int h = 0; h < H; ++h)
      for (int p = 0; p < P; ++p)
        ASSERT_EQ(ref->attention[(size_t(r) * H + h) * ref->positions + p], att[(size_t(r) * H + h) * P + p]);
  EXPECT_NE(ref->attention, w.a()->session->layer_attention(1));  // the window lost some
}

TEST_F(Worker, FillLayerReplaysALayerTheRecorderSkipped) {
  SessionConfig c = config(PolicyKind::H2O, "40%");
  c.recording.layers = {0};
  open(c);
  run([&] { w.step(4); });
  EXPECT_EQ(w.filled_layer(3, false), nullptr);
  run([&] { w.fill_layer(3); });
  const auto filled = w.filled_layer(3, false);
  ASSERT_TRUE(filled);
  SessionConfig all = c;
  all.recording.layers = {3};
  const auto s = run_to(all, 4);
  EXPECT_EQ(*filled, s->layer_attention(3));
}

// A session file with every block the window adds.
std::filesystem::path write_session(const test::TempDir& dir, bool with_fork) {
  nlohmann::json j = {{"format", "kvscope-session"},
                      {"version", 1},
                      {"prompt", "Tom has a red ball. Tom gives the red ball to Sue. Sue has the ball."},
                      {"max_new_tokens", 9},
                      {"sampling", {{"temperature", 0.7}}},
                      {"policy", {{"name", "h2o"}, {"budget", "50%"}}},
                      {"export", {{"formats", {"png"}}}},
                      {"seed", 3}};
  if (with_fork) {
    j["fork"] = {{"at_step", 3}, {"policy", {{"name", "a2sf"}, {"budget", "50%"}, {"alpha", 0.5}}}};
    j["view"] = {{"layer", 1}, {"head", 2}, {"mode", "mask"}, {"step", 6}};
  }
  const auto file = dir / (with_fork ? "forked.json" : "plain.json");
  test::write_file(file, j.dump(2));
  return file;
}

bool is_figure(const std::filesystem::path& p) {
  const auto e = p.extension();
  return e == ".png" || e == ".svg" || e == ".pdf";
}

// Every non-figure file of `dir` (recursively), relative names.
std::vector<std::string> data_files(const std::filesystem::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir))
    if (e.is_regular_file() && !is_figure(e.path())) out.push_back(std::filesystem::relative(e.path(), dir).string());
  std::sort(out.begin(), out.end());
  return out;
}

// A data file's bytes, but for the command line its provenance records
// (the window's differs from the CLI's on purpose), which is returned in
// `command_line`.
std::string data_bytes(const std::filesystem::path& f, std::string* command_line = nullptr) {
  if (f.extension() != ".json") return test::read_file(f);
  nlohmann::json j = read_json_file(f);
  if (j.contains("provenance")) {
    if (command_line) *command_line = j["provenance"]["command_line"];
    j["provenance"].erase("command_line");
  }
  return j.dump(2);
}

TEST_F(Worker, ExportWritesWhatTheCliWrites) {
  for (bool forked : {false, true}) {
    SCOPED_TRACE(forked ? "with a fork" : "plain");
    test::TempDir dir;
    const auto file = write_session(dir, forked);
    run([&] { w.open_file(file, 9); });  // the whole run, as the CLI makes it
    ASSERT_EQ(w.status().error, "");
    ASSERT_TRUE(w.a()->finished);
    EXPECT_EQ(w.b() != nullptr, forked);
    // Twice: the second export replaces the first (fork folder and view figures included).
    run([&] { w.export_all(dir / "app", 0, 0, FigureExportOptions{}); });
    run([&] { w.export_all(dir / "app", 1, 2, FigureExportOptions{}); });
    ASSERT_EQ(w.status().error, "");
    // One export is one head: the CLI given the same head in its export
    // block writes the same files (CSV twins and figures of L1 H2 alone).
    nlohmann::json same_head = read_json_file(file);
    same_head["export"]["layer"] = 1;
    same_head["export"]["head"] = 2;
    const auto cli_file = dir / "same_head.json";
    test::write_file(cli_file, same_head.dump(2));
    const auto cli = test::run_cli("run " + test::quote(cli_file.string()) + " --quiet --export " +
                                   test::quote((dir / "cli").string()));
    ASSERT_EQ(cli.exit_code, 0) << cli.output;
    const auto files = data_files(dir / "cli");
    ASSERT_EQ(data_files(dir / "app"), files);
    EXPECT_EQ(std::count(files.begin(), files.end(), "fork/masks.npy"), forked ? 1 : 0);
    for (const auto& f : files) {
      std::string app_command, cli_command;
      const std::string app_bytes = data_bytes(dir / "app" / f, &app_command);
      const std::string cli_bytes = data_bytes(dir / "cli" / f, &cli_command);
      if (f.ends_with("manifest.json")) {
        // The app's also lists the current view's figures, which it exports too.
        auto app_manifest = nlohmann::json::parse(app_bytes), cli_manifest = nlohmann::json::parse(cli_bytes);
        const auto app_files = app_manifest["files"].get<std::vector<std::string>>();
        for (const auto& listed : cli_manifest["files"])
          EXPECT_NE(std::find(app_files.begin(), app_files.end(), listed), app_files.end()) << listed;
        if (f == "manifest.json")
          EXPECT_NE(std::find(app_files.begin(), app_files.end(), "attention_L1_H2.png"), app_files.end())
              << "the view's figure";
        app_manifest.erase("files");
        cli_manifest.erase("files");
        EXPECT_EQ(app_manifest, cli_manifest) << f;
      } else {
        EXPECT_EQ(app_bytes, cli_bytes) << f << " differs";
      }
      if (f.ends_with("manifest.json") || f.ends_with("session.json")) {
        // Each names what made it: the window its action, the CLI its argv.
        EXPECT_TRUE(app_command.ends_with(": export to " + (dir / "app").string())) << app_command;
        EXPECT_TRUE(cli_command.starts_with("kvscope-cli run ")) << cli_command;
      }
    }
    const auto written = w.status().last_export;
    EXPECT_NE(std::find(written.begin(), written.end(), dir / "app" / "attention_L1_H2.png"), written.end());
    EXPECT_NE(std::find(written.begin(), written.end(), dir / "app" / "masks.npy"), written.end());
  }
}

TEST_F(Worker, ExportRefusesAUsersFileAndShowsWhy) {
  // The window's export follows the rule of every export: a file of the
  // user's with a name the export writes is refused, visibly, and kept.
  test::TempDir dir;
  const auto file = write_session(dir, false);
  run([&] { w.open_file(file, 9); });
  ASSERT_EQ(w.status().error, "");
  std::filesystem::create_directories(dir / "out");
  test::write_file(dir / "out" / "tokens.json", "mine");
  test::write_file(dir / "out" / "notes.txt", "mine too");
  const uint64_t serial = w.status().error_serial;
  run([&] { w.export_all(dir / "out", 0, 0, FigureExportOptions{}); });
  EXPECT_EQ(w.status().error_serial, serial + 1);
  EXPECT_NE(w.status().error.find("out/tokens.json: is not a file kvscope wrote"), std::string::npos)
      << w.status().error;
  EXPECT_EQ(test::read_file(dir / "out" / "tokens.json"), "mine");
  std::filesystem::remove(dir / "out" / "tokens.json");
  run([&] { w.export_all(dir / "out", 0, 0, FigureExportOptions{}); });
  EXPECT_EQ(w.status().error_serial, serial + 1) << w.status().error;
  EXPECT_EQ(test::read_file(dir / "out" / "notes.txt"), "mine too");
  EXPECT_TRUE(std::filesystem::exists(dir / "out" / "masks.npy"));
}

TEST_F(Worker, OpenFileForksAndStopsAtTheViewStep) {
  test::TempDir dir;
  const auto file = write_session(dir, true);
  run([&] { w.open_file(file); });
  ASSERT_EQ(w.status().error, "");
  const auto a = w.a(), b = w.b();
  ASSERT_TRUE(b);
  EXPECT_EQ(a->rows, 7);
  EXPECT_EQ(b->rows, 7);
  SessionFile f = load_session_file(file.string());
  expect_same_run(*a, *run_to(f.cfg, 6));
  expect_same_run(*b, *run_to(fork_branch_config(f.cfg), 6));
  EXPECT_EQ(a->config.fork->at_step, 3);
  EXPECT_FALSE(b->config.fork);
}

// Figures for L2H0, CSVs for L0H0 and the view figure for L0H5 used to land
// in one folder: every file named for a head is now of the head asked for,
// in the formats asked for (PDF included, as the CLI writes it).
TEST_F(Worker, OneExportIsOneHeadInTheChosenFormats) {
  test::TempDir dir;
  const auto file = write_session(dir, false);
  run([&] { w.open_file(file, 9); });
  ASSERT_EQ(w.status().error, "");
  FigureExportOptions figures;
  figures.output.formats = {FigureFormat::png, FigureFormat::pdf, FigureFormat::png};
  figures.colormap = "magma";  // the view's settings
  figures.evicted = EvictedStyle::outline;
  figures.range.kind = RangeSpec::Kind::automatic;
  run([&] { w.export_all(dir / "out", 1, 2, figures); });
  ASSERT_EQ(w.status().error, "");
  const std::regex head_tag("_L([0-9]+)_H([0-9]+)\\."), grid_tag("_L([0-9]+)_grid\\.");
  int tagged = 0;
  std::set<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir / "out")) {
    const std::string name = e.path().filename().string();
    names.insert(name);
    std::smatch m;
    if (std::regex_search(name, m, head_tag)) {
      ++tagged;
      EXPECT_EQ(m[1].str() + "," + m[2].str(), "1,2") << name;
    }
    if (std::regex_search(name, m, grid_tag)) EXPECT_EQ(m[1].str(), "1") << name;
    EXPECT_NE(e.path().extension(), ".svg") << name << ": SVG was not asked for";
  }
  for (const char* want : {"masks_L1_H2.csv", "scores_L1_H2.csv", "attention_L1_H2.png", "attention_L1_H2.pdf",
                           "attention_L1_grid.pdf", "score_curves_L1_H2.pdf"})
    EXPECT_EQ(names.count(want), 1u) << want;
  EXPECT_GE(tagged, 5);
  // The manifest lists every file written, and the exported session file
  // names the head, so the CLI reruns it to the same files.
  const auto listed = read_json_file(dir / "out" / "manifest.json").at("files").get<std::vector<std::string>>();
  EXPECT_EQ(std::set<std::string>(listed.begin(), listed.end()), names);
  const SessionConfig exported = SessionConfig::load(dir / "out" / "session.json");
  EXPECT_EQ(exported.export_opts.layer, 1);
  EXPECT_EQ(exported.export_opts.head, 2);
  // Drawn in the view's style, and recorded so (a rerun draws the same;
  // B's figures too): each format once.
  EXPECT_EQ(exported.export_opts.formats, (std::vector<std::string>{"png", "pdf"}));
  EXPECT_EQ(exported.export_opts.colormap, "magma");
  EXPECT_EQ(exported.export_opts.evicted, "outline");
  EXPECT_EQ(exported.export_opts.range, "auto");
}

// Save session never writes over an export's session.json (the next
// export would replace it); elsewhere it saves.
TEST_F(Worker, SaveRefusesAnExportsSessionFile) {
  test::TempDir dir;
  const auto file = write_session(dir, false);
  run([&] { w.open_file(file, 9); });
  run([&] { w.export_all(dir / "out", 0, 0, FigureExportOptions{}); });
  ASSERT_EQ(w.status().error, "");
  const std::string before = test::read_file(dir / "out" / "session.json");
  const uint64_t serial = w.status().error_serial;
  run([&] { w.save_session(dir / "out" / "session.json"); });
  EXPECT_EQ(w.status().error_serial, serial + 1);
  EXPECT_NE(w.status().error.find("out/session.json: is the session file of an export"), std::string::npos)
      << w.status().error;
  EXPECT_EQ(test::read_file(dir / "out" / "session.json"), before);
  // A session.json that no export lists is the user's to overwrite.
  std::filesystem::create_directories(dir / "mine");
  test::write_file(dir / "mine" / "session.json", "{}");
  run([&] { w.save_session(dir / "mine" / "session.json"); });
  EXPECT_EQ(w.status().error_serial, serial + 1) << w.status().error;
  EXPECT_NO_THROW(SessionConfig::load(dir / "mine" / "session.json"));
}

// The default export folder: the documents folder, else beside the session
// file, else home; never the current directory.
TEST(ExportDefaults, DocumentsThenSessionFolderThenHome) {
  EXPECT_EQ(default_export_dir("/x/Docs", "/home/u", true, "/s/a.json"),
            std::filesystem::path("/x/Docs/kvscope-export"));
  EXPECT_EQ(default_export_dir("", "/home/u", true, "/s/a.json"),
            std::filesystem::path("/home/u/Documents/kvscope-export"));
  EXPECT_EQ(default_export_dir("", "/home/u", false, "/s/a.json"), std::filesystem::path("/s/kvscope-export"));
  EXPECT_EQ(default_export_dir("", "/home/u", false, ""), std::filesystem::path("/home/u/kvscope-export"));
  EXPECT_EQ(default_export_dir("relative", "/home/u", false, ""), std::filesystem::path("/home/u/kvscope-export"));
  EXPECT_TRUE(default_export_dir("", "", false, "").is_absolute());
  // Save session's default is beside the export folder, not its session.json.
  EXPECT_EQ(default_session_save_path("/home/u/Documents/kvscope-export"),
            std::filesystem::path("/home/u/Documents/kvscope-export-session.json"));
}

TEST_F(Worker, ExportedForkReopensToTheSameState) {
  test::TempDir dir;
  const auto file = write_session(dir, true);
  run([&] { w.open_file(file, 9); });
  const auto a = w.a(), b = w.b();
  ASSERT_TRUE(b);
  run([&] { w.export_all(dir / "out", 0, 0, FigureExportOptions{}); });
  ASSERT_EQ(w.status().error, "");
  // B's files are those of its branch config run alone.
  SessionFile f = load_session_file(file.string());
  Session alone(f.bundle, fork_branch_config(f.cfg));
  alone.run_to_end();
  ExportConfig same_head = alone.config().export_opts;  // the window exported L0 H0 of both
  same_head.layer = 0;
  same_head.head = 0;
  export_session(alone, *open_export_folder(dir / "alone"), {}, &same_head);
  for (const auto& name : data_files(dir / "alone"))
    EXPECT_EQ(data_bytes(dir / "out" / "fork" / name), data_bytes(dir / "alone" / name)) << name;
  // The exported session.json carries the fork and reopens to A and B.
  EngineWorker again;
  again.open_file(dir / "out" / "session.json", 9);
  ASSERT_TRUE(wait_idle(again));
  ASSERT_EQ(again.status().error, "");
  ASSERT_TRUE(again.b());
  EXPECT_EQ(again.a()->tokens, a->tokens);
  EXPECT_EQ(again.b()->tokens, b->tokens);
  EXPECT_EQ(masks(*again.b()->session, b->rows), masks(*b->session, b->rows));
  // Saving writes the same settings, with the view the window shows now.
  ViewConfig view;
  view.mode = "diff_fork";
  view.bookmarks = {4, 5};
  run([&] { w.save_session(dir / "saved.json", view); });
  const SessionConfig saved = SessionConfig::load(dir / "saved.json");
  EXPECT_EQ(saved.fork->at_step, 3);
  EXPECT_EQ(saved.view, view);
  // ... and what made it: the action, the model's files, the policy.
  const nlohmann::json p = read_json_file(dir / "saved.json").at("provenance");
  EXPECT_TRUE(p.at("command_line").get<std::string>().ends_with(": save session " + (dir / "saved.json").string()))
      << p;
  EXPECT_FALSE(p.at("model").at("files").empty()) << p;
  EXPECT_EQ(p.at("policy").at("settings"), policy_to_json(saved.policy)) << p;
  EXPECT_EQ(p.at("device").at("backend"), "cpu") << p;
}

// Every lesson in assets/lessons opens as the CLI runs it: A to the end
// (or its view step) and B from its fork block. A lesson on a model fetched
// by tools/get-model.sh (none is, in this test's empty cache) shows an error
// that says how to fetch it, instead of running.
TEST_F(Worker, LessonsOpen) {
  const auto lessons = test::data_dir() / ".." / ".." / "assets" / "lessons";
  test::TempDir empty_cache;
  ::setenv("KVSCOPE_MODELS", empty_cache.path().c_str(), 1);
  int n = 0, need_download = 0;
  for (const auto& e : std::filesystem::directory_iterator(lessons)) {
    if (e.path().extension() != ".json") continue;
    SCOPED_TRACE(e.path().filename().string());
    ++n;
    // (status().error keeps the last error; a new one bumps error_serial)
    const uint64_t errors_before = w.status().error_serial;
    run([&] { w.open_file(e.path()); });
    const bool failed = w.status().error_serial != errors_before;
    const auto& names = fetchable_model_names();
    const std::string model = read_json_file(e.path()).value("model", "");
    if (std::find(names.begin(), names.end(), model) != names.end()) {
      ++need_download;
      EXPECT_TRUE(failed);
      EXPECT_NE(w.status().error.find("run tools/get-model.sh " + model), std::string::npos) << w.status().error;
      continue;
    }
    ASSERT_FALSE(failed) << w.status().error;
    SessionFile f = load_session_file(e.path().string());
    ASSERT_TRUE(f.cfg.lesson);
    EXPECT_FALSE(f.cfg.lesson->caption.empty());
    EXPECT_EQ(w.a()->config.lesson, f.cfg.lesson);
    EXPECT_EQ(w.a()->config.view, f.cfg.view);
    const int row = f.cfg.view.step.value_or(1 << 20);
    expect_same_run(*w.a(), *run_to(f.cfg, row));
    ASSERT_EQ(w.b() != nullptr, f.cfg.fork.has_value());
    if (f.cfg.fork) expect_same_run(*w.b(), *run_to(fork_branch_config(f.cfg), row));
  }
  ::unsetenv("KVSCOPE_MODELS");
  EXPECT_EQ(n, 8);
  EXPECT_EQ(need_download, 2);  // 7 (SmolLM2) and 8 (Gemma 3)
}

TEST_F(Worker, ResetGoesBackToThePromptAndDropsTheFork) {
  open(config(PolicyKind::H2O, "40%"));
  run([&] { w.step(3); });
  run([&] { w.fork(policy(PolicyKind::TOVA, "40%")); });
  run([&] { w.reset(); });
  EXPECT_EQ(w.a()->rows, 1);
  EXPECT_EQ(w.b(), nullptr);
}

}  // namespace
}  // namespace kvscope::gui
