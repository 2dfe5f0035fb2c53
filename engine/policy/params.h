// What the user sets for eviction (docs/policies.md): the policy, its budget and
// protected tokens, granularity, prefill and position modes, Keyformer's
// temperature schedule and noise, A2SF's forgetting factor. `resolve` turns
// it into plain numbers for one prompt, applying each policy's defaults, and
// rejects impossible combinations with a message naming the setting.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "backend/backend.h"
#include "backend/slot_stats.h"
#include "policy/policy_table.h"

namespace kvscope {

// The names of these choices are in the policy table (policy_table.cpp),
// in the order of the enumerators.
enum class Granularity { KvHead, Layer, Model };
enum class PrefillMode { OneShot, Streaming };
enum class TauSchedule { Linear, Constant };
// Keyformer's rules: the paper's (default) or those of the authors' released
// attention.py, which differs in four ways (docs/policies.md, "Where kvscope
// follows the paper and where the authors' code differs").
enum class KeyformerVariant { Paper, Code };
// Which revision of the A2SF authors' code a2sf follows: the earlier one
// evicts at every step as the paper does (default); the latest compresses
// once, after the prompt, with a 16-token window, and then never evicts.
enum class A2sfRevision { Earlier, Latest };

// H2O's score of a key: the attention it has received, summed (the paper),
// or divided by the queries that could see it (kvpress's ObservedAttention).
enum class H2oScore { Sum, Mean };

// How a layer's budget is split among its KV heads (kv_head granularity):
// k each (uniform), or AdaKV's head-adaptive split, where the layer keeps
// n_kv_heads x k slots in all and a head with sharper scores keeps more
// (Feng et al. 2024; kvpress's AdaKVPress).
enum class HeadBudgets { Uniform, Adaptive };

// CriticalKV (Feng et al. 2025; kvpress's CriticalKVPress) over a policy's
// scores: off, or on (each slot's score times its value's output-projected
// L1 norm, after a first stage that keeps each head's best by score alone).
enum class CriticalKv { Off, On };

// ExpectedAttention's two optional terms (kvpress's use_covariance and
// use_vnorm): the queries' covariance in the expected logit, and the
// value's norm as a factor.
enum class QueryCovariance { On, Off };
enum class ValueNorm { On, Off };

// An absolute count or a percentage ("64", "50%"). A budget's percentage is
// of the prompt length; a window's is of the budget (H2O's "k/2"). A budget
// may also be a compression ratio as kvpress states it ("ratio:0.25", the
// fraction of the prompt removed): kvpress keeps max(1, int(n (1 - r))).
struct Amount {
  double value = 0;
  bool percent = false;
  bool ratio = false;                 // value is kvpress's compression_ratio, in [0, 1)
  int of(int whole) const;            // rounds to nearest (a ratio: truncates, as kvpress)
  int truncated_of(int whole) const;  // rounds down, as Python's int() in Keyformer's code
  // The fraction of `whole` it keeps before rounding (a count: value / whole).
  double exact_of(int whole) const;
  std::string str() const;
  // Throws Error::setting(field, ...) for text that is not an amount.
  static Amount parse(const std::string& text, const std::string& field);
  // A compression ratio from its number alone ("0.25"; parse takes "ratio:0.25").
  static Amount parse_ratio(const std::string& number, const std::string& field);
  static constexpr const char* kRatioPrefix = "ratio:";
};

struct PolicyParams {
  PolicyKind kind = PolicyKind::Full;
  Amount budget{100, true};
  std::optional<Amount> window;  // recent tokens always kept; default per policy
  std::optional<int> sinks;      // first positions always kept; default per policy
  // kvpress's DecodingPress schedule: unset, the policy evicts after every
  // step, the prompt included (kvscope's rule); N, the prompt stays whole
  // and the cache is cut to k after decode steps N, 2N, 3N, ...
  std::optional<int> compression_interval;
  std::optional<Granularity> granularity;
  PrefillMode prefill = PrefillMode::OneShot;
  PositionMode positions = PositionMode::Original;
  float tau_init = 1.0f, tau_end = 2.0f;
  TauSchedule tau_schedule = TauSchedule::Linear;
  NoiseKind noise = NoiseKind::Gumbel;
  KeyformerVariant keyformer_variant = KeyformerVariant::Paper;
  float alpha = 0.2f;
  A2sfRevision a2sf_revision = A2sfRevision::Earlier;
  ReaderReduce reduce = ReaderReduce::Mean;
  H2oScore h2o_score = H2oScore::Sum;
  HeadBudgets head_budgets = HeadBudgets::Uniform;
  CurLeverage leverage = CurLeverage::KvProduct;
  CriticalKv critical_kv = CriticalKv::Off;
  QueryCovariance query_covariance = QueryCovariance::On;
  ValueNorm value_norm = ValueNorm::On;
  uint64_t seed = 0;
  // Parameters of the policy table without a field above (policy_table.h),
  // by key; a key not here has its table default.
  std::map<std::string, double> extra;
  // Such a parameter's value (throws for a key not in the table).
  double number(const std::string& key) const;
};

// Where the choice of slots departs from the shared rule (selection.h), one
// switch per behaviour of an authors' code, so each can be tested alone.
// All off for the papers' rules. Set by resolve_policy from the variant and
// revision settings.
struct ChoiceQuirks {
  // Keyformer code: the budget counts a slot held for the token about to
  // come, taken from the recent window: nothing is dropped until the
  // sequence is longer than k, then k - 1 slots stay, the newest w - 1
  // protected.
  bool reserved_slot = false;
  // Keyformer code: the slot that has just left the recent window is dropped
  // instead of competing, so the key tokens, once chosen, never change.
  bool window_exit_dropped = false;
  // Keyformer code: a recent window of 0 never evicts.
  bool zero_window_holds = false;
  // A2SF latest revision: only the choice after the prompt (and those of a
  // streaming prefill) evicts; generated tokens are never dropped.
  bool prompt_only = false;
};

// Numbers for one run.
struct ResolvedPolicy {
  PolicyParams params;
  int k = 0;  // slots kept per unit after each step
  int w = 0;  // recent window
  int s = 0;  // sinks
  int prompt_len = 0;  // what percentages were resolved against
  int interval = 0;    // evict only after decode steps that are multiples of it; 0: after every step
  int chunk = 0;       // ChunkKV: keep whole chunks of this many slots per layer; 0: slots one by one
  bool critical = false;  // CriticalKV: slots ranked by (score + 1e-4) |v W_o|_1 after a first stage
  Granularity granularity = Granularity::KvHead;
  bool evicts = true;  // false for full and ideal
  ChoiceQuirks quirks;
};

// Validates and applies defaults (the policy table's, per policy).
// prompt_len sizes percentage budgets; context is the most tokens the run
// can hold (for "budget larger than the context"). Throws
// Error::setting("policy.budget", ...) and the like.
ResolvedPolicy resolve_policy(const PolicyParams& p, int prompt_len, int context);

const char* policy_name(PolicyKind k);
PolicyKind parse_policy(const std::string& s);  // throws Error::setting("policy.name", ...) listing the policies
const char* granularity_name(Granularity g);
Granularity parse_granularity(const std::string& s);
const char* prefill_name(PrefillMode m);
PrefillMode parse_prefill(const std::string& s);
const char* positions_name(PositionMode m);
PositionMode parse_positions(const std::string& s);
const char* noise_name(NoiseKind n);
NoiseKind parse_noise(const std::string& s);
const char* tau_schedule_name(TauSchedule t);
TauSchedule parse_tau_schedule(const std::string& s);
const char* keyformer_variant_name(KeyformerVariant v);
KeyformerVariant parse_keyformer_variant(const std::string& s);
const char* a2sf_revision_name(A2sfRevision r);
A2sfRevision parse_a2sf_revision(const std::string& s);
const char* reduce_name(ReaderReduce r);
ReaderReduce parse_reduce(const std::string& s);

}  // namespace kvscope
