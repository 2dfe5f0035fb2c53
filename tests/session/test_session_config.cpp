// Session files: round trip, versioning, and bad values named by file and field.
#include <gtest/gtest.h>

#include "common/error.h"
#include "session/session_config.h"
#include "test_util.h"

namespace kvscope {
namespace {

std::string error_of(const std::string& json) {
  try {
    SessionConfig::from_json(nlohmann::json::parse(json), "s.json");
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
  EXPECT_NE(error_of(R"({"prompt":"x","recording":{"layers":"some"}})").find("recording.layers"), std::string::npos);
  EXPECT_NE(error_of(R"({"prompt":"x","export":{"heatmaps":[[1]]}})").find("export.heatmaps"), std::string::npos);
  EXPECT_NE(error_of(R"({"prompt":"x","sampling":{"top_p":0}})").find("sampling"), std::string::npos);
}

}  // namespace
}  // namespace kvscope
