// The policy table: the one description of every eviction policy and of
// every parameter a policy reads (name, label, paper, kind, range,
// default, unit, help). The CLI builds its flags and refusals from it, the
// window its controls and tooltips, session files are read and written
// through it, and docs/policies.md's parameter tables are generated from it
// (`kvscope-cli policies --markdown`; a test fails when the doc is stale).
//
// Adding a policy (docs/adding-a-policy.md): its name in PolicyKind below,
// its file (policy/<name>.cpp, with its make function), and its row in
// policy_table.cpp. Adding a parameter: its row in policy_table.cpp; a
// parameter without a field of its own in PolicyParams is kept in
// PolicyParams::extra and read with PolicyParams::number.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kvscope {

// Every policy kvscope has, in the order the CLI, the window and the docs list them.
enum class PolicyKind {
  Full,
  Window,
  Sink,
  H2O,
  TOVA,
  Keyformer,
  A2SF,
  SnapKV,
  PyramidKV,
  Knorm,
  KeyDiff,
  Cur,
  LagKv,
  Leverage,
  Expected,
  Random,
  Ideal
};

struct Amount;
struct PolicyParams;
struct ResolvedPolicy;
struct ChoiceQuirks;
class Policy;

enum class ParamKind {
  Amount,  // a count or a percentage ("64", "50%")
  Count,   // a whole number
  Real,    // a real number
  Choice,  // one of a list of names
};

// Where a parameter's value lives in PolicyParams: exactly one is set (none
// for a parameter kept in PolicyParams::extra).
struct ParamField {
  Amount* (*amount)(PolicyParams&) = nullptr;
  std::optional<Amount>* (*optional_amount)(PolicyParams&) = nullptr;
  std::optional<int>* (*optional_count)(PolicyParams&) = nullptr;
  float* (*real)(PolicyParams&) = nullptr;
  // A choice: the index of the value in `choices` (-1: unset, the policy's default).
  int (*choice_index)(const PolicyParams&) = nullptr;
  void (*set_choice)(PolicyParams&, int index) = nullptr;
};

struct ParamSpec {
  const char* key;    // session-file key under "policy"; the field "policy.<key>"; the CLI flag --key (- for _)
  const char* label;  // the window's label
  const char* what;   // a noun phrase for messages ("A2SF's forgetting factor")
  ParamKind kind;
  const char* help;   // the window's tooltip, the CLI's --help, the docs
  const char* fallback;  // the default when a policy's row names none ("" for an optional parameter left unset)
  // Count and Real: the allowed range. min_open: min itself is not allowed.
  double min = 0, max = 0;
  bool min_open = false, has_max = false;
  const char* unit = "";        // "tokens"; an Amount's percentage is of `percent_of`
  const char* percent_of = "";  // Amount: "the prompt", "k"
  bool takes_ratio = false;     // Amount: may be a compression ratio ("ratio:0.25", the budget only)
  std::vector<const char*> choices = {};  // Choice: the names, in the window's order
  const char* noun = "";        // Choice: what one of them is called ("unknown noise 'x'")
  bool optional = false;        // may be unset (the policy's default applies)
  bool expert = false;          // shown in the window's expert section
  // A schedule or wrapper over the policy's ranking (kvpress's DecodingPress,
  // AdaKV, ChunkKV, CriticalKV): the window groups these under one
  // collapsible header, so the policy's own parameters stay in view.
  bool wrapper = false;
  bool log_scale = false;       // Real: the window's slider is logarithmic
  float slider_min = 0, slider_max = 0;  // Real/Count/Amount: the window's slider range (Amount: most tokens)
  float custom_start = 0;       // optional: the value a control starts from when the user sets it
  bool written_at_default = true;  // session files leave it out at its default (keeps older files' bytes)
  ParamField field = {};
};

// A parameter a policy reads, with that policy's default ("" : the
// parameter's own fallback).
struct ParamUse {
  const char* key;
  const char* default_text = "";
};

// How a policy's variant settings change the shared resolution rules
// (Keyformer's released code, A2SF's latest revision).
struct ResolveRules {
  bool truncate_percentages = false;  // int() as a Python reference does, instead of rounding
  std::optional<std::string> window_default;  // replaces the row's default for the recent window
};

struct PolicySpec {
  PolicyKind kind;
  const char* name;       // CLI and session files
  const char* label;      // the window's list
  const char* paper;      // where it comes from
  const char* help;       // one paragraph: the window's tooltip, the docs
  const char* statistic;  // what its score views show; nullptr: it keeps no statistic
  bool evicts;            // false: the cache stays whole (full, ideal)
  std::vector<ParamUse> params;
  std::unique_ptr<Policy> (*make)(const ResolvedPolicy&);
  // Optional: a variant's rules and quirks, from the settings (policy files).
  void (*variant)(const PolicyParams&, ResolveRules&, ChoiceQuirks&) = nullptr;

  bool uses(const std::string& key) const;
  const ParamUse* use(const std::string& key) const;
};

const std::vector<PolicySpec>& policy_specs();
const std::vector<ParamSpec>& param_specs();
const PolicySpec& policy_spec(PolicyKind kind);
const PolicySpec* find_policy(const std::string& name);
const ParamSpec* find_param(const std::string& key);

// The neutral field of a parameter ("policy.alpha"); "policy.name" for the policy itself.
std::string param_field(const ParamSpec& p);
// The command-line flag of a parameter: "--" and its key with '-' for '_'
// (tau_init -> --tau-init). The CLI builds its flags with it and the docs
// list it; engine messages name the field, never the flag.
std::string param_flag(const ParamSpec& p);

// A parameter's default for a policy, as text ("50%", "4", "layer"; "" when
// it has none: unset optional).
std::string param_default(const PolicySpec& policy, const ParamSpec& param);

// The value in `p` as text ("" for an unset optional), and setting it from
// text: parsed and range-checked, throwing Error::setting("policy.<key>", ...).
std::string param_text(const PolicyParams& p, const ParamSpec& param);
void set_param_text(PolicyParams& p, const ParamSpec& param, const std::string& text);
// A Real or Count kept in PolicyParams::extra: its value or the fallback.
double param_number(const PolicyParams& p, const ParamSpec& param);

// Every parameter's range, Error::setting naming the first one out of it.
void check_param_ranges(const PolicyParams& p);
// "must be in [0, 1]", "must be > 0", "must be >= 0": the rule of a
// Count or Real parameter, for messages and help.
std::string range_text(const ParamSpec& param);

// docs/policies.md's generated part: the policy list and each parameter's table.
std::string policy_table_markdown();

}  // namespace kvscope
