// kvscope-cli policies [NAME] [--markdown]: the policy table, as the
// engine has it: every policy with the parameters it reads, their flags,
// defaults and help; --markdown prints docs/policies.md's generated section.
#include <cstdio>

#include "cli_common.h"
#include "cli_policy.h"
#include "common/error.h"
#include "policy/params.h"

namespace kvscope::cli {
namespace {

struct PoliciesArgs {
  std::string name;
  bool markdown = false;
};

void print_policy(const PolicySpec& p) {
  std::printf("%s  %s%s%s\n", p.name, p.help, *p.paper ? "  " : "", p.paper);
  for (const ParamUse& u : p.params) {
    const ParamSpec& param = *find_param(u.key);
    const std::string d = param_default(p, param);
    std::printf("  %-20s default %-10s %s\n", param_flag(param).c_str(), d.empty() ? "unset" : d.c_str(), param.what);
  }
}

void run_policies(const PoliciesArgs& a) {
  if (a.markdown) {
    std::fputs(policy_table_markdown().c_str(), stdout);
    return;
  }
  if (!a.name.empty()) {
    print_policy(policy_spec(parse_policy(a.name)));
    return;
  }
  for (const PolicySpec& p : policy_specs()) {
    print_policy(p);
    std::printf("\n");
  }
}

}  // namespace

void register_policies(CLI::App& app) {
  auto args = std::make_shared<PoliciesArgs>();
  CLI::App* cmd = app.add_subcommand("policies", "List the eviction policies, the parameters each reads and their defaults");
  cmd->add_option("name", args->name, "Only this policy");
  cmd->add_flag("--markdown", args->markdown, "Print docs/policies.md's generated parameter tables");
  cmd->callback([args] { run_policies(*args); });
}

}  // namespace kvscope::cli
