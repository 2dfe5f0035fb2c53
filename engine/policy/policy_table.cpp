// The rows of the policy table (policy_table.h): every parameter, then
// every policy. Texts here are what users read: the window's tooltips, the
// CLI's --help and docs/policies.md's generated tables.
#include "policy/policy_table.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "common/error.h"
#include "common/number_text.h"
#include "policy/params.h"
#include "policy/policy.h"

namespace kvscope {

// Each policy's file makes it (and, for a variant, adjusts the rules).
std::unique_ptr<Policy> make_full_policy(const ResolvedPolicy& r);
std::unique_ptr<Policy> make_window_policy(const ResolvedPolicy& r);
std::unique_ptr<Policy> make_sink_policy(const ResolvedPolicy& r);
std::unique_ptr<Policy> make_h2o_policy(const ResolvedPolicy& r);
std::unique_ptr<Policy> make_tova_policy(const ResolvedPolicy& r);
std::unique_ptr<Policy> make_keyformer_policy(const ResolvedPolicy& r);
std::unique_ptr<Policy> make_a2sf_policy(const ResolvedPolicy& r);
std::unique_ptr<Policy> make_snapkv_policy(const ResolvedPolicy& r);
std::unique_ptr<Policy> make_pyramidkv_policy(const ResolvedPolicy& r);
std::unique_ptr<Policy> make_knorm_policy(const ResolvedPolicy& r);
std::unique_ptr<Policy> make_keydiff_policy(const ResolvedPolicy& r);
std::unique_ptr<Policy> make_cur_policy(const ResolvedPolicy& r);
std::unique_ptr<Policy> make_lagkv_policy(const ResolvedPolicy& r);
std::unique_ptr<Policy> make_leverage_policy(const ResolvedPolicy& r);
std::unique_ptr<Policy> make_expected_policy(const ResolvedPolicy& r);
std::unique_ptr<Policy> make_random_policy(const ResolvedPolicy& r);
std::unique_ptr<Policy> make_ideal_policy(const ResolvedPolicy& r);
void keyformer_variant_rules(const PolicyParams& p, ResolveRules& rules, ChoiceQuirks& q);
void a2sf_revision_rules(const PolicyParams& p, ResolveRules& rules, ChoiceQuirks& q);

namespace {

// A choice stored as an enum whose enumerators follow the names' order.
template <class E, E PolicyParams::*M>
ParamField enum_field() {
  ParamField f;
  f.choice_index = [](const PolicyParams& p) { return static_cast<int>(p.*M); };
  f.set_choice = [](PolicyParams& p, int i) { p.*M = static_cast<E>(i); };
  return f;
}

ParamField granularity_field() {
  ParamField f;
  f.choice_index = [](const PolicyParams& p) { return p.granularity ? static_cast<int>(*p.granularity) : -1; };
  f.set_choice = [](PolicyParams& p, int i) {
    if (i < 0) p.granularity.reset();
    else p.granularity = static_cast<Granularity>(i);
  };
  return f;
}

std::vector<ParamSpec> make_params() {
  std::vector<ParamSpec> v;
  auto add = [&](ParamSpec s) { v.push_back(std::move(s)); };
  // Keyformer's two temperatures: positive, on a logarithmic slider.
  auto temperature = [](ParamSpec& t) {
    t.min = 0;
    t.min_open = true;
    t.log_scale = true;
    t.slider_min = 0.05f;
    t.slider_max = 10;
  };

  ParamSpec budget{"budget",
                   "budget k",
                   "the KV budget",
                   ParamKind::Amount,
                   "Slots kept per eviction unit (one KV head of one layer, by default) after each step: a count "
                   "(64), a percentage of the prompt length (50%), as the papers state it (\"a 50% KV cache\" "
                   "is k = 0.5 x prompt), or kvpress's compression ratio (ratio:0.25 removes a quarter of the "
                   "prompt: k = max(1, int(n (1 - r))), kvpress's rounding). The recent window and the sinks "
                   "count inside k.",
                   "100%"};
  budget.unit = "slots";
  budget.percent_of = "the prompt";
  budget.takes_ratio = true;
  budget.slider_max = 8192;
  budget.field.amount = [](PolicyParams& p) { return &p.budget; };
  add(budget);

  ParamSpec window{"window", "window", "the protected recent window", ParamKind::Amount,
                   "Recent window w: the newest w positions are always kept. A count, or a percentage of the "
                   "budget k (not of the prompt).",
                   "0"};
  window.unit = "positions";
  window.percent_of = "k";
  window.optional = true;
  window.slider_max = 8192;
  window.field.optional_amount = [](PolicyParams& p) { return &p.window; };
  add(window);

  ParamSpec sinks{"sinks", "sinks", "the protected first positions", ParamKind::Count,
                  "Attention sinks s: the first s positions are always kept (StreamingLLM, Xiao et al. 2023; "
                  "TOVA's optional fixed first tokens).",
                  "0"};
  sinks.unit = "positions";
  sinks.min = 0;
  sinks.optional = true;
  sinks.slider_max = 256;
  sinks.custom_start = 4;
  sinks.field.optional_count = [](PolicyParams& p) { return &p.sinks; };
  add(sinks);

  ParamSpec interval{"compression_interval",
                     "compress every",
                     "the decoding schedule's interval",
                     ParamKind::Count,
                     "kvpress's DecodingPress schedule: left unset, the policy evicts after every step, the prompt "
                     "included. Set to N, the prompt stays whole and the cache grows until decode step N, where it "
                     "is cut to the budget k by the policy's ranking (that step's token competing), then again "
                     "after steps 2N, 3N, ... (kvpress's compression_interval, with target_size k; its default "
                     "is 512).",
                     ""};
  interval.unit = "steps";
  interval.min = 1;
  interval.optional = true;
  interval.expert = true;
  interval.slider_max = 512;
  interval.custom_start = 16;
  interval.field.optional_count = [](PolicyParams& p) { return &p.compression_interval; };
  interval.wrapper = true;
  add(interval);

  ParamSpec tau_init{"tau_init", "\xcf\x84 init", "Keyformer's temperature", ParamKind::Real,
                     "The Gumbel-softmax temperature at the prompt (Keyformer, Adnan et al. 2024). The score is "
                     "softmax((logits + noise) / tau); a low tau sharpens it.",
                     "1"};
  temperature(tau_init);
  tau_init.field.real = [](PolicyParams& p) { return &p.tau_init; };
  add(tau_init);

  ParamSpec tau_end{"tau_end", "\xcf\x84 end", "Keyformer's temperature", ParamKind::Real,
                    "Keyformer's temperature after the planned new tokens; with the linear schedule tau rises "
                    "from tau init, so late tokens are scored more evenly.",
                    "2"};
  temperature(tau_end);
  tau_end.field.real = [](PolicyParams& p) { return &p.tau_end; };
  add(tau_end);

  ParamSpec schedule{"tau_schedule", "\xcf\x84 schedule", "Keyformer's temperature schedule", ParamKind::Choice,
                     "linear: tau_t = tau_init + t (tau_end - tau_init) / T over the T planned new tokens (the "
                     "paper); constant: tau init throughout.",
                     "linear"};
  schedule.noun = "temperature schedule";
  schedule.choices = {"linear", "constant"};
  schedule.field = enum_field<TauSchedule, &PolicyParams::tau_schedule>();
  add(schedule);

  ParamSpec noise{"noise", "noise", "Keyformer's score noise", ParamKind::Choice,
                  "The noise g added to the logits before scoring, fresh per step, layer, head and slot: gumbel "
                  "(the paper), and the ablations of its Table 4: gaussian (mean 0.5772, sd 1.2825), constant "
                  "0.5772, none.",
                  "gumbel"};
  noise.noun = "noise";
  noise.choices = {"gumbel", "gaussian", "constant", "none"};
  noise.field = enum_field<NoiseKind, &PolicyParams::noise>();
  add(noise);

  ParamSpec variant{"keyformer_variant", "variant",
                    "the choice between Keyformer's paper and its released code", ParamKind::Choice,
                    "paper: the paper's rules. code: the authors' released attention.py: a slot is held for the "
                    "next token, so k - 1 tokens stay; the key tokens are chosen once and a token leaving the "
                    "recent window is dropped instead of competing; a window of 0 never evicts; percentages are "
                    "truncated, not rounded.",
                    "paper"};
  variant.noun = "Keyformer variant";
  variant.choices = {"paper", "code"};
  variant.written_at_default = false;
  variant.field = enum_field<KeyformerVariant, &PolicyParams::keyformer_variant>();
  add(variant);

  ParamSpec alpha{"alpha", "\xce\xb1 forgetting", "A2SF's forgetting factor", ParamKind::Real,
                  "The forgetting factor of S_t = alpha S_t-1 + A_t (A2SF, Jo & Shin 2024). alpha = 1 is H2O's "
                  "accumulation, alpha = 0 is TOVA's current row only; the paper's best range is 0.1-0.3.",
                  "0.2"};
  alpha.min = 0;
  alpha.max = 1;
  alpha.has_max = true;
  alpha.slider_min = 0;
  alpha.slider_max = 1;
  alpha.field.real = [](PolicyParams& p) { return &p.alpha; };
  add(alpha);

  ParamSpec revision{"a2sf_revision", "code revision", "the revision of A2SF's code to follow", ParamKind::Choice,
                     "earlier: evict at every step, as the paper describes. latest: compress once after the "
                     "prompt, keeping the 16 newest tokens (the default window), then evict nothing while "
                     "generating, so the cache grows.",
                     "earlier"};
  revision.noun = "A2SF code revision";
  revision.choices = {"earlier", "latest"};
  revision.written_at_default = false;
  revision.field = enum_field<A2sfRevision, &PolicyParams::a2sf_revision>();
  add(revision);

  ParamSpec h2o_score{"h2o_score",
                      "score",
                      "H2O's score of a key",
                      ParamKind::Choice,
                      "sum: the attention a key has received, summed over every query so far (the H2O paper). "
                      "mean: that sum divided by the queries that could see the key, so late keys are not "
                      "outvoted by early ones (kvpress's ObservedAttentionPress).",
                      "sum"};
  h2o_score.noun = "H2O score";
  h2o_score.choices = {"sum", "mean"};
  h2o_score.written_at_default = false;
  h2o_score.field = enum_field<H2oScore, &PolicyParams::h2o_score>();
  add(h2o_score);

  ParamSpec kernel{"kernel",
                   "pooling kernel",
                   "SnapKV's pooling kernel",
                   ParamKind::Count,
                   "SnapKV ranks a slot by the mean score of the kernel slots centred on it (zero beyond the "
                   "competing slots), so neighbours of a strong token stay with it. Odd; 1 turns pooling off.",
                   "5"};
  kernel.unit = "slots";
  kernel.min = 1;
  kernel.slider_min = 1;
  kernel.slider_max = 15;
  kernel.written_at_default = false;  // session files of other policies stay as they were
  add(kernel);

  ParamSpec head_budgets{"head_budgets",
                         "head budgets",
                         "the split of a layer's budget among its KV heads",
                         ParamKind::Choice,
                         "uniform: every KV head keeps k. adaptive: AdaKV (Feng et al. 2024; kvpress's AdaKVPress): "
                         "the layer keeps n_kv_heads x k slots in all; each head first keeps its best "
                         "max(1, int(k x safeguard)), then the layer's best remaining scores stay whichever head "
                         "holds them, so heads whose scores are concentrated give slots to heads whose are spread.",
                         "uniform"};
  head_budgets.noun = "head budget split";
  head_budgets.choices = {"uniform", "adaptive"};
  head_budgets.written_at_default = false;
  head_budgets.field = enum_field<HeadBudgets, &PolicyParams::head_budgets>();
  head_budgets.wrapper = true;
  add(head_budgets);

  ParamSpec safeguard{"safeguard",
                      "AdaKV safeguard",
                      "AdaKV's safeguard share",
                      ParamKind::Real,
                      "Under adaptive head budgets, the share of k each KV head keeps by its own ranking before the "
                      "layer's heads compete for the rest (kvpress's alpha_safeguard); 0 lets a head lose all its "
                      "slots but the protected ones.",
                      "0.2"};
  safeguard.min = 0;
  safeguard.max = 1;
  safeguard.has_max = true;
  safeguard.slider_min = 0;
  safeguard.slider_max = 1;
  safeguard.written_at_default = false;
  safeguard.wrapper = true;
  add(safeguard);

  ParamSpec chunk{"chunk_length",
                  "chunk length",
                  "ChunkKV's chunk length",
                  ParamKind::Count,
                  "ChunkKV (Liu et al. 2025; kvpress's ChunkKVPress) over this policy's scores: 0 ranks slots one by "
                  "one. L cuts each layer's cache into chunks of L slots (the last one shorter), ranks them by the "
                  "mean score of their slots summed over the layer's KV heads, and keeps whole chunks: "
                  "max(1, int(C (1 - r))) of the C chunks for a compression-ratio budget r at the prompt, as "
                  "kvpress, else max(1, int(C k / n)) of a cache of n slots. Chunks holding protected slots stay. "
                  "Needs the layer granularity.",
                  "0"};
  chunk.unit = "slots";
  chunk.min = 0;
  chunk.expert = true;
  chunk.slider_min = 0;
  chunk.slider_max = 64;
  chunk.written_at_default = false;
  chunk.wrapper = true;
  add(chunk);

  ParamSpec critical{"critical_kv",
                     "CriticalKV",
                     "CriticalKV",
                     ParamKind::Choice,
                     "CriticalKV (Feng et al. 2025; kvpress's CriticalKVPress) over this policy's scores: each KV "
                     "head first keeps its best int(k x first_stage) slots by score alone (its protected slots "
                     "counting first), then ranks the rest by (score + 1e-4) x |v W_o|_1, the L1 norm of the slot's "
                     "value through the output projection of each query head reading it, averaged over those heads.",
                     "off"};
  critical.noun = "CriticalKV setting";
  critical.choices = {"off", "on"};
  critical.expert = true;
  critical.written_at_default = false;
  critical.field = enum_field<CriticalKv, &PolicyParams::critical_kv>();
  critical.wrapper = true;
  add(critical);

  ParamSpec first_stage{"first_stage",
                        "CriticalKV first stage",
                        "CriticalKV's first-stage share",
                        ParamKind::Real,
                        "Under CriticalKV, the share of k each KV head keeps by its plain score before the value "
                        "norms weigh the rest (kvpress's first_stage_ratio; at least one slot when above 0).",
                        "0.5"};
  first_stage.min = 0;
  first_stage.max = 1;
  first_stage.has_max = true;
  first_stage.expert = true;
  first_stage.slider_min = 0;
  first_stage.slider_max = 1;
  first_stage.written_at_default = false;
  first_stage.wrapper = true;
  add(first_stage);

  ParamSpec cur_window{"cur_window",
                       "local window",
                       "CUR's local window",
                       ParamKind::Count,
                       "CUR normalises each slot's squared key and value norms by their sums over a window of this "
                       "many consecutive slots (kvpress's local_window_size); 0 normalises over the whole cache.",
                       "16"};
  cur_window.unit = "slots";
  cur_window.min = 0;
  cur_window.slider_min = 0;
  cur_window.slider_max = 256;
  cur_window.written_at_default = false;
  add(cur_window);

  ParamSpec leverage{"leverage",
                     "leverage",
                     "CUR's leverage",
                     ParamKind::Choice,
                     "How CUR combines the key's and the value's normalised squared norms: their product "
                     "(kv_product, kvpress's default), the key's or the value's alone, or their mean (kv_avg).",
                     "kv_product"};
  leverage.noun = "CUR leverage";
  leverage.choices = {"kv_product", "key", "value", "kv_avg"};
  leverage.written_at_default = false;
  leverage.field = enum_field<CurLeverage, &PolicyParams::leverage>();
  add(leverage);

  ParamSpec lag{"lag",
                "lag",
                "LagKV's partition size",
                ParamKind::Count,
                "LagKV cuts the cache after the sinks into partitions of this many slots and scores each token "
                "against the channel ranges of the next partition (kvpress's lag_size, default 128).",
                "128"};
  lag.unit = "slots";
  lag.min = 1;
  lag.max = 1024;  // backend/cache_scores.h's scratch
  lag.has_max = true;
  lag.slider_min = 1;
  lag.slider_max = 512;
  lag.written_at_default = false;
  add(lag);

  ParamSpec future{"future_positions",
                   "future positions",
                   "ExpectedAttention's future positions",
                   ParamKind::Count,
                   "ExpectedAttention averages the RoPE rotation of the queries to come over this many next "
                   "positions (kvpress's n_future_positions).",
                   "512"};
  future.unit = "positions";
  future.min = 1;
  future.max = 1 << 20;
  future.has_max = true;
  future.slider_min = 1;
  future.slider_max = 4096;
  future.written_at_default = false;
  add(future);

  ParamSpec covariance{"query_covariance",
                       "query covariance",
                       "ExpectedAttention's covariance term",
                       ParamKind::Choice,
                       "Whether ExpectedAttention's expected logit adds the queries' covariance term k^T Sigma k / "
                       "2d to the mean's (kvpress's use_covariance).",
                       "on"};
  covariance.noun = "covariance setting";
  covariance.choices = {"on", "off"};
  covariance.expert = true;
  covariance.written_at_default = false;
  covariance.field = enum_field<QueryCovariance, &PolicyParams::query_covariance>();
  add(covariance);

  ParamSpec vnorm{"value_norm",
                  "value norm",
                  "ExpectedAttention's value-norm factor",
                  ParamKind::Choice,
                  "Whether ExpectedAttention multiplies each slot's expected attention by its value's L2 norm "
                  "(kvpress's use_vnorm).",
                  "on"};
  vnorm.noun = "value-norm setting";
  vnorm.choices = {"on", "off"};
  vnorm.expert = true;
  vnorm.written_at_default = false;
  vnorm.field = enum_field<ValueNorm, &PolicyParams::value_norm>();
  add(vnorm);

  ParamSpec beta{"beta",
                 "pyramid \xce\xb2",
                 "PyramidKV's steepness",
                 ParamKind::Real,
                 "PyramidKV's steepness: the deepest layer keeps about k / beta slots and the first 2k - k / beta, the "
                 "layers between on a straight line, so the mean stays k (kvpress's beta). No layer keeps more than "
                 "the prompt minus the window.",
                 "20"};
  beta.min = 1;
  beta.slider_min = 1;
  beta.slider_max = 100;
  beta.log_scale = true;
  beta.written_at_default = false;
  add(beta);

  ParamSpec granularity{"granularity", "granularity", "the decision unit", ParamKind::Choice,
                        "Who decides together. kv_head: each KV head alone (H2O's per-head version); layer: all "
                        "heads of a layer share one decision (TOVA's default, better in its Table 3); model: one "
                        "decision for the whole model (Keyformer's \"Shared\" ablation).",
                        "kv_head"};
  granularity.noun = "granularity";
  granularity.choices = {"kv_head", "layer", "model"};
  granularity.optional = true;
  granularity.expert = true;
  granularity.field = granularity_field();
  add(granularity);

  ParamSpec prefill{"prefill", "prefill", "the prefill mode", ParamKind::Choice,
                    "one_shot: the whole prompt with full attention, statistics from its attention matrix, then "
                    "one eviction down to k (H2O, Keyformer, A2SF's code). streaming: the prompt token by token "
                    "with the policy at every token (TOVA's language-modelling setup, StreamingLLM).",
                    "one_shot"};
  prefill.noun = "prefill mode";
  prefill.choices = {"one_shot", "streaming"};
  prefill.expert = true;
  prefill.field = enum_field<PrefillMode, &PolicyParams::prefill>();
  add(prefill);

  ParamSpec positions{"positions", "positions", "the position mode of kept keys", ParamKind::Choice,
                      "original: keys keep their true positions (RoPE applied once, ALiBi from true distances). "
                      "compacted: keys re-rotated to their slot order (StreamingLLM's pos-shift, Keyformer's "
                      "\"New Pos\" ablation).",
                      "original"};
  positions.noun = "position mode";
  positions.choices = {"original", "compacted"};
  positions.expert = true;
  positions.field = enum_field<PositionMode, &PolicyParams::positions>();
  add(positions);

  ParamSpec reduce{"reduce", "reduce", "how a KV head's readers combine their scores", ParamKind::Choice,
                   "How the statistic of a KV head is made from the query heads (and MLKV layers) that read it: "
                   "their mean or their max.",
                   "mean"};
  reduce.noun = "reader reduction";
  reduce.choices = {"mean", "max"};
  reduce.expert = true;
  reduce.field = enum_field<ReaderReduce, &PolicyParams::reduce>();
  add(reduce);
  return v;
}

std::vector<PolicySpec> make_policies() {
  using K = PolicyKind;
  // What every policy with a budget reads: the budget and its protected
  // tokens; and what every evicting one reads: when it evicts.
  const std::vector<ParamUse> base = {{"budget"}, {"window"}, {"sinks"}, {"prefill"}, {"positions"}};
  auto with = [&](std::vector<ParamUse> more, std::vector<ParamUse> defaults = {}, bool evicts = true) {
    std::vector<ParamUse> all = base;
    if (evicts) all.push_back({"compression_interval"});
    all.insert(all.end(), more.begin(), more.end());
    // A policy that ranks per KV head may split a layer's budget among
    // them (AdaKV); one that never evicts has no budget to split.
    const bool per_head =
        std::any_of(more.begin(), more.end(), [](const ParamUse& u) { return std::string(u.key) == "granularity"; });
    if (evicts && per_head)
      all.insert(all.end(), {{"head_budgets"}, {"safeguard"}, {"chunk_length"}, {"critical_kv"}, {"first_stage"}});
    for (const ParamUse& d : defaults)
      for (ParamUse& u : all)
        if (std::string(u.key) == d.key) u.default_text = d.default_text;
    return all;
  };
  std::vector<PolicySpec> v;
  v.push_back({K::Full, "full", "full", "", "Keeps every token: the topline every other policy is measured against.",
               nullptr, false, {{"prefill"}}, make_full_policy});
  v.push_back({K::Window, "window", "window", "",
               "Keeps the newest k tokens only (a sliding window). Loses anything older, e.g. a pass key early in "
               "the prompt.",
               nullptr, true, with({}), make_window_policy});
  v.push_back({K::Sink, "sink", "sink (StreamingLLM)",
               "Xiao et al. 2023, Efficient Streaming Language Models with Attention Sinks",
               "StreamingLLM: the first s tokens (attention sinks) plus the newest k - s.", nullptr, true,
               with({}, {{"sinks", "4"}}), make_sink_policy});
  v.push_back({K::H2O, "h2o", "h2o", "Zhang et al. 2023, H2O: Heavy-Hitter Oracle",
               "Heavy-Hitter Oracle: keeps the recent window plus the tokens with the largest accumulated "
               "attention S_t = S_t-1 + A_t.",
               "accumulated attention (H2O)", true,
               with({{"h2o_score"}, {"granularity"}, {"reduce"}}, {{"window", "50%"}}), make_h2o_policy});
  v.push_back({K::TOVA, "tova", "tova", "Oren et al. 2024, Transformers are Multi-State RNNs",
               "Token Omission Via Attention: evicts the token with the lowest attention in the current step "
               "only; head-averaged (per layer) by default.",
               "current attention (TOVA)", true, with({{"granularity"}, {"reduce"}}, {{"granularity", "layer"}}),
               make_tova_policy});
  v.push_back({K::Keyformer, "keyformer", "keyformer", "Adnan et al. 2024, Keyformer",
               "Accumulates a Gumbel-softmax score softmax((logits + noise) / tau) with a rising temperature tau; "
               "keeps the recent window plus the highest totals.",
               "accumulated Gumbel-softmax score (Keyformer)", true,
               with({{"tau_init"}, {"tau_end"}, {"tau_schedule"}, {"noise"}, {"keyformer_variant"}, {"granularity"},
                     {"reduce"}},
                    {{"window", "30%"}}),
               make_keyformer_policy, keyformer_variant_rules});
  v.push_back({K::A2SF, "a2sf", "a2sf", "Jo & Shin 2024, A2SF: Accumulative Attention Scoring with Forgetting Factor",
               "Accumulated attention with a forgetting factor, S_t = alpha * S_t-1 + A_t.",
               "forgetting-factor attention sum (A2SF)", true,
               with({{"alpha"}, {"a2sf_revision"}, {"granularity"}, {"reduce"}}), make_a2sf_policy,
               a2sf_revision_rules});
  v.push_back({K::SnapKV, "snapkv", "snapkv",
               "Li et al. 2024, SnapKV: LLM Knows What You are Looking for Before Generation",
               "Scores the prompt's keys by the attention of its last w queries (the observation window, also kept "
               "whole), pooled over neighbouring slots; while decoding, new queries add to the score as in H2O.",
               "observation-window attention (SnapKV)", true,
               with({{"kernel"}, {"granularity"}, {"reduce"}}, {{"window", "64"}}), make_snapkv_policy});
  v.push_back({K::PyramidKV, "pyramidkv", "pyramidkv",
               "Cai et al. 2024, PyramidKV: Dynamic KV Cache Compression based on Pyramidal Information Funneling",
               "SnapKV's scores with a budget per layer that falls with depth (a pyramid whose mean is k): lower "
               "layers keep more.",
               "observation-window attention (SnapKV)", true,
               with({{"kernel"}, {"beta"}, {"granularity"}, {"reduce"}}, {{"window", "64"}}), make_pyramidkv_policy});
  v.push_back({K::Knorm, "knorm", "knorm",
               "Devoto et al. 2024, A Simple and Effective L2 Norm-Based Strategy for KV Cache Compression",
               "Keeps the keys with the smallest L2 norm, S = -|k|: no attention needed, the key alone decides.",
               "minus the key's norm (Knorm)", true, with({{"granularity"}}), make_knorm_policy});
  v.push_back({K::KeyDiff, "keydiff", "keydiff", "Park et al. 2025, KeyDiff: Key Similarity-Based KV Cache Eviction",
               "Keeps the keys least like the others: S = -cos(k, mean direction of the segment's keys), rescored "
               "after every step as the mean moves.",
               "minus the key's cosine with the mean key (KeyDiff)", true, with({{"granularity"}}),
               make_keydiff_policy});
  v.push_back({K::Cur, "cur", "cur (CurDKV)",
               "Sengupta et al. 2025, Value-Guided KV Compression for LLMs via Approximated CUR Decomposition",
               "Keeps the slots whose key and value stand out from their neighbours: the product of their squared "
               "norms, each normalised within a local window of slots. No attention needed.",
               "key x value leverage (CUR)", true,
               with({{"cur_window"}, {"leverage"}, {"granularity"}}, {{"sinks", "4"}}), make_cur_policy});
  v.push_back({K::LagKv, "lagkv", "lagkv",
               "Liang et al. 2025, LagKV: Lag-Relative Information of the KV Cache Tells Which Tokens Are Important",
               "Scores each token against the next partition of the cache (lag slots later): the spread of its "
               "min-max normalised key and value, ranked within its partition; the sinks and the newest one to two "
               "partitions stay. No attention needed.",
               "rank of the lag-relative spread (LagKV)", true, with({{"lag"}, {"granularity"}}, {{"sinks", "4"}}),
               make_lagkv_policy});
  v.push_back({K::Leverage, "leverage", "leverage",
               "Chari & Van Durme 2025, Compactor: Calibrated Query-Agnostic KV Cache Compression with Approximate "
               "Leverage Scores",
               "Keeps the keys with the highest statistical leverage among their KV head's keys before RoPE "
               "(centred): the outliers a low-rank summary of the cache would lose. No attention needed.",
               "key leverage (LeverageScore)", true, with({{"granularity"}}), make_leverage_policy});
  v.push_back({K::Expected, "expected", "expected attention",
               "Devoto et al. 2025, Expected Attention: KV Cache Compression by Estimating Attention from Future "
               "Queries Distribution",
               "Keeps the slots the queries to come are expected to attend to: the queries so far, before RoPE, "
               "as a Gaussian (mean and covariance), the RoPE of the next positions averaged, the expected softmax "
               "weight of each key in closed form, times its value's norm. No attention row needed.",
               "expected attention of future queries (ExpectedAttention)", true,
               with({{"future_positions"}, {"query_covariance"}, {"value_norm"}, {"granularity"}}, {{"sinks", "4"}}),
               make_expected_policy});
  v.push_back({K::Random, "random", "random", "",
               "Evicts a uniformly random unprotected token (seeded): a baseline.", "random draw", true,
               with({{"granularity"}}), make_random_policy});
  v.push_back({K::Ideal, "ideal", "ideal", "Jo & Shin 2024 (A2SF's \"Ideal\")",
               "Evicts nothing; the mask shows the top k of the full cache's current attention row (a reference).",
               "full-cache attention (ideal)", false, with({{"granularity"}, {"reduce"}}, {}, /*evicts=*/false),
               make_ideal_policy});
  return v;
}

[[noreturn]] void unknown_choice(const ParamSpec& param, const std::string& text) {
  std::string all;
  for (const char* c : param.choices) all += (all.empty() ? "" : ", ") + std::string(c);
  throw Error::setting(param_field(param), "unknown " + std::string(param.noun) + " '" + text + "' (choose from " + all + ")");
}

int choice_of(const ParamSpec& param, const std::string& text) {
  for (std::size_t i = 0; i < param.choices.size(); ++i)
    if (text == param.choices[i]) return static_cast<int>(i);
  unknown_choice(param, text);
}

const ParamSpec& param(const char* key) { return *find_param(key); }

}  // namespace

bool PolicySpec::uses(const std::string& key) const { return use(key) != nullptr; }

const ParamUse* PolicySpec::use(const std::string& key) const {
  for (const ParamUse& u : params)
    if (key == u.key) return &u;
  return nullptr;
}

const std::vector<ParamSpec>& param_specs() {
  static const std::vector<ParamSpec> params = make_params();
  return params;
}

const std::vector<PolicySpec>& policy_specs() {
  static const std::vector<PolicySpec> policies = make_policies();
  return policies;
}

const PolicySpec& policy_spec(PolicyKind kind) {
  for (const PolicySpec& p : policy_specs())
    if (p.kind == kind) return p;
  throw Error("policy table: a policy kind without a row");
}

const PolicySpec* find_policy(const std::string& name) {
  for (const PolicySpec& p : policy_specs())
    if (name == p.name) return &p;
  return nullptr;
}

const ParamSpec* find_param(const std::string& key) {
  for (const ParamSpec& p : param_specs())
    if (key == p.key) return &p;
  return nullptr;
}

std::string param_field(const ParamSpec& p) { return std::string("policy.") + p.key; }

std::string param_flag(const ParamSpec& p) {
  std::string flag = std::string("--") + p.key;
  for (char& c : flag)
    if (c == '_') c = '-';
  return flag;
}

std::string param_default(const PolicySpec& policy, const ParamSpec& param) {
  const ParamUse* u = policy.use(param.key);
  if (u && *u->default_text) return u->default_text;
  return param.fallback;
}

std::string range_text(const ParamSpec& p) {
  if (p.kind != ParamKind::Count && p.kind != ParamKind::Real) return "";
  if (p.has_max) return "must be in [" + number_text(p.min) + ", " + number_text(p.max) + "]";
  return std::string(p.min_open ? "must be > " : "must be >= ") + number_text(p.min);
}

std::string param_text(const PolicyParams& p, const ParamSpec& param) {
  PolicyParams& q = const_cast<PolicyParams&>(p);  // the accessors serve reads and writes alike
  const ParamField& f = param.field;
  if (f.amount) return f.amount(q)->str();
  if (f.optional_amount) return *f.optional_amount(q) ? (*f.optional_amount(q))->str() : "";
  if (f.optional_count) return *f.optional_count(q) ? std::to_string(**f.optional_count(q)) : "";
  if (f.real) return number_text(*f.real(q));
  if (f.choice_index) {
    const int i = f.choice_index(p);
    return i < 0 ? "" : param.choices[i];
  }
  return number_text(param_number(p, param));
}

double param_number(const PolicyParams& p, const ParamSpec& param) {
  const auto it = p.extra.find(param.key);
  return it != p.extra.end() ? it->second : std::strtod(param.fallback, nullptr);
}

void set_param_text(PolicyParams& p, const ParamSpec& param, const std::string& text) {
  const ParamField& f = param.field;
  const std::string field = param_field(param);
  if (param.kind == ParamKind::Amount) {
    const Amount a = Amount::parse(text, field);
    if (a.ratio && !param.takes_ratio)
      throw Error::setting(field, std::string("a compression ratio is a budget's form; ") + param.what +
                                      " is a count or a percentage, got '" + text + "'");
    if (f.amount) *f.amount(p) = a;
    else *f.optional_amount(p) = a;
    return;
  }
  if (param.kind == ParamKind::Choice) {
    f.set_choice(p, choice_of(param, text));
    return;
  }
  char* end = nullptr;
  const double v = text.empty() ? NAN : std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size())
    throw Error::setting(field, std::string("expected ") + (param.kind == ParamKind::Count ? "a whole number" : "a number") +
                                    ", got '" + text + "'");
  if (param.kind == ParamKind::Count && (v != std::floor(v) || std::fabs(v) > 2e9))
    throw Error::setting(field, "expected a whole number, got '" + text + "'");
  if (f.optional_count) *f.optional_count(p) = static_cast<int>(v);
  else if (f.real) *f.real(p) = static_cast<float>(v);
  else p.extra[param.key] = v;
}

void check_param_ranges(const PolicyParams& p) {
  for (const ParamSpec& s : param_specs()) {
    if (s.kind != ParamKind::Count && s.kind != ParamKind::Real) continue;
    const std::string text = param_text(p, s);
    if (text.empty()) continue;  // unset optional
    double v = 0;
    if (s.field.optional_count) v = **s.field.optional_count(const_cast<PolicyParams&>(p));
    else if (s.field.real) v = *s.field.real(const_cast<PolicyParams&>(p));
    else v = param_number(p, s);
    if (!std::isfinite(v)) throw Error::setting(param_field(s), "must be finite");  // inf and nan
    const bool ok = (s.min_open ? v > s.min : v >= s.min) && (!s.has_max || v <= s.max);
    if (!ok) throw Error::setting(param_field(s), range_text(s));
  }
}

double PolicyParams::number(const std::string& key) const {
  const ParamSpec* s = find_param(key);
  if (!s) throw Error("policy table: no parameter '" + key + "'");
  return param_number(*this, *s);
}

// The names of the choices: the table's, so the CLI, the window, session
// files and the docs spell them one way.
const char* policy_name(PolicyKind k) { return policy_spec(k).name; }
PolicyKind parse_policy(const std::string& s) {
  if (const PolicySpec* p = find_policy(s)) return p->kind;
  std::string all;
  for (const PolicySpec& p : policy_specs()) all += (all.empty() ? "" : ", ") + std::string(p.name);
  throw Error::setting("policy.name", "unknown policy '" + s + "' (choose from " + all + ")");
}

#define KVSCOPE_CHOICE_NAMES(Enum, name_fn, parse_fn, key)                                              \
  const char* name_fn(Enum e) {                                                                          \
    const auto& c = param(key).choices;                                                                  \
    const auto i = static_cast<std::size_t>(e);                                                          \
    return i < c.size() ? c[i] : "?";                                                                   \
  }                                                                                                      \
  Enum parse_fn(const std::string& s) { return static_cast<Enum>(choice_of(param(key), s)); }

KVSCOPE_CHOICE_NAMES(Granularity, granularity_name, parse_granularity, "granularity")
KVSCOPE_CHOICE_NAMES(PrefillMode, prefill_name, parse_prefill, "prefill")
KVSCOPE_CHOICE_NAMES(PositionMode, positions_name, parse_positions, "positions")
KVSCOPE_CHOICE_NAMES(NoiseKind, noise_name, parse_noise, "noise")
KVSCOPE_CHOICE_NAMES(TauSchedule, tau_schedule_name, parse_tau_schedule, "tau_schedule")
KVSCOPE_CHOICE_NAMES(KeyformerVariant, keyformer_variant_name, parse_keyformer_variant, "keyformer_variant")
KVSCOPE_CHOICE_NAMES(A2sfRevision, a2sf_revision_name, parse_a2sf_revision, "a2sf_revision")
KVSCOPE_CHOICE_NAMES(ReaderReduce, reduce_name, parse_reduce, "reduce")
#undef KVSCOPE_CHOICE_NAMES

}  // namespace kvscope
