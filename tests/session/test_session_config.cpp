// Session files: round trip, versioning, and bad values named by file and field.
#include <gtest/gtest.h>

#include "common/error.h"
#include "session/session_config.h"
#include "session_fixture.h"
#include "test_util.h"

namespace kvscope {
namespace {

// The first error reading `json` (given format version 1 unless it states one).
std::string error_of(const std::string& json) {
  try {
    auto j = nlohmann::json::parse(json);
    if (j.is_object() && !j.contains("version")) j["version"] = 1;
    SessionConfig::from_json(j, "s.json");
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(SessionFile, RoundTrip) {
  SessionConfig c;
  c.prompt = "hello";
  c.continuation = " world";
  c.policy.kind = PolicyKind::Keyformer;
  c.policy.budget = Amount::parse("60%", "b");
  c.policy.window = Amount::parse("30%", "w");
  c.policy.noise = NoiseKind::Gaussian;
  c.policy.tau_end = 3;
  c.sharing = SharingLayout::parse("mlkv:2:1");
  c.recording.layers = {0, 2};
  c.export_opts.heatmaps = {{1, 2}};
  c.seed = 99;
  c.policy_changes.push_back({3, c.policy});
  test::TempDir dir;
  c.save(dir / "s.json");
  const SessionConfig d = SessionConfig::load(dir / "s.json");
  EXPECT_EQ(d.to_json(), c.to_json());
  EXPECT_EQ(d.policy.kind, PolicyKind::Keyformer);
  EXPECT_EQ(d.policy.seed, 99u);
  EXPECT_EQ(d.sharing.str(), "mlkv:2:1");
}

// The view a session opens on and a lesson's steps round-trip; a step's
// bad view names its index.
TEST(SessionFile, ViewAndLessonStepsRoundTrip) {
  SessionConfig c;
  c.prompt = "hello";
  c.view.positions = std::make_pair(3, 40);
  c.view.compare = "masks";
  c.view.evicted = "strip";
  LessonConfig lesson{"T", "intro", "look", {}};
  LessonStep step{"first", "", {}};
  step.view.layer = 1;
  step.view.mode = "mask";
  step.view.positions = std::make_pair(0, 9);
  lesson.steps = {step, LessonStep{"second", "there", {}}};
  c.lesson = lesson;
  test::TempDir dir;
  c.save(dir / "s.json");
  const SessionConfig d = SessionConfig::load(dir / "s.json");
  EXPECT_EQ(d.view, c.view);
  ASSERT_TRUE(d.lesson);
  EXPECT_EQ(*d.lesson, lesson);
  EXPECT_NE(
      error_of(R"({"prompt":"x","view":{"positions":[5,2]}})").find("s.json: view.positions: expected [first, last]"),
      std::string::npos);
  EXPECT_NE(error_of(R"({"prompt":"x","view":{"compare":"both"}})").find("s.json: view.compare"), std::string::npos);
  EXPECT_NE(error_of(R"({"prompt":"x","view":{"evicted":"hatch"}})").find("s.json: view.evicted"), std::string::npos);
  EXPECT_NE(
      error_of(R"({"prompt":"x","lesson":{"title":"t","steps":[{"caption":"a"},{"caption":"b","view":{"mode":"x"}}]}})")
          .find("s.json: lesson.steps[1].view.mode"),
      std::string::npos)
      << error_of(
             R"({"prompt":"x","lesson":{"title":"t","steps":[{"caption":"a"},{"caption":"b","view":{"mode":"x"}}]}})");
  EXPECT_NE(
      error_of(R"({"prompt":"x","lesson":{"title":"t","steps":[{"look_at":"a"}]}})").find("lesson.steps[0].caption"),
      std::string::npos);
}

// The policy in effect at a row: the last change at or before it.
TEST(SessionFile, PolicyAtRowFollowsTheChanges) {
  SessionConfig c;
  c.policy.kind = PolicyKind::H2O;
  PolicyParams tova;
  tova.kind = PolicyKind::TOVA;
  c.policy_changes.push_back({5, tova});
  EXPECT_EQ(policy_at_row(c, 0).kind, PolicyKind::H2O);
  EXPECT_EQ(policy_at_row(c, 4).kind, PolicyKind::H2O);
  EXPECT_EQ(policy_at_row(c, 5).kind, PolicyKind::TOVA);
  EXPECT_EQ(policy_since_row(c, 4), 0);
  EXPECT_EQ(policy_since_row(c, 9), 5);
}

// Half weights are a session setting (the CPU backend's matrices), written
// only when chosen, and a session run with them is the half-weight run.
TEST(SessionFile, HalfWeightsRoundTripAndReachTheBackend) {
  SessionConfig c = test::config(PolicyKind::H2O, "8");
  EXPECT_FALSE(c.to_json().contains("weights"));
  c.weights = "f16";
  test::TempDir dir;
  c.save(dir / "s.json");
  const SessionConfig d = SessionConfig::load(dir / "s.json");
  EXPECT_EQ(d.weights, "f16");
  Session half(test::bundle("llama_gqa"), d), full(test::bundle("llama_gqa"), test::config(PolicyKind::H2O, "8"));
  half.run_to_end();
  full.run_to_end();
  ASSERT_EQ(half.recorder().rows_recorded(), full.recorder().rows_recorded());
  // Same tokens are likely on a tiny model, but not the same numbers.
  const int last = full.recorder().rows_recorded() - 1;
  EXPECT_NE(half.recorder().attention(last, 1, 0, 0), full.recorder().attention(last, 1, 0, 0));
}

// The authors'-code options are written only when chosen, so default
// session files keep their bytes, and read back by name.
TEST(SessionFile, CodeVariantsRoundTripAndNameTheirField) {
  SessionConfig c;
  c.prompt = "hello";
  EXPECT_FALSE(c.to_json()["policy"].contains("keyformer_variant"));
  EXPECT_FALSE(c.to_json()["policy"].contains("a2sf_revision"));
  c.policy.keyformer_variant = KeyformerVariant::Code;
  c.policy.a2sf_revision = A2sfRevision::Latest;
  EXPECT_EQ(c.to_json()["policy"]["keyformer_variant"], "code");
  EXPECT_EQ(c.to_json()["policy"]["a2sf_revision"], "latest");
  const SessionConfig d = SessionConfig::from_json(c.to_json(), "s.json");
  EXPECT_EQ(d.policy.keyformer_variant, KeyformerVariant::Code);
  EXPECT_EQ(d.policy.a2sf_revision, A2sfRevision::Latest);
  EXPECT_NE(error_of(R"({"prompt":"x","policy":{"keyformer_variant":"released"}})")
                .find("s.json: policy.keyformer_variant: unknown Keyformer variant 'released'"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"prompt":"x","policy":{"a2sf_revision":"v2"}})").find("s.json: policy.a2sf_revision"),
            std::string::npos);
}

TEST(SessionFile, BadValuesNameFileAndField) {
  EXPECT_NE(error_of(R"({"prompt":"x","policy":{"name":"lru"}})").find("s.json: policy.name: unknown policy 'lru'"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"prompt":"x","policy":{"alpha":2}})").find("s.json: policy.alpha: must be in [0, 1]"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"prompt":"x","policy":{"tau_init":0}})").find("policy.tau_init: must be > 0"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"prompt":"x","policy":{"budget":"lots"}})").find("s.json: policy.budget: expected a count"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"prompt":"x","sharing":"gqa"})").find("s.json: sharing: unknown sharing layout 'gqa'"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"prompt":"x","version":7})").find("s.json: version: format version 7 is not supported"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"policy":{}})").find("s.json: prompt: missing"), std::string::npos);
  EXPECT_NE(error_of(R"({"prompt":"x","device":"tpu"})").find("device: must be cpu, cuda or auto"), std::string::npos);
  EXPECT_NE(error_of(R"({"prompt":"x","weights":"int8"})").find("s.json: weights: must be stored, f32 or f16"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"prompt":"x","recording":{"layers":"some"}})").find("recording.layers"), std::string::npos);
  EXPECT_NE(error_of(R"({"prompt":"x","export":{"heatmaps":[[1]]}})").find("export.heatmaps"), std::string::npos);
  EXPECT_NE(error_of(R"({"prompt":"x","sampling":{"top_p":0}})").find("s.json: sampling.top_p: must be in (0, 1]"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"prompt":"x","sampling":{"temperature":-1}})").find("s.json: sampling.temperature: must be >= 0"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"prompt":"x","export":{"colormap":"jet"}})").find("s.json: export.colormap: unknown colormap 'jet'"),
            std::string::npos);
}

TEST(SessionFile, FigureSettingsAreCheckedByField) {
  auto has = [](const std::string& json, const std::string& needle) {
    const std::string e = error_of(json);
    EXPECT_NE(e.find(needle), std::string::npos) << e;
  };
  has(R"({"prompt":"x","export":{"formats":["png","gif"]}})", "s.json: export.formats: unknown format 'gif'");
  has(R"({"prompt":"x","export":{"formats":[]}})", "s.json: export.formats: no format given");
  has(R"({"prompt":"x","export":{"formats":7}})", "s.json: export.formats: expected a list");
  has(R"({"prompt":"x","export":{"dpi":9999}})", "s.json: export.dpi: must be between 36 and 600");
  has(R"({"prompt":"x","export":{"range":"wide"}})", "s.json: export.range: expected auto, shared or LO:HI");
  has(R"({"prompt":"x","export":{"range":"0:1","scale":"log"}})", "s.json: export.range: a log scale needs LO > 0");
  has(R"({"prompt":"x","export":{"evicted":"hatch"}})", "s.json: export.evicted: must be outline, strip or none");
  has(R"({"prompt":"x","export":{"scale":"sqrt"}})", "s.json: export.scale: must be linear or log");
  has(R"({"prompt":"x","export":{"rnage":"auto"}})", "s.json: export.rnage: unknown key");
  has(R"({"prompt":"x","export":{"figure_size":"A4"}})",
      "s.json: export.figure_size: expected natural, column, page or WxH with a unit");
  has(R"({"prompt":"x","export":{"figure_size":"3.3x90in"}})",
      "s.json: export.figure_size: each side must be between 1 in and 40 in");
  has(R"({"prompt":"x","export":{"positions":"9:3"}})", "s.json: export.positions: A must not be above B");
  // Good values round-trip; defaults are not written (a default export's
  // session.json keeps its bytes), set ones are.
  auto j = nlohmann::json::parse(R"({"prompt":"x","version":1,"export":{"formats":"pdf","dpi":300,"range":"0:0.5","evicted":"outline"}})");
  const SessionConfig c = SessionConfig::from_json(j, "s.json");
  EXPECT_EQ(c.export_opts.formats, std::vector<std::string>{"pdf"});
  EXPECT_EQ(c.export_opts.dpi, 300);
  EXPECT_FALSE(c.export_opts.layer_head_chosen());
  const auto back = c.to_json()["export"];
  EXPECT_EQ(back["range"], "0:0.5");
  EXPECT_EQ(back["evicted"], "outline");
  const SessionConfig sized = SessionConfig::from_json(
      nlohmann::json::parse(R"({"prompt":"x","version":1,"export":{"figure_size":"column","positions":"0:63"}})"),
      "s.json");
  EXPECT_EQ(sized.export_opts.figure_size, "column");
  EXPECT_EQ(sized.to_json()["export"]["figure_size"], "column");
  EXPECT_EQ(sized.to_json()["export"]["positions"], "0:63");
  const auto plain = SessionConfig{}.to_json()["export"];
  EXPECT_FALSE(plain.contains("range") || plain.contains("formats") || plain.contains("dpi") ||
               plain.contains("evicted") || plain.contains("figure_size") || plain.contains("positions"));
  EXPECT_FALSE(plain.contains("layer") || plain.contains("head"));  // not chosen: not written as a choice of 0
  EXPECT_TRUE(SessionConfig::from_json(nlohmann::json::parse(R"({"prompt":"x","version":1,"export":{"head":2}})"), "s.json")
                  .export_opts.layer_head_chosen());
}

TEST(SessionFile, UnknownKeysAreRefusedNotIgnored) {
  // A misspelt key would otherwise leave its setting at the default.
  EXPECT_NE(error_of(R"({"prompt":"x","polcy":{"name":"h2o"}})").find("s.json: polcy: unknown key"), std::string::npos);
  EXPECT_NE(error_of(R"({"prompt":"x","policy":{"name":"h2o","bugdet":"50%"}})").find("s.json: policy.bugdet: unknown key"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"prompt":"x","recording":{"metric":false}})").find("recording.metric: unknown key"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"prompt":"x","export":{"layers":1}})").find("export.layers: unknown key"), std::string::npos);
  EXPECT_NE(error_of(R"({"prompt":"x","sampling":{"temp":1}})").find("sampling.temp: unknown key"), std::string::npos);
  EXPECT_NE(error_of(R"({"prompt":"x","policy_changes":[{"from_step":2,"policy":{},"x":1}]})")
                .find("policy_changes[0].x: unknown key"),
            std::string::npos);
  // What an export adds for the reader is accepted back.
  EXPECT_EQ(error_of(R"({"prompt":"x","resolved":{"k":3}})"), "(no error)");
}

TEST(SessionFile, VersionIsRequiredAndOnePromptSource) {
  try {
    SessionConfig::from_json(nlohmann::json::parse(R"({"prompt":"x"})"), "s.json");
    ADD_FAILURE() << "no error for a file without a version";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("s.json: version: missing"), std::string::npos) << e.what();
  }
  EXPECT_NE(error_of(R"({"prompt":"x","prompt_file":"p.txt"})").find("s.json: prompt: give one of"), std::string::npos);
  EXPECT_NE(error_of(R"({"prompt":"x","prompt_ids":[1,2]})").find("s.json: prompt: give one of"), std::string::npos);
  EXPECT_NE(error_of(R"({"prompt":"x","continuation":"y","continuation_ids":[3]})").find("s.json: continuation: give"),
            std::string::npos);
  // Empty fields, as exports write them, do not count as given.
  EXPECT_EQ(error_of(R"({"prompt":"","prompt_ids":[1,2],"continuation":null,"continuation_ids":[]})"), "(no error)");
}

TEST(SessionFile, SettingsCheckedAgainstTheModelNameTheFileAndField) {
  // Errors found when the Session meets the model (budget vs the prompt,
  // layouts vs the heads, layers, policy changes) still name the file and
  // the field, not the CLI flags the same checks name for a command line.
  auto session_error = [](const std::string& json) -> std::string {
    auto j = nlohmann::json::parse(json);
    j["version"] = 1;
    j["prompt"] = "The quick brown fox jumps over the lazy dog.";
    j["max_new_tokens"] = 3;
    try {
      Session s(test::bundle("llama_gqa"), SessionConfig::from_json(j, "s.json"));
    } catch (const Error& e) {
      return e.what();
    }
    return "(no error)";
  };
  EXPECT_NE(session_error(R"({"policy":{"name":"h2o","budget":"5","window":4,"sinks":3}})")
                .find("s.json: policy.budget: 5 is smaller than the recent window"),
            std::string::npos);
  EXPECT_NE(session_error(R"({"policy":{"name":"h2o","budget":1000}})").find("s.json: policy.budget: 1000 tokens is larger"),
            std::string::npos);
  EXPECT_NE(session_error(R"({"sharing":"gqa:3"})").find("s.json: sharing: "), std::string::npos);
  EXPECT_NE(session_error(R"({"export":{"layer":9}})").find("s.json: export.layer: unknown layer 9"), std::string::npos);
  EXPECT_NE(session_error(R"({"recording":{"layers":[7]}})").find("s.json: recording.layers: unknown layer 7"),
            std::string::npos);
  EXPECT_NE(session_error(R"({"policy_changes":[{"from_step":2,"policy":{"name":"h2o","budget":"1000"}}]})")
                .find("s.json: policy_changes[0].policy.budget: 1000 tokens is larger"),
            std::string::npos);
  EXPECT_NE(session_error(R"({"policy_changes":[{"from_step":9,"policy":{"name":"tova"}}]})")
                .find("s.json: policy_changes[0].from_step: step 9 comes after the run's last (3 new tokens)"),
            std::string::npos);
  EXPECT_EQ(session_error(R"({"policy":{"name":"h2o","budget":"50%"}})"), "(no error)");
}

}  // namespace
}  // namespace kvscope
