#include "session/session_config.h"

#include "common/error.h"
#include "io/atomic_file.h"
#include "io/json_file.h"

#include <fstream>

namespace kvscope {
namespace {

// Re-throws a flag-named error (from the shared parsers) as a file+field one.
template <typename F>
auto with_field(const std::string& source, const std::string& field, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const Error& e) {
    std::string msg = e.what();
    // The shared parsers name CLI flags ("--policy: unknown ..."); keep only what is wrong.
    const auto colon = msg.find(": ");
    if (msg.rfind("--", 0) == 0 && colon != std::string::npos) msg = msg.substr(colon + 2);
    throw Error(source, field, msg);
  }
}

}  // namespace

nlohmann::json policy_to_json(const PolicyParams& p) {
  nlohmann::json j = {{"name", policy_name(p.kind)},
                      {"budget", p.budget.str()},
                      {"window", p.window ? nlohmann::json(p.window->str()) : nlohmann::json(nullptr)},
                      {"sinks", p.sinks ? nlohmann::json(*p.sinks) : nlohmann::json(nullptr)},
                      {"granularity", p.granularity ? nlohmann::json(granularity_name(*p.granularity))
                                                    : nlohmann::json(nullptr)},
                      {"prefill", prefill_name(p.prefill)},
                      {"positions", positions_name(p.positions)},
                      {"tau_init", p.tau_init},
                      {"tau_end", p.tau_end},
                      {"tau_schedule", tau_schedule_name(p.tau_schedule)},
                      {"noise", noise_name(p.noise)},
                      {"alpha", p.alpha},
                      {"reduce", reduce_name(p.reduce)}};
  return j;
}

PolicyParams policy_from_json(const nlohmann::json& j, const std::string& source, const std::string& prefix) {
  JsonReader r(j, source, prefix);
  PolicyParams p;
  auto f = [&](const char* k) { return r.field(k); };
  if (r.has("name")) p.kind = with_field(source, f("name"), [&] { return parse_policy(r.get_string("name")); });
  if (r.has("budget")) {
    const auto& b = r.raw("budget");
    p.budget = with_field(source, f("budget"), [&] {
      return Amount::parse(b.is_string() ? b.get<std::string>() : b.dump(), "--budget");
    });
  }
  if (r.has("window")) {
    const auto& b = r.raw("window");
    p.window = with_field(source, f("window"), [&] {
      return Amount::parse(b.is_string() ? b.get<std::string>() : b.dump(), "--window");
    });
  }
  if (r.has("sinks")) p.sinks = r.get_int("sinks");
  if (r.has("granularity"))
    p.granularity = with_field(source, f("granularity"), [&] { return parse_granularity(r.get_string("granularity")); });
  if (r.has("prefill")) p.prefill = with_field(source, f("prefill"), [&] { return parse_prefill(r.get_string("prefill")); });
  if (r.has("positions"))
    p.positions = with_field(source, f("positions"), [&] { return parse_positions(r.get_string("positions")); });
  p.tau_init = static_cast<float>(r.get_number("tau_init", p.tau_init));
  p.tau_end = static_cast<float>(r.get_number("tau_end", p.tau_end));
  if (r.has("tau_schedule"))
    p.tau_schedule = with_field(source, f("tau_schedule"), [&] { return parse_tau_schedule(r.get_string("tau_schedule")); });
  if (r.has("noise")) p.noise = with_field(source, f("noise"), [&] { return parse_noise(r.get_string("noise")); });
  p.alpha = static_cast<float>(r.get_number("alpha", p.alpha));
  if (r.has("reduce")) p.reduce = with_field(source, f("reduce"), [&] { return parse_reduce(r.get_string("reduce")); });
  if (!(p.alpha >= 0 && p.alpha <= 1)) r.fail("alpha", "must be in [0, 1]");
  if (!(p.tau_init > 0)) r.fail("tau_init", "must be > 0");
  if (!(p.tau_end > 0)) r.fail("tau_end", "must be > 0");
  if (p.sinks && *p.sinks < 0) r.fail("sinks", "must be >= 0");
  return p;
}

nlohmann::json SessionConfig::to_json() const {
  nlohmann::json heat = nlohmann::json::array();
  for (const auto& [l, h] : export_opts.heatmaps) heat.push_back({l, h});
  return {{"format", "kvscope-session"},
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
           {{"temperature", sampling.temperature}, {"top_k", sampling.top_k}, {"top_p", sampling.top_p}}},
          {"policy", policy_to_json(policy)},
          {"sharing", sharing.str()},
          {"recording", {{"layers", recording.layers}, {"memory_mb", recording.memory_mb}, {"metrics", recording.metrics}}},
          {"export",
           {{"layer", export_opts.layer},
            {"head", export_opts.head},
            {"heatmaps", heat},
            {"colormap", export_opts.colormap},
            {"scale", export_opts.scale}}},
          {"seed", seed},
          {"policy_changes", [&] {
             nlohmann::json a = nlohmann::json::array();
             for (const auto& c : policy_changes) a.push_back({{"from_step", c.from_step}, {"policy", policy_to_json(c.policy)}});
             return a;
           }()}};
}

SessionConfig SessionConfig::from_json(const nlohmann::json& j, const std::string& source) {
  if (!j.is_object()) throw Error(source, "", "expected a JSON object");
  JsonReader r(j, source);
  const std::string fmt = r.get_string("format", "kvscope-session");
  if (fmt != "kvscope-session") r.fail("format", "expected \"kvscope-session\", got \"" + fmt + "\"");
  const int version = r.get_int("version", kSessionFormatVersion);
  if (version < 1 || version > kSessionFormatVersion)
    r.fail("version", "format version " + std::to_string(version) + " is not supported (this kvscope reads 1.." +
                          std::to_string(kSessionFormatVersion) + ")");
  SessionConfig c;
  c.model = r.get_string("model", "");
  c.device = r.get_string("device", "cpu");
  if (c.device != "cpu" && c.device != "cuda" && c.device != "auto") r.fail("device", "must be cpu, cuda or auto");
  if (r.has("prompt_ids") && !r.has("prompt")) {
    // The ids alone are the prompt.
  } else if (r.has("prompt_file")) {
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
    c.sampling.temperature = static_cast<float>(s.get_number("temperature", 0));
    c.sampling.top_k = s.get_int("top_k", 0);
    c.sampling.top_p = static_cast<float>(s.get_number("top_p", 1));
    with_field(source, "sampling", [&] {
      validate_sampling(c.sampling);
      return 0;
    });
  }
  if (r.has("policy")) c.policy = policy_from_json(r.raw("policy"), source, "policy");
  if (r.has("sharing")) c.sharing = with_field(source, "sharing", [&] { return SharingLayout::parse(r.get_string("sharing")); });
  if (r.has("recording")) {
    const JsonReader rec = r.child("recording");
    if (rec.has("layers")) {
      const auto& l = rec.raw("layers");
      if (l.is_string() && l.get<std::string>() == "all") {
        c.recording.layers.clear();
      } else if (l.is_array()) {
        for (const auto& v : l) {
          if (!v.is_number_integer() || v.get<int>() < 0) rec.fail("layers", "expected layer numbers, got " + l.dump());
          c.recording.layers.push_back(v.get<int>());
        }
      } else {
        rec.fail("layers", "expected \"all\" or a list of layer numbers");
      }
    }
    c.recording.memory_mb = rec.get_number("memory_mb", c.recording.memory_mb);
    if (!(c.recording.memory_mb > 0)) rec.fail("memory_mb", "must be positive");
    c.recording.metrics = rec.get_bool("metrics", c.recording.metrics);
  }
  if (r.has("export")) {
    const JsonReader e = r.child("export");
    c.export_opts.layer = e.get_int("layer", 0);
    c.export_opts.head = e.get_int("head", 0);
    if (c.export_opts.layer < 0) e.fail("layer", "must be >= 0");
    if (c.export_opts.head < 0) e.fail("head", "must be >= 0");
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
    if (c.export_opts.scale != "linear" && c.export_opts.scale != "log") e.fail("scale", "must be linear or log");
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
      PolicyChange ch;
      ch.from_step = e.get_int("from_step");
      if (ch.from_step < 1) e.fail("from_step", "must be >= 1 (row 0 uses \"policy\")");
      ch.policy = policy_from_json(e.raw("policy"), source, prefix + ".policy");
      ch.policy.seed = c.seed;
      c.policy_changes.push_back(ch);
    }
  }
  c.sampling.seed = c.seed;
  c.policy.seed = c.seed;
  return c;
}

SessionConfig SessionConfig::load(const std::filesystem::path& path) {
  return from_json(read_json_file(path), path.string());
}

void SessionConfig::save(const std::filesystem::path& path) const { write_text_file(path, to_json().dump(2) + "\n"); }

}  // namespace kvscope
