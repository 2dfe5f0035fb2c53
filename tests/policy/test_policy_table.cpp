// The policy table (policy/policy_table.h) is the one description of every
// policy and parameter: these tests hold it to what the rest of the engine
// does with it (names that parse back, defaults that resolve, session
// files that round-trip), keep docs/policies.md's generated section in
// step with it, and check that no engine message names a CLI flag.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "common/error.h"
#include "policy/params.h"
#include "policy/policy.h"
#include "policy/policy_table.h"
#include "session/session_config.h"

namespace kvscope {
namespace {

namespace fs = std::filesystem;
const fs::path kRepo = fs::path(KVSCOPE_TEST_DATA) / ".." / "..";

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(PolicyTable, EveryKindHasOneRowAndEveryUseAParameter) {
  std::set<std::string> names;
  for (const PolicySpec& p : policy_specs()) {
    EXPECT_TRUE(names.insert(p.name).second) << "two rows named " << p.name;
    EXPECT_EQ(&policy_spec(p.kind), &p) << p.name;
    EXPECT_EQ(parse_policy(p.name), p.kind);
    EXPECT_STREQ(policy_name(p.kind), p.name);
    EXPECT_NE(p.make, nullptr) << p.name;
    EXPECT_GT(std::string(p.help).size(), 20u) << p.name;
    for (const ParamUse& u : p.params) EXPECT_NE(find_param(u.key), nullptr) << p.name << " reads " << u.key;
  }
  // The enumerators in order: each has its row.
  for (int k = 0; k <= static_cast<int>(PolicyKind::Ideal); ++k)
    EXPECT_NO_THROW(policy_spec(static_cast<PolicyKind>(k))) << k;
  std::set<std::string> keys;
  for (const ParamSpec& s : param_specs()) {
    EXPECT_TRUE(keys.insert(s.key).second) << "two parameters keyed " << s.key;
    EXPECT_GT(std::string(s.help).size(), 20u) << s.key;
    if (s.kind == ParamKind::Choice) {
      EXPECT_FALSE(s.choices.empty()) << s.key;
      EXPECT_GT(std::string(s.noun).size(), 0u) << s.key;
    }
  }
}

// Each policy with its table defaults resolves, and a built policy ranks
// as its row says (a statistic to show, or none).
TEST(PolicyTable, DefaultsResolveForEveryPolicy) {
  for (const PolicySpec& spec : policy_specs()) {
    PolicyParams p;
    p.kind = spec.kind;
    p.budget = Amount::parse("50%", "policy.budget");
    const ResolvedPolicy r = resolve_policy(p, 100, 512);
    EXPECT_EQ(r.evicts, spec.evicts) << spec.name;
    for (const ParamUse& u : spec.params) {
      const ParamSpec& param = *find_param(u.key);
      // A default the policy row names must be a value the parameter takes.
      const std::string d = param_default(spec, param);
      if (d.empty()) continue;
      PolicyParams q = p;
      EXPECT_NO_THROW(set_param_text(q, param, d)) << spec.name << " " << param.key << " = " << d;
    }
    const auto policy = make_policy(r);
    EXPECT_EQ(policy->kind(), spec.kind);
    // A policy whose score views show a statistic ranks by one (or by a
    // random draw); one without ranks by position or not at all.
    const bool scores = policy->ranking() == Ranking::Statistic || policy->ranking() == Ranking::Random;
    EXPECT_EQ(spec.statistic != nullptr, scores) << spec.name;
  }
}

// Every parameter set away from its default through the table comes back
// from a session file the same, and its text form round-trips.
TEST(PolicyTable, EveryParameterRoundTripsThroughSessionFiles) {
  for (const ParamSpec& param : param_specs()) {
    PolicyParams p;
    p.kind = PolicyKind::Keyformer;
    std::string value;
    switch (param.kind) {
      case ParamKind::Amount: value = "37%"; break;
      case ParamKind::Count: value = "3"; break;
      case ParamKind::Real: value = param.has_max ? "0.75" : "3.5"; break;
      case ParamKind::Choice: value = param.choices.back(); break;
    }
    set_param_text(p, param, value);
    EXPECT_EQ(param_text(p, param), value) << param.key;
    const PolicyParams back = policy_from_json(policy_to_json(p), "s.json", "policy");
    EXPECT_EQ(param_text(back, param), value) << param.key;
    EXPECT_EQ(policy_to_json(back), policy_to_json(p)) << param.key;
  }
}

TEST(PolicyTable, BadValuesNameTheFieldNotAFlag) {
  PolicyParams p;
  EXPECT_EQ(error_of([&] { set_param_text(p, *find_param("granularity"), "head"); }),
            "policy.granularity: unknown granularity 'head' (choose from kv_head, layer, model)");
  EXPECT_EQ(error_of([&] { set_param_text(p, *find_param("alpha"), "abc"); }), "policy.alpha: expected a number, got 'abc'");
  EXPECT_EQ(error_of([&] { set_param_text(p, *find_param("sinks"), "2.5"); }), "policy.sinks: expected a whole number, got '2.5'");
  p.alpha = 2;
  EXPECT_EQ(error_of([&] { check_param_ranges(p); }), "policy.alpha: must be in [0, 1]");
  p.alpha = 0.5f;
  p.tau_end = INFINITY;
  EXPECT_EQ(error_of([&] { check_param_ranges(p); }), "policy.tau_end: must be finite");
  p.tau_end = 2;
  p.sinks = -1;
  EXPECT_EQ(error_of([&] { check_param_ranges(p); }), "policy.sinks: must be >= 0");
  // A whole-number bound in every digit, not %g's 1.04858e+06.
  EXPECT_EQ(range_text(*find_param("future_positions")), "must be in [1, 1048576]");
  // A session file names its JSON path (here under the fork block).
  EXPECT_EQ(error_of([] { policy_from_json(nlohmann::json{{"alpha", 3}}, "s.json", "fork.policy"); }),
            "s.json: fork.policy.alpha: must be in [0, 1]");
  EXPECT_EQ(error_of([] { policy_from_json(nlohmann::json{{"noise", "pink"}}, "s.json", "policy"); }),
            "s.json: policy.noise: unknown noise 'pink' (choose from gumbel, gaussian, constant, none)");
}

// A parameter without a field of its own (a new policy's) lives in
// PolicyParams::extra: it reads its fallback until set, is parsed and
// range-checked like the others.
TEST(PolicyTable, ParametersWithoutAFieldLiveInExtra) {
  ParamSpec kernel{"pool_kernel", "pooling kernel", "the pooling kernel", ParamKind::Count, "help text", "5"};
  kernel.min = 1;
  PolicyParams p;
  EXPECT_EQ(param_number(p, kernel), 5);
  EXPECT_EQ(param_text(p, kernel), "5");
  set_param_text(p, kernel, "7");
  EXPECT_EQ(p.extra.at("pool_kernel"), 7);
  EXPECT_EQ(param_text(p, kernel), "7");
  EXPECT_EQ(error_of([&] { set_param_text(p, kernel, "x"); }), "policy.pool_kernel: expected a whole number, got 'x'");
  EXPECT_THROW(p.number("no_such_parameter"), Error);
}

// docs/policies.md carries the table between two markers; regenerate it
// with `kvscope-cli policies --markdown` (docs/adding-a-policy.md).
TEST(PolicyTable, DocsAreGeneratedFromTheTable) {
  const std::string doc = read_text(kRepo / "docs" / "policies.md");
  const std::string begin = "<!-- policy table: begin (generated by `kvscope-cli policies --markdown`; do not edit) -->\n";
  const std::string end = "<!-- policy table: end -->";
  const auto b = doc.find(begin);
  const auto e = doc.find(end);
  ASSERT_NE(b, std::string::npos) << "docs/policies.md has no generated policy table";
  ASSERT_NE(e, std::string::npos);
  EXPECT_EQ(doc.substr(b + begin.size(), e - b - begin.size()), "\n" + policy_table_markdown() + "\n")
      << "docs/policies.md is stale: run tools/update-policy-docs.sh";
}

// The engine words no front end's names: a message names the field
// ("policy.budget"), and the CLI, session files and the window rename it.
// Any string literal in engine/ that starts with a flag ("--budget") fails.
TEST(PolicyTable, NoEngineMessageNamesACliFlag) {
  const std::regex flag_literal(R"re("--[a-z])re");
  std::vector<std::string> hits;
  int files = 0;
  for (const auto& entry : fs::recursive_directory_iterator(kRepo / "engine")) {
    const std::string ext = entry.path().extension().string();
    if (ext != ".cpp" && ext != ".h" && ext != ".cu" && ext != ".cuh") continue;
    ++files;
    std::ifstream in(entry.path());
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
      const auto comment = line.find("//");
      const std::string code = comment == std::string::npos ? line : line.substr(0, comment);
      if (std::regex_search(code, flag_literal))
        hits.push_back(fs::relative(entry.path(), kRepo).string() + ":" + std::to_string(n) + ": " + line);
    }
  }
  EXPECT_GT(files, 100);
  std::string all;
  for (const auto& h : hits) all += h + "\n";
  EXPECT_TRUE(hits.empty()) << "engine code that names a CLI flag:\n" << all;
}

}  // namespace
}  // namespace kvscope
