#include "cli_policy.h"

#include <algorithm>

#include "cli_common.h"
#include "common/error.h"
#include "figures/canvas.h"
#include "figures/color_scale.h"
#include "figures/heatmap_panel.h"
#include "io/colormap.h"

namespace kvscope::cli {

bool PolicyFlags::given(const std::string& flag) const {
  for (const auto* list : {&options, &other_options})
    for (const CLI::Option* o : *list)
      if (o->check_lname(flag.substr(2)) && o->count() > 0) return true;
  return false;
}

namespace {

// Which policies read each eviction flag (docs/policies.md). A flag typed for a
// policy that ignores it is an error: the run would silently differ from
// what the user asked for.
struct FlagUse {
  const char* flag;
  std::vector<PolicyKind> used_by;
  const char* what;
};

const std::vector<FlagUse>& flag_uses() {
  using K = PolicyKind;
  const std::vector<K> evicting = {K::Window, K::Sink, K::H2O, K::TOVA, K::Keyformer, K::A2SF, K::Random, K::Ideal};
  const std::vector<K> scoring = {K::H2O, K::TOVA, K::Keyformer, K::A2SF, K::Ideal};
  static const std::vector<FlagUse> uses = {
      {"--budget", evicting, "the KV budget"},
      {"--window", evicting, "the protected recent window"},
      {"--sinks", evicting, "the protected first positions"},
      {"--granularity", {K::H2O, K::TOVA, K::Keyformer, K::A2SF, K::Random, K::Ideal}, "the decision unit"},
      {"--positions", evicting, "the position mode of kept keys"},
      {"--reduce", scoring, "how a KV head's readers combine their scores"},
      {"--tau-init", {K::Keyformer}, "Keyformer's temperature"},
      {"--tau-end", {K::Keyformer}, "Keyformer's temperature"},
      {"--tau-schedule", {K::Keyformer}, "Keyformer's temperature schedule"},
      {"--noise", {K::Keyformer}, "Keyformer's score noise"},
      {"--keyformer-variant", {K::Keyformer}, "the choice between Keyformer's paper and its released code"},
      {"--alpha", {K::A2SF}, "A2SF's forgetting factor"},
      {"--a2sf-revision", {K::A2SF}, "the revision of A2SF's code to follow"},
  };
  return uses;
}

void check_flags_have_effect(const PolicyFlags& f, PolicyKind kind) {
  for (const FlagUse& u : flag_uses()) {
    if (!f.given(u.flag) || std::find(u.used_by.begin(), u.used_by.end(), kind) != u.used_by.end()) continue;
    std::string users;
    for (PolicyKind k : u.used_by) users += std::string(users.empty() ? "" : ", ") + policy_name(k);
    throw Error(u.flag, "", std::string("has no effect with --policy ") + policy_name(kind) + " (" + u.what +
                                " is used by " + users + ")");
  }
}

}  // namespace

bool PolicyFlags::needs_session() const {
  // Any eviction flag typed also goes through the session, whose settings
  // check names a flag the policy would ignore.
  const bool eviction_flag = std::any_of(options.begin(), options.end(), [](const CLI::Option* o) { return o->count() > 0; });
  return policy != "full" || sharing != "native" || !export_dir.empty() || prefill != "one_shot" || eviction_flag;
}

void add_figure_flags(CLI::App& cmd, FigureFlags& f) {
  cmd.add_option("--format", f.formats, "Figure formats: png, svg, pdf (a comma list, or the flag repeated)")
      ->delimiter(',')
      ->check(CLI::Validator([](std::string& name) { return check_figure_formats({name}); }, "png|svg|pdf"));
  cmd.add_option("--dpi", f.dpi, "Pixels per inch of PNG figures (default 150)")
      ->check(CLI::Validator([](std::string& v) {
        try {
          std::size_t used = 0;
          const double d = std::stod(v, &used);
          if (used != v.size()) return std::string("expected a number, got '" + v + "'");
          return check_dpi(d);
        } catch (const std::exception&) {
          return std::string("expected a number, got '" + v + "'");
        }
      }, "N"));
  cmd.add_option("--range", f.range,
                 "Heatmap colour range: shared (one range over every figure exported together; the default), "
                 "auto (each figure its own) or LO:HI")
      ->check(CLI::Validator([](std::string& r) { return check_range(r, ScaleKind::linear); }, "auto|shared|LO:HI"));
  cmd.add_option("--evicted", f.evicted, "How heatmaps show evicted cells: strip (a mask panel under the heatmap; the default), outline or none")
      ->check(CLI::Validator([](std::string& s) { return check_evicted_style(s); }, "outline|strip|none"));
}

void apply_figure_flags(const FigureFlags& f, ExportConfig& e) {
  if (!f.formats.empty()) e.formats = f.formats;
  if (f.dpi) e.dpi = *f.dpi;
  if (f.range) e.range = *f.range;
  if (f.evicted) e.evicted = *f.evicted;
  if (const std::string bad = check_range(e.range, parse_scale(e.scale)); !bad.empty())
    throw Error(f.range ? "--range" : "--scale", "", bad);
}

void add_policy_flags(CLI::App& cmd, PolicyFlags& f, bool with_export) {
  cmd.add_option("--policy", f.policy, "full, window, sink, h2o, tova, keyformer, a2sf, random, ideal")->default_val("full");
  cmd.add_option("--budget", f.budget, "KV slots kept per unit: a count (64) or a percentage of the prompt (50%)")
      ->default_val("100%");
  cmd.add_option("--window", f.window, "Recent tokens always kept: a count or a percentage of the budget");
  cmd.add_option("--sinks", f.sinks, "First positions always kept");
  cmd.add_option("--granularity", f.granularity, "kv_head, layer or model (default per policy)");
  cmd.add_option("--prefill", f.prefill, "one_shot or streaming")->default_val("one_shot");
  cmd.add_option("--positions", f.positions, "original or compacted (keys re-rotated to their slots)")
      ->default_val("original");
  cmd.add_option("--tau-init", f.tau_init, "Keyformer: temperature at the prompt")->default_val(1);
  cmd.add_option("--tau-end", f.tau_end, "Keyformer: temperature after the planned tokens")->default_val(2);
  cmd.add_option("--tau-schedule", f.tau_schedule, "Keyformer: linear or constant")->default_val("linear");
  cmd.add_option("--noise", f.noise, "Keyformer: gumbel, gaussian, constant or none")->default_val("gumbel");
  cmd.add_option("--keyformer-variant", f.keyformer_variant,
                 "Keyformer: paper, or code (the released attention.py: k - 1 kept, key tokens frozen after the "
                 "prompt, a zero window never evicts, percentages truncated)")
      ->default_val("paper");
  cmd.add_option("--alpha", f.alpha, "A2SF forgetting factor in [0, 1]")->default_val(0.2);
  cmd.add_option("--a2sf-revision", f.a2sf_revision,
                 "A2SF code revision: earlier (evicts every step, the paper) or latest (compresses once after the "
                 "prompt with a 16-token window, then never evicts)")
      ->default_val("earlier");
  cmd.add_option("--reduce", f.reduce, "How a KV head's readers combine: mean or max")->default_val("mean");
  cmd.add_option("--sharing", f.sharing, "KV layout: native, mha, gqa:G, mqa, mlkv:M, mlkv:M:G (averaged K/V)")
      ->default_val("native");
  add_weights_opt(cmd, f.weights);
  cmd.add_option("--record-layers", f.record_layers, "Layers whose attention is recorded (default: all that fit)");
  cmd.add_flag("--no-metrics", f.no_metrics, "Skip the shadow full-cache run and its metrics");
  for (const char* name : {"--budget", "--window", "--sinks", "--granularity", "--positions", "--reduce", "--tau-init",
                           "--tau-end", "--tau-schedule", "--noise", "--keyformer-variant", "--alpha",
                           "--a2sf-revision"})
    f.options.push_back(cmd.get_option(name));
  for (const char* name : {"--policy", "--sharing", "--prefill", "--record-layers", "--no-metrics", "--weights"})
    f.other_options.push_back(cmd.get_option(name));
  if (!with_export) return;
  cmd.add_option("--export", f.export_dir, "Write masks, attention, scores, CSVs and heatmaps to this directory")
      ->check(nonempty_dir_name());
  cmd.add_option("--export-layer", f.export_layer,
                 "Layer of the CSV twins and heatmaps (default: the CSV twins of layer 0, the figures of the most "
                 "informative head)");
  cmd.add_option("--export-head", f.export_head, "Query head of the CSV twins and heatmaps (see --export-layer)");
  // Checked while parsing, with or without --export: a bad name fails
  // before the run, not in the export after it.
  cmd.add_option("--colormap", f.colormap, "viridis, magma, inferno, gray, coolwarm")
      ->check(CLI::Validator([](std::string& name) { return unknown_colormap(name); }, ""))
      ->default_val("viridis");
  cmd.add_option("--scale", f.scale, "Heatmap scale: linear or log")->check(CLI::IsMember({"linear", "log"}))->default_val("linear");
  add_figure_flags(cmd, f.figures);
}

namespace {

// The policy, sharing and recording flags into `cfg`: every one (with its
// default when not typed), or only those the user typed.
void set_policy_fields(const PolicyFlags& f, SessionConfig& cfg, bool only_typed) {
  auto take = [&](const char* flag) { return !only_typed || f.given(flag); };
  PolicyParams& p = cfg.policy;
  if (take("--policy")) p.kind = parse_policy(f.policy);
  check_flags_have_effect(f, p.kind);
  if (take("--budget")) p.budget = Amount::parse(f.budget, "--budget");
  if (take("--window") && !f.window.empty()) p.window = Amount::parse(f.window, "--window");
  if (take("--sinks")) p.sinks = f.sinks;
  if (take("--granularity") && !f.granularity.empty()) p.granularity = parse_granularity(f.granularity);
  if (take("--prefill")) p.prefill = parse_prefill(f.prefill);
  if (take("--positions")) p.positions = parse_positions(f.positions);
  if (take("--tau-init")) p.tau_init = f.tau_init;
  if (take("--tau-end")) p.tau_end = f.tau_end;
  if (take("--tau-schedule")) p.tau_schedule = parse_tau_schedule(f.tau_schedule);
  if (take("--noise")) p.noise = parse_noise(f.noise);
  if (take("--keyformer-variant")) p.keyformer_variant = parse_keyformer_variant(f.keyformer_variant);
  if (take("--alpha")) p.alpha = f.alpha;
  if (take("--a2sf-revision")) p.a2sf_revision = parse_a2sf_revision(f.a2sf_revision);
  if (take("--reduce")) p.reduce = parse_reduce(f.reduce);
  p.seed = cfg.seed;
  if (take("--sharing")) cfg.sharing = SharingLayout::parse(f.sharing);
  if (take("--weights")) cfg.weights = f.weights;
  if (take("--record-layers")) cfg.recording.layers = f.record_layers;
  if (take("--no-metrics")) cfg.recording.metrics = !f.no_metrics;
}

}  // namespace

void apply_policy_flags(const PolicyFlags& f, SessionConfig& cfg) {
  set_policy_fields(f, cfg, /*only_typed=*/false);
  cfg.export_opts.layer = f.export_layer;
  cfg.export_opts.head = f.export_head;
  cfg.export_opts.colormap = f.colormap;
  cfg.export_opts.scale = f.scale;
  apply_figure_flags(f.figures, cfg.export_opts);
}

void override_policy_flags(const PolicyFlags& f, SessionConfig& cfg) {
  set_policy_fields(f, cfg, /*only_typed=*/true);
  // A policy typed on the command line replaces the file's whole schedule:
  // its later changes were written for the file's policy.
  if (f.given("--policy")) cfg.policy_changes.clear();
}

}  // namespace kvscope::cli
