#include "session/session_config.h"

#include "common/error.h"
#include "io/atomic_file.h"
#include "io/colormap.h"
#include "io/figure_settings.h"
#include "io/json_file.h"

#include <fstream>

namespace kvscope {
namespace {

// Re-throws an error of the shared parsers as one of the file's field.
template <typename F>
auto with_field(const std::string& source, const std::string& field, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const Error& e) {
    throw Error(source, field, e.problem());
  }
}

// Every key of `r`'s object must be one of `known`: a misspelt key would
// otherwise be ignored and its setting silently left at the default.
void reject_unknown_keys(const JsonReader& r, const std::vector<const char*>& known) {
  for (const auto& [key, value] : r.json().items()) {
    bool ok = false;
    for (const char* k : known) ok = ok || key == k;
    if (ok) continue;
    std::string list;
    for (const char* k : known) list += (list.empty() ? "" : ", ") + std::string(k);
    r.fail(key, "unknown key (known here: " + list + ")");
  }
}

// A prompt or continuation source counts as given when it is present and
// not empty: exported session files carry every field, the unused ones as
// "" or [].
bool given(const JsonReader& r, const char* key) {
  if (!r.has(key)) return false;
  const auto& v = r.raw(key);
  return !((v.is_string() && v.get<std::string>().empty()) || (v.is_array() && v.empty()));
}

// A "view" block: the session's own, or one step of its lesson.
ViewConfig parse_view(const JsonReader& v) {
  ViewConfig view;
  reject_unknown_keys(
      v, {"layer", "head", "mode", "step", "shared_range", "bookmarks", "positions", "compare", "evicted"});
  if (v.has("layer")) view.layer = v.get_int("layer");
  if (v.has("head")) view.head = v.get_int("head");
  if (v.has("step")) view.step = v.get_int("step");
  for (const char* key : {"layer", "head", "step"})
    if (v.has(key) && v.get_int(key) < 0) v.fail(key, "must be >= 0");
  view.mode = v.get_string("mode", view.mode);
  if (std::find(std::begin(kViewModes), std::end(kViewModes), view.mode) == std::end(kViewModes))
    v.fail("mode", "unknown view \"" + view.mode + "\" (attention, mask, statistic, diff_full, diff_fork, ideal)");
  view.shared_range = v.get_bool("shared_range", false);
  if (v.has("bookmarks")) {
    const auto& b = v.raw("bookmarks");
    if (!b.is_array()) v.fail("bookmarks", "expected a list of positions");
    for (const auto& x : b) {
      if (!x.is_number_integer() || x.get<int>() < 0) v.fail("bookmarks", "expected positions, got " + x.dump());
      view.bookmarks.push_back(x.get<int>());
    }
  }
  if (v.has("positions")) {
    const auto& p = v.raw("positions");
    if (!p.is_array() || p.size() != 2 || !p[0].is_number_integer() || !p[1].is_number_integer() ||
        p[0].get<int>() < 0 || p[1].get<int>() < p[0].get<int>())
      v.fail("positions", "expected [first, last] with 0 <= first <= last, got " + p.dump());
    view.positions = std::make_pair(p[0].get<int>(), p[1].get<int>());
  }
  view.compare = v.get_string("compare", view.compare);
  if (view.compare != "attention" && view.compare != "masks")
    v.fail("compare", "expected \"attention\" or \"masks\", got \"" + view.compare + "\"");
  if (v.has("evicted")) {
    view.evicted = v.get_string("evicted");
    if (*view.evicted != "outline" && *view.evicted != "strip" && *view.evicted != "none")
      v.fail("evicted", "expected \"outline\", \"strip\" or \"none\", got \"" + *view.evicted + "\"");
  }
  return view;
}

nlohmann::json view_to_json(const ViewConfig& view) {
  nlohmann::json v = {{"mode", view.mode}, {"shared_range", view.shared_range}, {"bookmarks", view.bookmarks}};
  if (view.layer) v["layer"] = *view.layer;
  if (view.head) v["head"] = *view.head;
  if (view.step) v["step"] = *view.step;
  if (view.positions) v["positions"] = {view.positions->first, view.positions->second};
  if (view.compare != ViewConfig{}.compare) v["compare"] = view.compare;
  if (view.evicted) v["evicted"] = *view.evicted;
  return v;
}

}  // namespace

Error session_file_error(const Error& e, const std::string& source) { return e.in_file(source); }

// Every parameter of the policy table, under its key: an optional one left
// unset as null, one that is written only away from its default left out.
nlohmann::json policy_to_json(const PolicyParams& p) {
  nlohmann::json j = {{"name", policy_name(p.kind)}};
  const PolicyParams defaults;
  for (const ParamSpec& s : param_specs()) {
    const std::string text = param_text(p, s);
    if (!s.written_at_default && text == param_text(defaults, s)) continue;
    PolicyParams& q = const_cast<PolicyParams&>(p);  // read through the table's accessors
    if (text.empty()) j[s.key] = nullptr;
    else if (s.kind == ParamKind::Amount || s.kind == ParamKind::Choice) j[s.key] = text;
    else if (s.field.optional_count) j[s.key] = **s.field.optional_count(q);
    else if (s.field.real) j[s.key] = json_float(*s.field.real(q));  // 0.2, not 0.20000000298023224
    else if (s.kind == ParamKind::Count) j[s.key] = static_cast<long long>(param_number(p, s));  // 5, not 5.0
    else j[s.key] = param_number(p, s);
  }
  return j;
}

PolicyParams policy_from_json(const nlohmann::json& j, const std::string& source, const std::string& prefix) {
  JsonReader r(j, source, prefix);
  if (!j.is_object()) throw Error(source, prefix, "expected an object of policy settings");
  std::vector<const char*> known = {"name"};
  for (const ParamSpec& s : param_specs()) known.push_back(s.key);
  reject_unknown_keys(r, known);
  PolicyParams p;
  if (r.has("name")) p.kind = with_field(source, r.field("name"), [&] { return parse_policy(r.get_string("name")); });
  for (const ParamSpec& s : param_specs()) {
    if (!r.has(s.key)) continue;
    // Numbers are read as JSON numbers (a type error names the field);
    // an amount may be either "50%" or 64.
    std::string text;
    if (s.kind == ParamKind::Choice) {
      text = r.get_string(s.key);
    } else if (s.kind == ParamKind::Amount) {
      const auto& b = r.raw(s.key);
      text = b.is_string() ? b.get<std::string>() : b.dump();
    } else if (s.kind == ParamKind::Count) {
      text = std::to_string(r.get_int(s.key));
    } else {
      const double v = r.get_number(s.key);
      with_field(source, r.field(s.key), [&] {
        if (s.field.real) *s.field.real(p) = static_cast<float>(v);
        else p.extra[s.key] = v;
        return 0;
      });
      continue;
    }
    with_field(source, r.field(s.key), [&] {
      set_param_text(p, s, text);
      return 0;
    });
  }
  try {
    check_param_ranges(p);
  } catch (const Error& e) {
    const std::string key = e.field().substr(std::string("policy.").size());
    r.fail(key, e.problem());
  }
  return p;
}

std::string check_figure_settings(const ExportConfig& e) {
  if (std::string bad = unknown_colormap(e.colormap); !bad.empty()) return "colormap: " + bad;
  if (std::string bad = check_scale_name(e.scale); !bad.empty()) return "scale: " + bad;
  if (std::string bad = check_range(e.range, parse_scale(e.scale)); !bad.empty()) return "range: " + bad;
  if (std::string bad = check_figure_formats(e.formats); !bad.empty()) return "formats: " + bad;
  if (std::string bad = check_dpi(e.dpi); !bad.empty()) return "dpi: " + bad;
  if (std::string bad = check_evicted_style(e.evicted); !bad.empty()) return "evicted: " + bad;
  if (std::string bad = check_figure_size(e.figure_size); !bad.empty()) return "figure_size: " + bad;
  if (std::string bad = check_positions(e.positions); !bad.empty()) return "positions: " + bad;
  return "";
}

nlohmann::json SessionConfig::to_json() const {
  // The figure settings added with the figures layer are written only when
  // they differ from their defaults, so a default export's session.json
  // keeps the bytes it had.
  auto export_json = [&] {
    const ExportConfig defaults;
    nlohmann::json heat = nlohmann::json::array();
    for (const auto& [l, h] : export_opts.heatmaps) heat.push_back({l, h});
    // layer / head only when chosen: written as 0 / 0 they would read back
    // as a choice, and a rerun would draw layer 0 instead of the most
    // informative head (reports/informative_head.h).
    nlohmann::json e = {{"heatmaps", heat}, {"colormap", export_opts.colormap}, {"scale", export_opts.scale}};
    if (export_opts.layer) e["layer"] = *export_opts.layer;
    if (export_opts.head) e["head"] = *export_opts.head;
    if (export_opts.range != defaults.range) e["range"] = export_opts.range;
    if (export_opts.formats != defaults.formats) e["formats"] = export_opts.formats;
    if (export_opts.dpi != defaults.dpi) e["dpi"] = export_opts.dpi;
    if (export_opts.evicted != defaults.evicted) e["evicted"] = export_opts.evicted;
    if (export_opts.figure_size != defaults.figure_size) e["figure_size"] = export_opts.figure_size;
    if (export_opts.positions != defaults.positions) e["positions"] = export_opts.positions;
    return e;
  };
  nlohmann::json j = {
      {"format", "kvscope-session"},
      {"version", kSessionFormatVersion},
      {"model", model.empty() ? nlohmann::json(nullptr) : nlohmann::json(model)},
      {"device", device},
      {"prompt", prompt},
      {"continuation", continuation ? nlohmann::json(*continuation) : nlohmann::json(nullptr)},
      {"prompt_ids", prompt_ids},
      {"continuation_ids", continuation_ids},
      {"max_new_tokens", max_new_tokens},
      {"stop_at_eos", stop_at_eos},
      {"sampling",
       {{"temperature", json_float(sampling.temperature)},
        {"top_k", sampling.top_k},
        {"top_p", json_float(sampling.top_p)}}},
      {"policy", policy_to_json(policy)},
      {"sharing", sharing.str()},
      {"recording", {{"layers", recording.layers}, {"memory_mb", recording.memory_mb}, {"metrics", recording.metrics}}},
      {"export", export_json()},
      {"seed", seed},
      {"policy_changes", [&] {
         nlohmann::json a = nlohmann::json::array();
         for (const auto& c : policy_changes)
           a.push_back({{"from_step", c.from_step}, {"policy", policy_to_json(c.policy)}});
         return a;
       }()}};
  // Written only when set, so sessions without them keep their bytes.
  if (weights != weight_format_name(kDefaultWeightFormat)) j["weights"] = weights;
  if (!recording.heads.empty()) j["recording"]["heads"] = recording.heads;
  if (fork) j["fork"] = {{"at_step", fork->at_step}, {"policy", policy_to_json(fork->policy)}};
  if (view != ViewConfig{}) j["view"] = view_to_json(view);
  if (lesson) {
    j["lesson"] = {{"title", lesson->title}, {"caption", lesson->caption}, {"look_at", lesson->look_at}};
    for (const LessonStep& st : lesson->steps) {
      nlohmann::json step = {{"caption", st.caption}};
      if (!st.look_at.empty()) step["look_at"] = st.look_at;
      if (st.view != ViewConfig{}) step["view"] = view_to_json(st.view);
      j["lesson"]["steps"].push_back(step);
    }
  }
  return j;
}

const PolicyParams& policy_at_row(const SessionConfig& c, int row) {
  const PolicyParams* p = &c.policy;
  for (const auto& ch : c.policy_changes)
    if (ch.from_step <= row) p = &ch.policy;
  return *p;
}

int policy_since_row(const SessionConfig& c, int row) {
  int since = 0;
  for (const auto& ch : c.policy_changes)
    if (ch.from_step <= row) since = ch.from_step;
  return since;
}

SessionConfig fork_branch_config(const SessionConfig& a) {
  if (!a.fork) throw Error(a.source, "fork", "this session has no fork block");
  SessionConfig b = a;
  b.fork.reset();
  std::erase_if(b.policy_changes, [&](const SessionConfig::PolicyChange& c) { return c.from_step > a.fork->at_step; });
  b.policy_changes.push_back({a.fork->at_step + 1, a.fork->policy});
  b.policy_changes.back().policy.seed = a.seed;
  return b;
}

SessionConfig SessionConfig::from_json(const nlohmann::json& j, const std::string& source) {
  if (!j.is_object()) throw Error(source, "", "expected a JSON object");
  JsonReader r(j, source);
  // "resolved" is what an export adds for the reader (the budget in tokens
  // and so on), "provenance" what made the file (reports/provenance.h); both
  // are ignored when the file is run again.
  reject_unknown_keys(r, {"format",         "version",     "model",      "device",         "weights",
                          "prompt",         "prompt_file", "prompt_ids", "continuation",   "continuation_ids",
                          "max_new_tokens", "stop_at_eos", "sampling",   "policy",         "sharing",
                          "recording",      "export",      "seed",       "policy_changes", "resolved",
                          "provenance",     "fork",        "view",       "lesson"});
  const std::string fmt = r.get_string("format", "kvscope-session");
  if (fmt != "kvscope-session") r.fail("format", "expected \"kvscope-session\", got \"" + fmt + "\"");
  if (!r.has("version"))
    r.fail("version", "missing: a session file states its format version (this kvscope reads 1.." +
                          std::to_string(kSessionFormatVersion) + ")");
  const int version = r.get_int("version");
  if (version < 1 || version > kSessionFormatVersion)
    r.fail("version", "format version " + std::to_string(version) + " is not supported (this kvscope reads 1.." +
                          std::to_string(kSessionFormatVersion) + ")");
  SessionConfig c;
  c.source = source;
  int prompts = 0;
  for (const char* key : {"prompt", "prompt_file", "prompt_ids"}) prompts += given(r, key);
  if (prompts > 1) r.fail("prompt", "give one of prompt, prompt_file and prompt_ids, not several");
  if (given(r, "continuation") && given(r, "continuation_ids"))
    r.fail("continuation", "give continuation or continuation_ids, not both");
  c.model = r.get_string("model", "");
  c.device = r.get_string("device", "cpu");
  if (c.device != "cpu" && c.device != "cuda" && c.device != "auto") r.fail("device", "must be cpu, cuda or auto");
  c.weights = r.get_string("weights", weight_format_name(kDefaultWeightFormat));
  try {
    parse_weight_format(c.weights);
  } catch (const Error&) {
    r.fail("weights", "must be " + weight_format_choices());
  }
  if (given(r, "prompt_ids")) {
    // The ids alone are the prompt.
  } else if (given(r, "prompt_file")) {
    std::filesystem::path pf = r.get_string("prompt_file");
    if (pf.is_relative()) pf = std::filesystem::path(source).parent_path() / pf;
    std::ifstream in(pf, std::ios::binary);
    if (!in) r.fail("prompt_file", "cannot open " + pf.string());
    c.prompt.assign(std::istreambuf_iterator<char>(in), {});
  } else {
    c.prompt = r.get_string("prompt");
  }
  if (r.has("continuation")) c.continuation = r.get_string("continuation");
  for (const char* key : {"prompt_ids", "continuation_ids"}) {
    if (!r.has(key)) continue;
    const auto& a = r.raw(key);
    if (!a.is_array()) r.fail(key, "expected a list of token ids");
    auto& dst = std::string(key) == "prompt_ids" ? c.prompt_ids : c.continuation_ids;
    for (const auto& v : a) {
      if (!v.is_number_integer() || v.get<int64_t>() < 0) r.fail(key, "expected token ids, got " + v.dump());
      dst.push_back(v.get<int>());
    }
  }
  c.max_new_tokens = r.get_int("max_new_tokens", c.max_new_tokens);
  if (c.max_new_tokens < 0) r.fail("max_new_tokens", "must be >= 0");
  c.stop_at_eos = r.get_bool("stop_at_eos", c.stop_at_eos);
  if (r.has("sampling")) {
    const JsonReader s = r.child("sampling");
    reject_unknown_keys(s, {"temperature", "top_k", "top_p"});
    c.sampling.temperature = static_cast<float>(s.get_number("temperature", 0));
    c.sampling.top_k = s.get_int("top_k", 0);
    c.sampling.top_p = static_cast<float>(s.get_number("top_p", 1));
    try {
      validate_sampling(c.sampling);
    } catch (const Error& e) {
      throw e.in_file(source);  // "sampling.top_p: ..." -> "s.json: sampling.top_p: ..."
    }
  }
  if (r.has("policy")) c.policy = policy_from_json(r.raw("policy"), source, "policy");
  if (r.has("sharing")) c.sharing = with_field(source, "sharing", [&] { return SharingLayout::parse(r.get_string("sharing")); });
  if (r.has("recording")) {
    const JsonReader rec = r.child("recording");
    reject_unknown_keys(rec, {"layers", "heads", "memory_mb", "metrics"});
    // "all" or a list of numbers; the Session checks them against the model.
    auto read_list = [&](const char* key, const char* what, std::vector<int>& out) {
      if (!rec.has(key)) return;
      const auto& l = rec.raw(key);
      if (l.is_string() && l.get<std::string>() == "all") {
        out.clear();
      } else if (l.is_array()) {
        out.clear();
        for (const auto& v : l) {
          if (!v.is_number_integer() || v.get<int>() < 0)
            rec.fail(key, std::string("expected ") + what + " numbers, got " + l.dump());
          out.push_back(v.get<int>());
        }
      } else {
        rec.fail(key, std::string("expected \"all\" or a list of ") + what + " numbers");
      }
    };
    read_list("layers", "layer", c.recording.layers);
    read_list("heads", "head", c.recording.heads);
    c.recording.memory_mb = rec.get_number("memory_mb", c.recording.memory_mb);
    if (!(c.recording.memory_mb > 0)) rec.fail("memory_mb", "must be positive");
    c.recording.metrics = rec.get_bool("metrics", c.recording.metrics);
  }
  if (r.has("export")) {
    const JsonReader e = r.child("export");
    reject_unknown_keys(e, {"layer", "head", "heatmaps", "colormap", "scale", "range", "formats", "dpi", "evicted",
                            "figure_size", "positions"});
    if (e.has("layer")) c.export_opts.layer = e.get_int("layer");
    if (e.has("head")) c.export_opts.head = e.get_int("head");
    if (c.export_opts.csv_layer() < 0) e.fail("layer", "must be >= 0");
    if (c.export_opts.csv_head() < 0) e.fail("head", "must be >= 0");
    if (e.has("heatmaps")) {
      const auto& hm = e.raw("heatmaps");
      if (!hm.is_array()) e.fail("heatmaps", "expected a list of [layer, head] pairs");
      for (const auto& p : hm) {
        if (!p.is_array() || p.size() != 2 || !p[0].is_number_integer() || !p[1].is_number_integer() ||
            p[0].get<int>() < 0 || p[1].get<int>() < 0)
          e.fail("heatmaps", "expected [layer, head] pairs, got " + p.dump());
        c.export_opts.heatmaps.emplace_back(p[0].get<int>(), p[1].get<int>());
      }
    }
    c.export_opts.colormap = e.get_string("colormap", c.export_opts.colormap);
    c.export_opts.scale = e.get_string("scale", c.export_opts.scale);
    c.export_opts.range = e.get_string("range", c.export_opts.range);
    if (e.has("formats")) {
      const auto& f = e.raw("formats");
      c.export_opts.formats.clear();
      if (f.is_string()) c.export_opts.formats.push_back(f.get<std::string>());
      else if (f.is_array()) {
        for (const auto& v : f) {
          if (!v.is_string()) e.fail("formats", "expected format names (png, svg, pdf), got " + f.dump());
          c.export_opts.formats.push_back(v.get<std::string>());
        }
      } else {
        e.fail("formats", "expected a list of format names (png, svg, pdf), got " + f.dump());
      }
    }
    c.export_opts.dpi = e.get_number("dpi", c.export_opts.dpi);
    c.export_opts.evicted = e.get_string("evicted", c.export_opts.evicted);
    c.export_opts.figure_size = e.get_string("figure_size", c.export_opts.figure_size);
    c.export_opts.positions = e.get_string("positions", c.export_opts.positions);
    if (const std::string bad = check_figure_settings(c.export_opts); !bad.empty()) {
      const auto colon = bad.find(": ");
      e.fail(bad.substr(0, colon), bad.substr(colon + 2));
    }
  }
  if (r.has("seed")) {
    const auto& s = r.raw("seed");
    if (!s.is_number_unsigned()) r.fail("seed", "expected a non-negative integer");
    c.seed = s.get<uint64_t>();
  }
  if (r.has("policy_changes")) {
    const auto& pc = r.raw("policy_changes");
    if (!pc.is_array()) r.fail("policy_changes", "expected a list");
    for (std::size_t i = 0; i < pc.size(); ++i) {
      const std::string prefix = "policy_changes[" + std::to_string(i) + "]";
      JsonReader e(pc[i], source, prefix);
      if (!pc[i].is_object()) throw Error(source, prefix, "expected {\"from_step\": N, \"policy\": {...}}");
      reject_unknown_keys(e, {"from_step", "policy"});
      PolicyChange ch;
      ch.from_step = e.get_int("from_step");
      if (ch.from_step < 1) e.fail("from_step", "must be >= 1 (row 0 uses \"policy\")");
      ch.policy = policy_from_json(e.raw("policy"), source, prefix + ".policy");
      ch.policy.seed = c.seed;
      c.policy_changes.push_back(ch);
    }
  }
  if (r.has("fork")) {
    const JsonReader f = r.child("fork");
    reject_unknown_keys(f, {"at_step", "policy"});
    ForkConfig fork;
    fork.at_step = f.get_int("at_step");
    if (fork.at_step < 0) f.fail("at_step", "must be >= 0 (0 = right after the prompt)");
    if (fork.at_step > c.max_new_tokens)
      f.fail("at_step", "is " + std::to_string(fork.at_step) + ", after the run's last step (max_new_tokens " +
                            std::to_string(c.max_new_tokens) + ")");
    if (!f.has("policy")) f.fail("policy", "missing: the fork's policy");
    fork.policy = policy_from_json(f.raw("policy"), source, "fork.policy");
    fork.policy.seed = c.seed;
    c.fork = fork;
  }
  if (r.has("view")) c.view = parse_view(r.child("view"));
  if (r.has("lesson")) {
    const JsonReader l = r.child("lesson");
    reject_unknown_keys(l, {"title", "caption", "look_at", "steps"});
    c.lesson = LessonConfig{l.get_string("title"), l.get_string("caption", ""), l.get_string("look_at", ""), {}};
    if (l.has("steps")) {
      const auto& steps = l.raw("steps");
      if (!steps.is_array()) l.fail("steps", "expected a list of {\"caption\": ..., \"view\": {...}}");
      for (size_t i = 0; i < steps.size(); ++i) {
        if (!steps[i].is_object()) l.fail("steps", "expected objects, got " + steps[i].dump());
        const JsonReader st(steps[i], l.source(), l.field("steps") + "[" + std::to_string(i) + "]");
        reject_unknown_keys(st, {"caption", "look_at", "view"});
        LessonStep step{st.get_string("caption"), st.get_string("look_at", ""), {}};
        if (st.has("view")) step.view = parse_view(st.child("view"));
        c.lesson->steps.push_back(std::move(step));
      }
    }
  }
  c.sampling.seed = c.seed;
  c.policy.seed = c.seed;
  return c;
}

SessionConfig SessionConfig::load(const std::filesystem::path& path) {
  return from_json(read_json_file(path), path.string());
}

void SessionConfig::save(const std::filesystem::path& path) const {
  write_text_file(path, json_text(to_json()) + "\n");
}

}  // namespace kvscope
