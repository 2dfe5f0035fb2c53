#include "cli_policy.h"

#include <algorithm>
#include <cstdio>

#include "cli_common.h"
#include "common/error.h"
#include "io/colormap.h"
#include "io/figure_settings.h"

namespace kvscope::cli {

bool PolicyFlags::given(const std::string& flag) const {
  for (const auto* list : {&options, &other_options})
    for (const CLI::Option* o : *list)
      if (o->check_lname(flag.substr(2)) && o->count() > 0) return true;
  return false;
}

std::string PolicyFlags::text(const std::string& key) const {
  const auto it = params.find(key);
  if (it != params.end() && !it->second.empty()) return it->second;
  const ParamSpec* p = find_param(key);
  return p ? p->fallback : "";
}

namespace {

// A flag typed for a policy that does not read it is an error: the run
// would silently differ from what the user asked for. Which policy reads
// which parameter is the policy table's.
void check_flags_have_effect(const PolicyFlags& f, PolicyKind kind) {
  for (const ParamSpec& param : param_specs()) {
    if (!f.given(param_flag(param)) || policy_spec(kind).uses(param.key)) continue;
    std::string users;
    for (const PolicySpec& p : policy_specs())
      if (p.uses(param.key)) users += std::string(users.empty() ? "" : ", ") + p.name;
    throw Error(param_flag(param), "", std::string("has no effect with --policy ") + policy_name(kind) + " (" +
                                        param.what + " is used by " + users + ")");
  }
}

// --help's text of a parameter: its help, the choices or range, and the
// defaults that differ between policies.
std::string flag_help(const ParamSpec& param) {
  std::string h = param.help;
  if (param.kind == ParamKind::Choice) {
    std::string all;
    for (const char* c : param.choices) all += (all.empty() ? "" : ", ") + std::string(c);
    h += " One of: " + all + ".";
  } else if (const std::string r = range_text(param); !r.empty()) {
    h += " It " + r + ".";
  }
  std::string per_policy;
  for (const PolicySpec& p : policy_specs())
    if (const ParamUse* u = p.use(param.key); u && *u->default_text)
      per_policy += std::string(per_policy.empty() ? "" : ", ") + p.name + " " + u->default_text;
  if (!per_policy.empty()) h += " Default " + (*param.fallback ? std::string(param.fallback) : "none") + "; " + per_policy + ".";
  return h;
}

}  // namespace

bool PolicyFlags::needs_session() const {
  // Any eviction flag typed also goes through the session, whose settings
  // check names a flag the policy would ignore.
  const bool eviction_flag = std::any_of(options.begin(), options.end(), [](const CLI::Option* o) { return o->count() > 0; });
  // --record-* too: the Session checks the layers and heads, so 99 is
  // refused with or without --export, and plans the recorder's memory.
  return policy != "full" || sharing != "native" || !export_dir.empty() || eviction_flag || given("--budget-ratio") ||
         !record_layers.empty() || !record_heads.empty() || given("--record-mb");
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
  char size_help[256];
  std::snprintf(size_help, sizeof(size_help),
                "Printed figure size: column (%g in wide), page (%g in wide), WxH with a unit (3.3x2.5in, 240x180pt) "
                "or natural (the default); text stays >= %g pt, PNG pixels follow from --dpi",
                kColumnWidthIn, kPageWidthIn, kMinFontPt);
  cmd.add_option("--figure-size", f.figure_size, size_help)
      ->check(CLI::Validator([](std::string& s) { return check_figure_size(s); }, "column|page|WxH"));
  // Not --positions: that is the policy parameter (the position mode of kept keys).
  cmd.add_option("--figure-positions", f.positions,
                 "Heatmaps show key positions A..B only (A:B, from 0), or all (the default)")
      ->check(CLI::Validator([](std::string& s) { return check_positions(s); }, "A:B"));
}

void add_heatmap_flags(CLI::App& cmd, FigureFlags& f, bool over_file) {
  const std::string over = over_file ? " Over the file's export block." : "";
  cmd.add_option("--export-layer", f.layer,
                 "Layer of the CSV twins and heatmaps (default: the CSV twins of layer 0, the figures of the most "
                 "informative head)." +
                     over);
  cmd.add_option("--export-head", f.head, "Query head of the CSV twins and heatmaps (see --export-layer)." + over);
  // Checked while parsing, with or without --export: a bad name fails
  // before the run, not in the export after it.
  auto* colormap = cmd.add_option("--colormap", f.colormap, "viridis, magma, inferno, gray, coolwarm." + over)
                       ->check(CLI::Validator([](std::string& name) { return unknown_colormap(name); }, ""));
  auto* scale = cmd.add_option("--scale", f.scale, "Heatmap scale: linear or log." + over)
                    ->check(CLI::IsMember({"linear", "log"}));
  if (!over_file) {
    const ExportConfig defaults;
    colormap->default_str(defaults.colormap);
    scale->default_str(defaults.scale);
  }
}

void apply_figure_flags(const FigureFlags& f, ExportConfig& e) {
  if (f.layer) e.layer = f.layer;
  if (f.head) e.head = f.head;
  if (f.colormap) e.colormap = *f.colormap;
  if (f.scale) e.scale = *f.scale;
  if (!f.formats.empty()) e.formats = f.formats;
  if (f.dpi) e.dpi = *f.dpi;
  if (f.range) e.range = *f.range;
  if (f.evicted) e.evicted = *f.evicted;
  if (f.figure_size) e.figure_size = *f.figure_size;
  if (f.positions) e.positions = *f.positions;
  if (const std::string bad = check_range(e.range, parse_scale(e.scale)); !bad.empty())
    throw Error(f.range ? "--range" : "--scale", "", bad);
}

void add_policy_flags(CLI::App& cmd, PolicyFlags& f, bool with_export) {
  std::string names;
  for (const PolicySpec& p : policy_specs()) names += (names.empty() ? "" : ", ") + std::string(p.name);
  cmd.add_option("--policy", f.policy, names)->default_val("full");
  // One flag per parameter of the policy table, kept as typed and parsed
  // by the table (so the CLI, session files and the window agree).
  for (const ParamSpec& param : param_specs()) {
    CLI::Option* o = cmd.add_option(param_flag(param), f.params[param.key], flag_help(param));
    switch (param.kind) {
      case ParamKind::Amount: o->type_name("N|P%"); break;
      case ParamKind::Count: o->type_name("INT"); break;
      case ParamKind::Real: o->type_name("FLOAT"); break;
      case ParamKind::Choice: {
        std::string all;
        for (const char* c : param.choices) all += (all.empty() ? "" : "|") + std::string(c);
        o->type_name(all);
        break;
      }
    }
    if (*param.fallback && !param.optional) o->default_str(param.fallback);
    f.options.push_back(o);
  }
  cmd.add_option("--budget-ratio", f.budget_ratio,
                 "The budget as kvpress's compression_ratio R, the fraction of the prompt removed: the same as "
                 "--budget ratio:R (k = max(1, int(n (1 - R))))")
      ->type_name("R")
      ->excludes(param_flag(*find_param("budget")));
  cmd.add_option("--sharing", f.sharing, "KV layout: native, mha, gqa:G, mqa, mlkv:M, mlkv:M:G (averaged K/V)")
      ->default_val("native");
  add_weights_opt(cmd, f.weights);
  cmd.add_option("--record-layers", f.record_layers,
                 "Layers whose attention is recorded (default: all that fit --record-mb and the memory available)");
  cmd.add_option("--record-heads", f.record_heads, "Query heads recorded in those layers (default: every head)");
  char record_mb_help[160];
  std::snprintf(record_mb_help, sizeof record_mb_help,
                "Memory for recorded attention when the layers are not named; the others are replayed on demand "
                "(default %g)",
                RecordingConfig{}.memory_mb);
  cmd.add_option("--record-mb", f.record_mb, record_mb_help)->check(CLI::PositiveNumber);
  cmd.add_flag("--no-metrics", f.no_metrics, "Skip the shadow full-cache run and its metrics");
  for (const char* name : {"--policy", "--budget-ratio", "--sharing", "--record-layers", "--record-heads",
                           "--record-mb", "--no-metrics", "--weights"})
    f.other_options.push_back(cmd.get_option(name));
  if (!with_export) return;
  cmd.add_option("--export", f.export_dir, "Write masks, attention, scores, CSVs and heatmaps to this directory")
      ->check(nonempty_dir_name());
  add_heatmap_flags(cmd, f.figures, /*over_file=*/false);
  add_figure_flags(cmd, f.figures);
}

void mark_policy_flags_over_file(PolicyFlags& f) {
  for (auto* list : {&f.options, &f.other_options})
    for (CLI::Option* o : *list) {
      o->default_str("");
      o->description(o->get_description() + " Over the file's setting.");
    }
}

namespace {

// The policy, sharing and recording flags into `cfg`: every one (with its
// default when not typed), or only those the user typed.
void set_policy_fields(const PolicyFlags& f, SessionConfig& cfg, bool only_typed) {
  auto take = [&](const char* flag) { return !only_typed || f.given(flag); };
  PolicyParams& p = cfg.policy;
  if (take("--policy")) p.kind = parse_policy(f.policy);
  check_flags_have_effect(f, p.kind);
  for (const ParamSpec& param : param_specs()) {
    const std::string flag = param_flag(param);
    const auto it = f.params.find(param.key);
    if (f.given(flag) && it != f.params.end()) {
      try {
        set_param_text(p, param, it->second);
      } catch (const Error& e) {
        throw e.renamed(flag);
      }
    } else if (!only_typed && !param.optional) {
      set_param_text(p, param, param.fallback);
    }
  }
  if (f.given("--budget-ratio")) {
    if (!policy_spec(p.kind).uses("budget"))
      throw Error("--budget-ratio", "",
                  std::string("has no effect with --policy ") + policy_name(p.kind) + " (" + policy_name(p.kind) +
                      " reads no budget)");
    try {
      p.budget = Amount::parse_ratio(f.budget_ratio, "--budget-ratio");
    } catch (const Error& e) {
      throw e.renamed("--budget-ratio");
    }
  }
  p.seed = cfg.seed;
  if (take("--sharing")) cfg.sharing = SharingLayout::parse(f.sharing);
  if (take("--weights")) cfg.weights = f.weights;
  if (take("--record-layers")) cfg.recording.layers = f.record_layers;
  if (take("--record-heads")) cfg.recording.heads = f.record_heads;
  if (f.given("--record-mb")) cfg.recording.memory_mb = f.record_mb;  // else the file's, or the session's default
  if (take("--no-metrics")) cfg.recording.metrics = !f.no_metrics;
}

}  // namespace

void apply_policy_flags(const PolicyFlags& f, SessionConfig& cfg) {
  set_policy_fields(f, cfg, /*only_typed=*/false);
  apply_figure_flags(f.figures, cfg.export_opts);
}

void override_policy_flags(const PolicyFlags& f, SessionConfig& cfg) {
  set_policy_fields(f, cfg, /*only_typed=*/true);
  // A policy typed on the command line replaces the file's whole schedule:
  // its later changes were written for the file's policy.
  if (f.given("--policy")) cfg.policy_changes.clear();
}

}  // namespace kvscope::cli
