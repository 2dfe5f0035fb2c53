// A session: everything needed to reproduce a run bit for bit — model,
// device, prompt, continuation, sampling, policy and its parameters, the
// sharing layout, what to record and export, seed. Stored as versioned JSON
// (session.json); the CLI flags and the window edit the same struct.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/error.h"

#include "backend/sampler.h"
#include "backend/weight_format.h"
#include "kv/sharing.h"
#include "policy/params.h"

namespace kvscope {

inline constexpr int kSessionFormatVersion = 1;

struct RecordingConfig {
  std::vector<int> layers;      // layers whose attention rows are recorded; empty = all that fit the budget
  std::vector<int> heads;       // query heads recorded in those layers; empty = every head
  double memory_mb = 512;       // recorder budget for attention rows
  bool metrics = true;          // shadow full-cache run and per-step metrics
};

struct ExportConfig {
  // The layer / query head of the CSV twins and the single heatmap. Unset
  // (neither given): the CSV twins are of layer 0, head 0, and the pictures
  // of the most informative head (reports/informative_head.h).
  std::optional<int> layer, head;
  std::vector<std::pair<int, int>> heatmaps;  // (layer, head) pairs drawn; empty = the one above
  std::string colormap = "viridis";
  std::string scale = "linear";  // or "log"
  std::string range = "shared";  // colour range: auto, shared or LO:HI (io/figure_settings.h)
  std::vector<std::string> formats = {"png"};  // png, svg, pdf
  double dpi = 150;               // PNG pixels per inch
  std::string evicted = "strip";  // strip, outline or none
  std::string figure_size = "natural";  // natural, column, page or WxH with a unit (io/figure_settings.h)
  std::string positions = "all";        // heatmap key positions drawn: all or A:B

  bool layer_head_chosen() const { return layer.has_value() || head.has_value(); }
  int csv_layer() const { return layer.value_or(0); }
  int csv_head() const { return head.value_or(0); }
};

// "" when the figure settings of an export block are usable, else
// "<field>: <what is wrong>" (for callers that add the file or the flag).
std::string check_figure_settings(const ExportConfig& e);

// "fork": a second configuration B that goes on from row `at_step` of this
// run under `policy` (the window's Fork, the CLI's run exports it to
// DIR/fork). B is this run's settings with the policy changes up to
// at_step, then `policy` from step at_step + 1 (fork_branch_config).
struct ForkConfig {
  int at_step = 0;
  PolicyParams policy;
};

// "view": what the window shows first (the CLI ignores it): the layer and
// query head (unset: the informative head), the view mode, the timeline
// step (unset: the latest), the colour settings of the main view, and the
// positions [first, last] to open on (unset: all of them), so a long
// prompt opens on the region its lesson talks about.
struct ViewConfig {
  std::optional<int> layer, head;
  std::string mode = "attention";  // attention, mask, statistic, diff_full, diff_fork, ideal
  std::optional<int> step;
  std::optional<std::pair<int, int>> positions;
  std::string compare = "attention";  // diff_fork's third panel: "attention" (A - B) or "masks" (A vs B)
  std::optional<std::string>
      evicted;  // how evicted cells show: "outline" (a tint when small), "strip", "none"; unset: the user's choice
  bool shared_range = false;
  std::vector<int> bookmarks;  // positions whose eviction raises an alert

  bool operator==(const ViewConfig&) const = default;
};
inline const char* const kViewModes[] = {"attention", "mask", "statistic", "diff_full", "diff_fork", "ideal"};

// One step of a lesson: what to read and where the window goes when the
// presenter presses Next (any of the view's fields; the rest stay).
struct LessonStep {
  std::string caption, look_at;
  ViewConfig view;
  bool operator==(const LessonStep&) const = default;
};

// "lesson": a teaching session's caption (assets/lessons) and its steps.
struct LessonConfig {
  std::string title, caption, look_at;
  std::vector<LessonStep> steps;
  bool operator==(const LessonConfig&) const = default;
};

struct SessionConfig;
// The policy in effect at timeline row `row` (row 0: the prefill): the
// last policy change whose from_step is at or before it, else the policy.
// And the first row it has been in effect since.
const PolicyParams& policy_at_row(const SessionConfig& c, int row);
int policy_since_row(const SessionConfig& c, int row);

struct SessionConfig {
  std::string model;             // model directory; empty = the bundled default
  std::string device = "cpu";    // cpu, cuda, auto
  std::string weights =
      weight_format_name(kDefaultWeightFormat);  // the CPU backend's matrices (backend/weight_format.h)
  std::string prompt;
  std::optional<std::string> continuation;  // teacher-forced text instead of sampling
  // Token ids that replace the texts above when set (an exact split of a
  // scored text; eval items).
  std::vector<int> prompt_ids, continuation_ids;
  int max_new_tokens = 32;
  bool stop_at_eos = true;
  SamplingParams sampling;
  PolicyParams policy;
  SharingLayout sharing;
  RecordingConfig recording;
  ExportConfig export_opts;
  uint64_t seed = 0;  // keys every random draw (sampling, Keyformer noise, random policy)
  // Policy changes made during the run ("from now on" at row `first`), so a
  // replay of the session reproduces them.
  struct PolicyChange {
    int from_step = 0;
    PolicyParams policy;
  };
  std::vector<PolicyChange> policy_changes;
  std::optional<ForkConfig> fork;
  ViewConfig view;
  std::optional<LessonConfig> lesson;
  // The session file this was read from (empty when built from flags or by
  // the app): errors found later, when a Session checks the settings
  // against the model, name this file and its fields instead of the flags.
  std::string source;

  nlohmann::json to_json() const;
  // Throws kvscope::Error("<source>", "policy.alpha", ...) for bad values.
  static SessionConfig from_json(const nlohmann::json& j, const std::string& source);
  static SessionConfig load(const std::filesystem::path& path);
  void save(const std::filesystem::path& path) const;
};

// The settings of the fork branch B of a config with a "fork" block: its
// policy changes up to fork.at_step, then fork.policy from at_step + 1; no
// fork block of its own. Continuing A.fork() at row at_step under
// set_policy(fork.policy) gives the same run bit for bit.
SessionConfig fork_branch_config(const SessionConfig& a);

// An error about a setting, read from a session file: "policy.budget: ..."
// becomes "s.json: policy.budget: ..."; one that names its source is kept.
Error session_file_error(const Error& e, const std::string& source);

// Policy parameters <-> the JSON object under "policy".
nlohmann::json policy_to_json(const PolicyParams& p);
PolicyParams policy_from_json(const nlohmann::json& j, const std::string& source, const std::string& prefix);

}  // namespace kvscope
