#include "policy/params.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <vector>

#include "common/error.h"

namespace kvscope {
namespace {

// kvpress's compute_n_kept: int(n * (1 - r)) in double, at least 1.
int kvpress_kept(int whole, double ratio) { return std::max(1, static_cast<int>(whole * (1.0 - ratio))); }

}  // namespace

int Amount::of(int whole) const {
  if (ratio) return kvpress_kept(whole, value);
  return percent ? static_cast<int>(std::lround(value / 100.0 * whole)) : static_cast<int>(value);
}

// whole * value / 100 in that order, as the Keyformer code computes
// int((n * kv_cache) / 100), so the same products truncate the same way.
int Amount::truncated_of(int whole) const {
  if (ratio) return kvpress_kept(whole, value);
  return percent ? static_cast<int>(std::floor(static_cast<double>(whole) * value / 100.0)) : static_cast<int>(value);
}

double Amount::exact_of(int whole) const {
  if (ratio) return whole * (1.0 - value);
  return percent ? whole * (value / 100.0) : value;
}

std::string Amount::str() const {
  char buf[48];
  // %.17g: a ratio reads back to the same double (kvpress's rounding of
  // n (1 - r) depends on its last bit); %g keeps the usual ones short.
  if (ratio) {
    std::snprintf(buf, sizeof(buf), "%s%g", kRatioPrefix, value);
    if (std::strtod(buf + std::strlen(kRatioPrefix), nullptr) != value)
      std::snprintf(buf, sizeof(buf), "%s%.17g", kRatioPrefix, value);
  } else if (percent) {
    std::snprintf(buf, sizeof(buf), "%g%%", value);
  } else {
    std::snprintf(buf, sizeof(buf), "%d", static_cast<int>(value));
  }
  return buf;
}

Amount Amount::parse_ratio(const std::string& t, const std::string& field) {
  char* end = nullptr;
  const double v = t.empty() ? NAN : std::strtod(t.c_str(), &end);
  if (t.empty() || end != t.c_str() + t.size() || !(v >= 0 && v < 1))
    throw Error::setting(field,
                         "a compression ratio (the fraction of the prompt removed, kvpress's "
                         "compression_ratio) must be a number in [0, 1), got '" +
                             t + "'");
  Amount a;
  a.value = v;
  a.ratio = true;
  return a;
}

Amount Amount::parse(const std::string& text, const std::string& field) {
  if (text.rfind(kRatioPrefix, 0) == 0) return parse_ratio(text.substr(std::strlen(kRatioPrefix)), field);
  Amount a;
  std::string t = text;
  if (!t.empty() && t.back() == '%') {
    a.percent = true;
    t.pop_back();
  }
  char* end = nullptr;
  const double v = t.empty() ? NAN : std::strtod(t.c_str(), &end);
  if (t.empty() || end != t.c_str() + t.size() || !std::isfinite(v) || v < 0)
    throw Error::setting(field,
                         "expected a count (e.g. 64), a percentage (e.g. 50%) or a compression ratio (e.g. "
                         "ratio:0.25), got '" +
                             text + "'");
  if (!a.percent && v != std::floor(v)) throw Error::setting(field, "a count must be a whole number, got '" + text + "'");
  // Counts become ints; one past int's range would be undefined behaviour.
  if (!a.percent && v > std::numeric_limits<int>::max())
    throw Error::setting(field, "a count must be at most " + std::to_string(std::numeric_limits<int>::max()) + ", got '" + text + "'");
  if (a.percent && v > 100) throw Error::setting(field, "a percentage must be at most 100%, got '" + text + "'");
  a.value = v;
  return a;
}

ResolvedPolicy resolve_policy(const PolicyParams& p, int prompt_len, int context) {
  const PolicySpec& spec = policy_spec(p.kind);
  ResolvedPolicy r;
  r.params = p;
  r.evicts = spec.evicts;
  r.prompt_len = prompt_len;
  check_param_ranges(p);
  // The table's defaults for this policy, then its variant's rules.
  ResolveRules rules;
  if (spec.variant) spec.variant(p, rules, r.quirks);
  // The papers' "50%" is read as the nearest whole token; a reference that
  // truncates (int() in Keyformer's code) is followed where its variant is chosen.
  auto amount = [&](const Amount& a, int whole) { return rules.truncate_percentages ? a.truncated_of(whole) : a.of(whole); };
  auto default_of = [&](const char* key) { return param_default(spec, *find_param(key)); };
  // A policy without a budget (full) keeps the whole context.
  r.k = spec.uses("budget") ? amount(p.budget, prompt_len) : context;
  if (r.k < 1)
    throw Error::setting("policy.budget", p.budget.str() + " of a " + std::to_string(prompt_len) + "-token prompt keeps no token");
  if (r.k > context)
    throw Error::setting("policy.budget",
                         std::to_string(r.k) + " tokens is larger than the context (" + std::to_string(context) + " tokens)");
  const Amount w_default = Amount::parse(rules.window_default.value_or(default_of("window")), "policy.window");
  r.w = amount(p.window.value_or(w_default), r.k);
  r.s = p.sinks.value_or(std::stoi(default_of("sinks")));
  // A policy's default window in tokens (SnapKV's 64) shrinks to fit a
  // small budget; a window the user set does not, nor a variant's (A2SF's
  // latest code keeps its 16 or refuses the budget, as that code would).
  if (!p.window && !rules.window_default && !w_default.percent && r.evicts) r.w = std::min(r.w, std::max(r.k - r.s, 0));
  r.granularity = p.granularity.value_or(parse_granularity(default_of("granularity")));
  if (spec.uses("head_budgets") && p.head_budgets == HeadBudgets::Adaptive && r.granularity != Granularity::KvHead)
    throw Error::setting("policy.head_budgets", std::string("adaptive splits a layer's budget among its KV heads, "
                                                            "which needs the kv_head granularity (this run's is ") +
                                                    granularity_name(r.granularity) + ")");
  r.chunk = spec.uses("chunk_length") ? static_cast<int>(p.number("chunk_length")) : 0;
  if (r.chunk > 0 && r.granularity != Granularity::Layer)
    throw Error::setting("policy.chunk_length", std::string("chunks are chosen for a whole layer (ChunkKV), which "
                                                            "needs the layer granularity (this run's is ") +
                                                    granularity_name(r.granularity) + ")");
  r.critical = spec.uses("critical_kv") && p.critical_kv == CriticalKv::On;
  if (r.critical && p.kind == PolicyKind::Random)
    throw Error::setting("policy.critical_kv",
                         "CriticalKV weighs a policy's scores by its values; random has no score");
  r.interval = spec.uses("compression_interval") ? p.compression_interval.value_or(0) : 0;
  if (r.interval > 0 && p.prefill == PrefillMode::Streaming)
    throw Error::setting("policy.compression_interval",
                         "the decoding schedule leaves the prompt whole (kvpress's DecodingPress), so it does not "
                         "combine with a streaming prefill");
  if (r.evicts && r.w + r.s > r.k)
    throw Error::setting("policy.budget", std::to_string(r.k) + " is smaller than the recent window (" + std::to_string(r.w) +
                                              ") plus the sinks (" + std::to_string(r.s) + ")");
  // With a window, Keyformer's code keeps k - 1 tokens: k = 1 would keep none.
  if (r.quirks.reserved_slot && r.w > 0 && r.k < 2)
    throw Error::setting("policy.budget", std::to_string(r.k) +
                                              " keeps no token with Keyformer's code variant (it keeps k - 1, a slot "
                                              "being held for the next token)");
  return r;
}

}  // namespace kvscope
