#include "policy/params.h"

#include <cmath>
#include <cstdlib>
#include <limits>
#include <vector>

#include "common/error.h"

namespace kvscope {
namespace {

template <typename E>
struct Names {
  std::vector<std::pair<E, const char*>> list;
  const char* name(E e) const {
    for (const auto& [v, n] : list)
      if (v == e) return n;
    return "?";
  }
  E parse(const std::string& s, const std::string& field, const std::string& what) const {
    std::string all;
    for (const auto& [v, n] : list) {
      if (s == n) return v;
      all += (all.empty() ? "" : ", ") + std::string(n);
    }
    throw Error(field, "", "unknown " + what + " '" + s + "' (choose from " + all + ")");
  }
};

const Names<PolicyKind> kPolicies{{{PolicyKind::Full, "full"},
                                   {PolicyKind::Window, "window"},
                                   {PolicyKind::Sink, "sink"},
                                   {PolicyKind::H2O, "h2o"},
                                   {PolicyKind::TOVA, "tova"},
                                   {PolicyKind::Keyformer, "keyformer"},
                                   {PolicyKind::A2SF, "a2sf"},
                                   {PolicyKind::Random, "random"},
                                   {PolicyKind::Ideal, "ideal"}}};
const Names<Granularity> kGranularities{
    {{Granularity::KvHead, "kv_head"}, {Granularity::Layer, "layer"}, {Granularity::Model, "model"}}};
const Names<PrefillMode> kPrefill{{{PrefillMode::OneShot, "one_shot"}, {PrefillMode::Streaming, "streaming"}}};
const Names<PositionMode> kPositions{{{PositionMode::Original, "original"}, {PositionMode::Compacted, "compacted"}}};
const Names<NoiseKind> kNoise{{{NoiseKind::Gumbel, "gumbel"},
                               {NoiseKind::Gaussian, "gaussian"},
                               {NoiseKind::Constant, "constant"},
                               {NoiseKind::None, "none"}}};
const Names<TauSchedule> kTau{{{TauSchedule::Linear, "linear"}, {TauSchedule::Constant, "constant"}}};
const Names<KeyformerVariant> kKeyformerVariants{
    {{KeyformerVariant::Paper, "paper"}, {KeyformerVariant::Code, "code"}}};
const Names<A2sfRevision> kA2sfRevisions{{{A2sfRevision::Earlier, "earlier"}, {A2sfRevision::Latest, "latest"}}};
const Names<ReaderReduce> kReduce{{{ReaderReduce::Mean, "mean"}, {ReaderReduce::Max, "max"}}};

}  // namespace

int Amount::of(int whole) const { return percent ? static_cast<int>(std::lround(value / 100.0 * whole)) : static_cast<int>(value); }

// whole * value / 100 in that order, as the Keyformer code computes
// int((n * kv_cache) / 100), so the same products truncate the same way.
int Amount::truncated_of(int whole) const {
  return percent ? static_cast<int>(std::floor(static_cast<double>(whole) * value / 100.0)) : static_cast<int>(value);
}

std::string Amount::str() const {
  char buf[32];
  if (percent) std::snprintf(buf, sizeof(buf), "%g%%", value);
  else std::snprintf(buf, sizeof(buf), "%d", static_cast<int>(value));
  return buf;
}

Amount Amount::parse(const std::string& text, const std::string& field) {
  Amount a;
  std::string t = text;
  if (!t.empty() && t.back() == '%') {
    a.percent = true;
    t.pop_back();
  }
  char* end = nullptr;
  const double v = t.empty() ? NAN : std::strtod(t.c_str(), &end);
  if (t.empty() || end != t.c_str() + t.size() || !std::isfinite(v) || v < 0)
    throw Error(field, "", "expected a count (e.g. 64) or a percentage (e.g. 50%), got '" + text + "'");
  if (!a.percent && v != std::floor(v)) throw Error(field, "", "a count must be a whole number, got '" + text + "'");
  // Counts become ints; one past int's range would be undefined behaviour.
  if (!a.percent && v > std::numeric_limits<int>::max())
    throw Error(field, "", "a count must be at most " + std::to_string(std::numeric_limits<int>::max()) + ", got '" + text + "'");
  if (a.percent && v > 100) throw Error(field, "", "a percentage must be at most 100%, got '" + text + "'");
  a.value = v;
  return a;
}

ResolvedPolicy resolve_policy(const PolicyParams& p, int prompt_len, int context) {
  ResolvedPolicy r;
  r.params = p;
  r.evicts = p.kind != PolicyKind::Full && p.kind != PolicyKind::Ideal;
  // The Keyformer code truncates its percentages (int()); the papers' "50%"
  // is read as the nearest whole token.
  const bool keyformer_code = p.kind == PolicyKind::Keyformer && p.keyformer_variant == KeyformerVariant::Code;
  const bool a2sf_latest = p.kind == PolicyKind::A2SF && p.a2sf_revision == A2sfRevision::Latest;
  auto amount = [&](const Amount& a, int whole) { return keyformer_code ? a.truncated_of(whole) : a.of(whole); };
  r.k = amount(p.budget, prompt_len);
  if (p.kind == PolicyKind::Full) r.k = context;
  if (r.k < 1) throw Error("--budget", "", p.budget.str() + " of a " + std::to_string(prompt_len) + "-token prompt keeps no token");
  if (r.k > context)
    throw Error("--budget", "", std::to_string(r.k) + " tokens is larger than the context (" + std::to_string(context) + " tokens)");

  // Per-policy defaults (docs/policies.md, table "Policies").
  Amount w_default{0, false};
  int s_default = 0;
  Granularity g_default = Granularity::KvHead;
  switch (p.kind) {
    case PolicyKind::H2O: w_default = {50, true}; break;
    case PolicyKind::Keyformer: w_default = {30, true}; break;
    case PolicyKind::A2SF:
      if (a2sf_latest) w_default = {16, false};  // the latest code's fixed recent_budget
      break;
    case PolicyKind::Sink: s_default = 4; break;
    case PolicyKind::TOVA: g_default = Granularity::Layer; break;
    default: break;
  }
  r.w = amount(p.window.value_or(w_default), r.k);
  r.s = p.sinks.value_or(s_default);
  r.granularity = p.granularity.value_or(g_default);
  if (p.kind == PolicyKind::Window) r.s = p.sinks.value_or(0);
  if (r.s < 0) throw Error("--sinks", "", "must be >= 0");
  if (r.evicts && r.w + r.s > r.k)
    throw Error("--budget", "", std::to_string(r.k) + " is smaller than the recent window (" + std::to_string(r.w) +
                                    ") plus the sinks (" + std::to_string(r.s) + ")");
  if (keyformer_code) {
    r.quirks.reserved_slot = true;
    r.quirks.window_exit_dropped = true;
    r.quirks.zero_window_holds = true;
    // With a window, the code keeps k - 1 tokens: k = 1 would keep none.
    if (r.w > 0 && r.k < 2)
      throw Error("--budget", "", std::to_string(r.k) +
                                      " keeps no token with --keyformer-variant code (it keeps k - 1, a slot being "
                                      "held for the next token)");
  }
  r.quirks.prompt_only = a2sf_latest;
  if (!(p.alpha >= 0 && p.alpha <= 1)) throw Error("--alpha", "", "must be in [0, 1]");
  if (!(p.tau_init > 0) || !std::isfinite(p.tau_init)) throw Error("--tau-init", "", "must be > 0");
  if (!(p.tau_end > 0) || !std::isfinite(p.tau_end)) throw Error("--tau-end", "", "must be > 0");
  return r;
}

const char* policy_name(PolicyKind k) { return kPolicies.name(k); }
PolicyKind parse_policy(const std::string& s) { return kPolicies.parse(s, "--policy", "policy"); }
const char* granularity_name(Granularity g) { return kGranularities.name(g); }
Granularity parse_granularity(const std::string& s) { return kGranularities.parse(s, "--granularity", "granularity"); }
const char* prefill_name(PrefillMode m) { return kPrefill.name(m); }
PrefillMode parse_prefill(const std::string& s) { return kPrefill.parse(s, "--prefill", "prefill mode"); }
const char* positions_name(PositionMode m) { return kPositions.name(m); }
PositionMode parse_positions(const std::string& s) { return kPositions.parse(s, "--positions", "position mode"); }
const char* noise_name(NoiseKind n) { return kNoise.name(n); }
NoiseKind parse_noise(const std::string& s) { return kNoise.parse(s, "--noise", "noise"); }
const char* tau_schedule_name(TauSchedule t) { return kTau.name(t); }
TauSchedule parse_tau_schedule(const std::string& s) { return kTau.parse(s, "--tau-schedule", "temperature schedule"); }
const char* keyformer_variant_name(KeyformerVariant v) { return kKeyformerVariants.name(v); }
KeyformerVariant parse_keyformer_variant(const std::string& s) {
  return kKeyformerVariants.parse(s, "--keyformer-variant", "Keyformer variant");
}
const char* a2sf_revision_name(A2sfRevision r) { return kA2sfRevisions.name(r); }
A2sfRevision parse_a2sf_revision(const std::string& s) {
  return kA2sfRevisions.parse(s, "--a2sf-revision", "A2SF code revision");
}
const char* reduce_name(ReaderReduce r) { return kReduce.name(r); }
ReaderReduce parse_reduce(const std::string& s) { return kReduce.parse(s, "--reduce", "reader reduction"); }

}  // namespace kvscope
