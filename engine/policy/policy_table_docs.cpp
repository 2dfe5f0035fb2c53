// docs/policies.md's generated section, written from the policy table: the
// policies with the parameters each reads, then one table per parameter.
// tests/policy/test_policy_table.cpp fails when the doc differs from this.
#include <string>

#include "policy/params.h"
#include "policy/policy_table.h"

namespace kvscope {
namespace {

const char* kind_text(const ParamSpec& p) {
  switch (p.kind) {
    case ParamKind::Amount: return "count or percentage";
    case ParamKind::Count: return "whole number";
    case ParamKind::Real: return "number";
    case ParamKind::Choice: return "choice";
  }
  return "";
}

// Table cells hold no '|'.
std::string cell(std::string s) {
  for (std::size_t i = 0; (i = s.find('|', i)) != std::string::npos; i += 2) s.replace(i, 1, "\\|");
  return s;
}

}  // namespace

std::string policy_table_markdown() {
  std::string md;
  md += "| policy | window label | reads | paper |\n|---|---|---|---|\n";
  for (const PolicySpec& p : policy_specs()) {
    std::string reads;
    for (const ParamUse& u : p.params) reads += std::string(reads.empty() ? "" : ", ") + "`" + u.key + "`";
    md += "| `" + std::string(p.name) + "` | " + p.label + " | " + reads + " | " + cell(*p.paper ? p.paper : "—") + " |\n";
  }
  for (const ParamSpec& param : param_specs()) {
    md += "\n### `" + std::string(param.key) + "`\n\n";
    md += cell(param.help) + "\n\n";
    md += "| | |\n|---|---|\n";
    md += "| CLI flag | `" + param_flag(param) + "` |\n";
    md += "| session file | `policy." + std::string(param.key) + "` |\n";
    md += "| window | " + std::string(param.label) + (param.expert ? " (expert view)" : "") + " |\n";
    std::string kind = kind_text(param);
    if (param.kind == ParamKind::Amount) kind += std::string(" (a percentage is of ") + param.percent_of + ")";
    if (param.kind == ParamKind::Choice) {
      std::string all;
      for (const char* c : param.choices) all += std::string(all.empty() ? "" : ", ") + "`" + c + "`";
      kind += ": " + all;
    }
    if (const std::string r = range_text(param); !r.empty()) kind += ", " + r;
    if (*param.unit) kind += std::string(", in ") + param.unit;
    md += "| value | " + kind + " |\n";
    // The parameter's own default, then the policies that differ from it.
    std::string defaults = *param.fallback ? std::string("`") + param.fallback + "`" : std::string("unset");
    std::string differ;
    for (const PolicySpec& p : policy_specs()) {
      if (!p.uses(param.key) || param_default(p, param) == param.fallback) continue;
      differ += std::string(differ.empty() ? "" : ", ") + p.name + " `" + param_default(p, param) + "`";
    }
    if (!differ.empty()) defaults += "; " + differ;
    md += "| default | " + defaults + " |\n";
  }
  return md;
}

}  // namespace kvscope
