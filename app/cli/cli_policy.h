// The eviction flags shared by generate, score, eval and sweep:
// --policy --budget --window --sinks --granularity --prefill --positions
// --tau-init --tau-end --tau-schedule --noise --alpha --reduce --sharing,
// plus --export, --export-layer/--export-head, --record-layers, --no-metrics.
#pragma once

#include <CLI/CLI.hpp>

#include <optional>
#include <string>

#include "session/session_config.h"

namespace kvscope::cli {

struct PolicyFlags {
  std::string policy = "full", budget = "100%", window, granularity, prefill = "one_shot", positions = "original";
  std::optional<int> sinks;
  float tau_init = 1, tau_end = 2, alpha = 0.2f;
  std::string tau_schedule = "linear", noise = "gumbel", reduce = "mean", sharing = "native";
  std::string export_dir;
  int export_layer = 0, export_head = 0;
  std::string colormap = "viridis", scale = "linear";
  std::vector<int> record_layers;
  bool no_metrics = false;

  // True when any flag asks for more than plain full-cache decoding.
  bool needs_session() const;
};

void add_policy_flags(CLI::App& cmd, PolicyFlags& f, bool with_export = true);
// Fills the policy, sharing, recording and export parts of `cfg` (throws
// kvscope::Error naming the flag).
void apply_policy_flags(const PolicyFlags& f, SessionConfig& cfg);

}  // namespace kvscope::cli
