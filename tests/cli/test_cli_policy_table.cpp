// The CLI takes, for each policy, exactly the parameters of the policy
// table that the policy reads: every flag of the table typed with every
// policy, accepted where the table says the policy reads it and refused
// in one line otherwise. The window is held to the same table in
// tests/gui/test_gui_window.cpp (PolicyControlsAreThePolicyTables).
#include <gtest/gtest.h>

#include "policy/params.h"
#include "policy/policy_table.h"
#include "test_util.h"

namespace kvscope {
namespace {

TEST(CliPolicyTable, EachPolicyTakesTheFlagsItReads) {
  const std::string base = "generate " + test::quote(test::model_dir("llama_gqa").string()) +
                           " --prompt 'The quick brown fox jumps over the lazy dog' --max-new-tokens 1";
  for (const PolicySpec& policy : policy_specs()) {
    for (const ParamSpec& param : param_specs()) {
      // A value the parameter takes: the policy's default, else its fallback.
      std::string value = param_default(policy, param);
      if (value.empty()) value = param.fallback;
      if (value.empty() && param.kind == ParamKind::Choice) value = param.choices.front();
      // An optional count without a default (the decoding schedule's
      // interval): the value the window starts from when it is ticked.
      if (value.empty() && param.optional) value = std::to_string(static_cast<int>(param.custom_start));
      if (std::string(param.key) == "budget") value = "80%";
      // A window default in tokens (snapkv's 64) shrinks to a small budget
      // only while unset: typed, it must fit this short prompt's budget.
      if (std::string(param.key) == "window" && value.back() != '%') value = "2";
      std::string args = base + " --policy " + policy.name;
      if (policy.uses("budget") && std::string(param.key) != "budget") args += " --budget 80%";
      args += " " + param_flag(param) + " " + test::quote(value);
      const auto r = test::run_cli(args);
      if (policy.uses(param.key)) {
        EXPECT_EQ(r.exit_code, 0) << args << "\n" << r.output;
      } else {
        EXPECT_EQ(r.exit_code, 1) << args << "\n" << r.output;
        EXPECT_NE(r.output.find("kvscope-cli: error: " + param_flag(param) + ": has no effect with --policy " +
                                policy.name),
                  std::string::npos)
            << r.output;
        EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
      }
    }
  }
}

// --help lists every flag of the table with its help.
TEST(CliPolicyTable, HelpListsEveryParameter) {
  const auto r = test::run_cli("generate --help");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  for (const ParamSpec& param : param_specs()) EXPECT_NE(r.output.find(param_flag(param)), std::string::npos) << param.key;
}

}  // namespace
}  // namespace kvscope
