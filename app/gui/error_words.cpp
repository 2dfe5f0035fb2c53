#include "error_words.h"

#include <utility>

#include "policy/policy_table.h"

namespace kvscope::gui {

std::string control_for_field(const std::string& field) {
  // The controls of the prompt and policy panels that are not policy parameters.
  static const std::pair<const char*, const char*> kControls[] = {
      {"policy.name", "policy"},         {"sharing", "KV sharing"},
      {"device", "device"},              {"weights", "weights"},
      {"prompt", "prompt"},              {"prompt_ids", "prompt"},
      {"max_new_tokens", "max new tokens"}, {"sampling.temperature", "temperature"},
      {"sampling.top_k", "top k"},       {"sampling.top_p", "top p"}};
  // A fork's or a scheduled change's policy reads as that policy's control.
  std::string rest = field, where;
  for (const char* prefix : {"fork.", "policy_changes"}) {
    if (rest.rfind(prefix, 0) != 0) continue;
    const auto dot = rest.find("policy.", 1);
    if (dot == std::string::npos) break;
    where = std::string(prefix) == "fork." ? "fork B, " : "scheduled change, ";
    rest = rest.substr(dot);
  }
  for (const auto& [f, label] : kControls)
    if (rest == f) return where + label;
  const std::string policy = "policy.";
  if (rest.rfind(policy, 0) == 0)
    if (const ParamSpec* p = find_param(rest.substr(policy.size()))) return where + p->label;
  return "";
}

std::string in_window_words(const Error& e) {
  if (!e.is_setting()) return e.what();
  const std::string control = control_for_field(e.field());
  return control.empty() ? e.what() : e.renamed(control).what();
}

}  // namespace kvscope::gui
