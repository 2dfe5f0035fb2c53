// The eviction flags shared by generate, score, eval and sweep: --policy,
// one flag per parameter of the policy table (--budget, --window, --alpha,
// ...: policy/policy_table.h), --sharing,
// plus --export, --export-layer/--export-head, --record-layers, --no-metrics,
// and the figure flags (--format, --dpi, --range, --evicted) that `run` and
// `sweep` share.
#pragma once

#include <CLI/CLI.hpp>

#include <map>
#include <optional>
#include <string>

#include "session/session_config.h"

namespace kvscope::cli {

// How exported figures are drawn; a flag left out keeps the session's (or
// the default) setting.
struct FigureFlags {
  std::vector<std::string> formats;  // --format png,svg,pdf (repeatable)
  std::optional<double> dpi;
  std::optional<std::string> range, evicted, figure_size, positions;
  // The heatmap flags of commands that export a session (generate, score,
  // run; add_heatmap_flags): --export-layer/--export-head (unset: the most
  // informative head), --colormap, --scale.
  std::optional<int> layer, head;
  std::optional<std::string> colormap, scale;
};
// Each flag's value is checked while parsing: a bad one is a one-line error
// naming the flag before any work.
struct PolicyFlags {
  std::string policy = "full", sharing = "native";
  // The policy table's parameters as typed, by key ("budget" -> "50%").
  std::map<std::string, std::string> params;
  // --budget-ratio R: the budget as kvpress's compression ratio, the same
  // as --budget ratio:R (the two exclude each other).
  std::string budget_ratio;
  // A parameter's value as typed, else the table's default ("100%" for budget).
  std::string text(const std::string& key) const;
  std::string weights = weight_format_name(kDefaultWeightFormat);  // --weights (backend/weight_format.h)
  std::string export_dir;
  std::vector<int> record_layers;
  std::vector<int> record_heads;
  double record_mb = 0;  // --record-mb (0: the session's default)
  bool no_metrics = false;
  FigureFlags figures;
  // The eviction flags the user typed (filled by add_policy_flags), so a
  // flag that the chosen policy ignores is named instead of dropped.
  std::vector<CLI::Option*> options;
  std::vector<CLI::Option*> other_options;  // --policy, --sharing, --record-*, --no-metrics, --weights
  bool given(const std::string& flag) const;

  // True when any flag asks for more than plain full-cache decoding.
  bool needs_session() const;
};

void add_figure_flags(CLI::App& cmd, FigureFlags& f);
// --export-layer, --export-head, --colormap and --scale into `f`; with
// over_file (run SESSION) their help says they are over the file's export
// block and shows no default.
void add_heatmap_flags(CLI::App& cmd, FigureFlags& f, bool over_file);
// Applies the given flags to `e`; throws kvscope::Error naming the flag when
// the combination does not work (--range 0:1 with --scale log).
void apply_figure_flags(const FigureFlags& f, ExportConfig& e);

void add_policy_flags(CLI::App& cmd, PolicyFlags& f, bool with_export = true);

// For commands whose flags override a file's settings (run SESSION): the
// flags' defaults are hidden from --help (the file's values apply, not
// them) and each help line says it is over the file's.
void mark_policy_flags_over_file(PolicyFlags& f);
// Fills the policy, sharing, recording and export parts of `cfg` (throws
// kvscope::Error naming the flag, also for a flag the chosen policy
// ignores: --alpha with tova, --budget with full, ...).
void apply_policy_flags(const PolicyFlags& f, SessionConfig& cfg);
// Only the flags the user typed, over a session file's settings (`run`).
void override_policy_flags(const PolicyFlags& f, SessionConfig& cfg);

}  // namespace kvscope::cli
