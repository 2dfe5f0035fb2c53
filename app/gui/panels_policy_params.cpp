// The editor of one eviction policy's parameters (docs/policies.md), used for A
// and for the fork B. Every control says in its tooltip what it does and
// which paper it comes from; the engine's resolve_policy is the judge of
// what is possible, so the panel shows its message instead of guessing.
#include <algorithm>
#include <cstring>

#include <imgui.h>

#include "common/error.h"
#include "panels.h"

namespace kvscope::gui {

namespace {

struct PolicyInfo {
  PolicyKind kind;
  const char* label;
  const char* help;
};

constexpr PolicyInfo kPolicies[] = {
    {PolicyKind::Full, "full", "Keeps every token: the topline every other policy is measured against."},
    {PolicyKind::Window, "window", "Keeps the newest k tokens only (a sliding window). Loses anything older, "
                                   "e.g. a pass key early in the prompt."},
    {PolicyKind::Sink, "sink (StreamingLLM)", "StreamingLLM (Xiao et al. 2023): the first s tokens (attention "
                                              "sinks) plus the newest k - s."},
    {PolicyKind::H2O, "h2o", "H2O, Heavy-Hitter Oracle (Zhang et al. 2023): keeps the recent window plus the "
                             "tokens with the largest accumulated attention S_t = S_t-1 + A_t."},
    {PolicyKind::TOVA, "tova", "TOVA, Token Omission Via Attention (Oren et al. 2024): evicts the token with the "
                               "lowest attention in the current step only; head-averaged by default."},
    {PolicyKind::Keyformer, "keyformer", "Keyformer (Adnan et al. 2024): accumulates a Gumbel-softmax score "
                                         "softmax((logits + noise) / tau) with a rising temperature tau."},
    {PolicyKind::A2SF, "a2sf", "A2SF (Jo & Shin 2024): accumulated attention with a forgetting factor, "
                               "S_t = alpha * S_t-1 + A_t."},
    {PolicyKind::Random, "random", "Evicts a uniformly random unprotected token (seeded): a baseline."},
    {PolicyKind::Ideal, "ideal", "A2SF's \"Ideal\": evicts nothing; the mask shows the top k of the full "
                                 "cache's current attention row (a reference)."},
};

const PolicyInfo& info_of(PolicyKind k) {
  for (const auto& p : kPolicies)
    if (p.kind == k) return p;
  return kPolicies[0];
}

// A combo over an enum given by its names; returns true on change.
template <class E, size_t N>
bool enum_combo(const char* label, E& value, const std::pair<E, const char*> (&items)[N]) {
  const char* preview = "";
  for (const auto& [v, name] : items)
    if (v == value) preview = name;
  bool changed = false;
  if (ImGui::BeginCombo(label, preview)) {
    for (const auto& [v, name] : items)
      if (ImGui::Selectable(name, v == value)) {
        changed = v != value;
        value = v;
      }
    ImGui::EndCombo();
  }
  return changed;
}

// An Amount as a number with a "tokens" / "%" switch.
bool edit_amount(const char* id, Amount& a, const char* percent_of, float max_tokens) {
  ImGui::PushID(id);
  bool changed = false;
  float v = static_cast<float>(a.value);
  ImGui::SetNextItemWidth(ImGui::GetTextLineHeight() * 6);
  if (a.percent) changed |= ImGui::DragFloat("##v", &v, 0.5f, 0.0f, 100.0f, "%.0f%%", ImGuiSliderFlags_AlwaysClamp);
  else changed |= ImGui::DragFloat("##v", &v, 0.5f, 0.0f, max_tokens, "%.0f tokens", ImGuiSliderFlags_AlwaysClamp);
  if (changed) a.value = a.percent ? v : std::round(v);
  ImGui::SameLine();
  const std::string pct = std::string("% of ") + percent_of;
  if (ImGui::SmallButton(a.percent ? pct.c_str() : "tokens")) {
    a.percent = !a.percent;
    a.value = a.percent ? 30 : 32;  // a sensible value in the new unit rather than a surprising conversion
    changed = true;
  }
  ImGui::PopID();
  return changed;
}

}  // namespace

bool edit_policy_params(const char* id, PolicyParams& p, bool expert) {
  ImGui::PushID(id);
  bool changed = false;
  const float field_w = ImGui::GetTextLineHeight() * 9;

  ImGui::SetNextItemWidth(field_w);
  if (ImGui::BeginCombo("policy", info_of(p.kind).label)) {
    for (const auto& info : kPolicies) {
      if (ImGui::Selectable(info.label, info.kind == p.kind)) {
        changed |= info.kind != p.kind;
        p.kind = info.kind;
      }
      help_tooltip(info.help);
    }
    ImGui::EndCombo();
  }
  help_tooltip(info_of(p.kind).help);

  const bool evicts = p.kind != PolicyKind::Full;
  if (evicts) {
    ImGui::TextUnformatted("budget k");
    ImGui::SameLine();
    changed |= edit_amount("budget", p.budget, "prompt", 8192);
    help_tooltip("Slots kept per eviction unit (one KV head of one layer) after each step. As a percentage it is "
                 "of the prompt length, as the papers state it (\"50% KV cache\" = k = 0.5 x prompt). The window "
                 "and the sinks count inside k.");
  }

  if (evicts && p.kind != PolicyKind::Ideal) {
    if (p.kind != PolicyKind::Window && p.kind != PolicyKind::Sink) {
      bool custom = p.window.has_value();
      if (ImGui::Checkbox("window##custom", &custom)) {
        changed = true;
        if (custom) p.window = Amount{0, false};
        else p.window.reset();
      }
      help_tooltip("Recent window w: the newest w tokens are always kept. Default per policy: H2O k/2, Keyformer "
                   "30% of k (Keyformer paper), TOVA and A2SF 0 (their papers use none). A percentage is of k.");
      ImGui::SameLine();
      if (p.window) changed |= edit_amount("window", *p.window, "k", 8192);
      else ImGui::TextDisabled("policy default");
    }
    bool custom_sinks = p.sinks.has_value();
    if (ImGui::Checkbox("sinks##custom", &custom_sinks)) {
      changed = true;
      if (custom_sinks) p.sinks = 4;
      else p.sinks.reset();
    }
    help_tooltip("Attention sinks s: the first s positions are always kept (StreamingLLM, Xiao et al. 2023; "
                 "TOVA's optional fixed first tokens). Default: 4 for sink, 0 otherwise.");
    ImGui::SameLine();
    if (p.sinks) {
      ImGui::SetNextItemWidth(ImGui::GetTextLineHeight() * 6);
      if (ImGui::DragInt("##sinks", &*p.sinks, 0.2f, 0, 256, "%d tokens", ImGuiSliderFlags_AlwaysClamp)) changed = true;
    } else {
      ImGui::TextDisabled("policy default");
    }
  }

  if (p.kind == PolicyKind::Keyformer) {
    ImGui::SetNextItemWidth(field_w);
    changed |= ImGui::SliderFloat("\xcf\x84 init", &p.tau_init, 0.05f, 10.0f, "%.2f", ImGuiSliderFlags_Logarithmic);
    help_tooltip("Keyformer (Adnan et al. 2024): the Gumbel-softmax temperature at the prefill. The score is "
                 "softmax((logits + noise) / tau); a low tau sharpens it. Paper default 1.");
    ImGui::SetNextItemWidth(field_w);
    changed |= ImGui::SliderFloat("\xcf\x84 end", &p.tau_end, 0.05f, 10.0f, "%.2f", ImGuiSliderFlags_Logarithmic);
    help_tooltip("Keyformer: the temperature at the last planned step; tau rises linearly from tau init, "
                 "so late tokens are scored more evenly. Paper default 2.");
    ImGui::SetNextItemWidth(field_w);
    changed |= enum_combo("\xcf\x84 schedule", p.tau_schedule,
                          {std::pair{TauSchedule::Linear, "linear"}, std::pair{TauSchedule::Constant, "constant"}});
    help_tooltip("Keyformer: linear = tau_t = tau_init + t (tau_end - tau_init) / T (the paper); constant = tau init throughout.");
    ImGui::SetNextItemWidth(field_w);
    changed |= enum_combo("noise", p.noise,
                          {std::pair{NoiseKind::Gumbel, "gumbel"}, std::pair{NoiseKind::Gaussian, "gaussian"},
                           std::pair{NoiseKind::Constant, "constant"}, std::pair{NoiseKind::None, "none"}});
    help_tooltip("Keyformer's noise g added to the logits before scoring, fresh per step, layer, head and slot: "
                 "gumbel (the paper), and the ablations of its Table 4: gaussian (mu 0.5772, sigma 1.2825), "
                 "constant 0.5772, none.");
    ImGui::SetNextItemWidth(field_w);
    changed |= enum_combo("variant", p.keyformer_variant,
                          {std::pair{KeyformerVariant::Paper, "paper"}, std::pair{KeyformerVariant::Code, "code"}});
    help_tooltip("Keyformer: paper = the paper's rules (default). code = the authors' released attention.py: "
                 "a slot is held for the next token, so k - 1 tokens stay; the key tokens are chosen once and "
                 "a token leaving the recent window is dropped instead of competing; a window of 0 never "
                 "evicts; percentages are truncated, not rounded.");
  }
  if (p.kind == PolicyKind::A2SF) {
    ImGui::SetNextItemWidth(field_w);
    changed |= ImGui::SliderFloat("\xce\xb1 forgetting", &p.alpha, 0.0f, 1.0f, "%.2f", ImGuiSliderFlags_AlwaysClamp);
    help_tooltip("A2SF (Jo & Shin 2024): the forgetting factor of S_t = alpha S_t-1 + A_t. alpha = 1 is H2O's "
                 "accumulation, alpha = 0 is TOVA's current row only; the paper's best range is 0.1-0.3 (default 0.2).");
    ImGui::SetNextItemWidth(field_w);
    changed |= enum_combo("code revision", p.a2sf_revision,
                          {std::pair{A2sfRevision::Earlier, "earlier"}, std::pair{A2sfRevision::Latest, "latest"}});
    help_tooltip("Which revision of the A2SF authors' code to follow. earlier = evict at every step, as the paper "
                 "describes (default). latest = compress once after the prompt, keeping the 16 newest tokens "
                 "(the default window), then evict nothing while generating, so the cache grows.");
  }

  if (expert && evicts) {
    ImGui::SetNextItemWidth(field_w);
    int g = p.granularity ? static_cast<int>(*p.granularity) + 1 : 0;
    const char* grans[] = {"policy default", "kv_head", "layer", "model"};
    if (ImGui::Combo("granularity", &g, grans, 4)) {
      changed = true;
      if (g == 0) p.granularity.reset();
      else p.granularity = static_cast<Granularity>(g - 1);
    }
    help_tooltip("Who decides together. kv_head: each KV head alone (H2O's per-head default); layer: all heads of "
                 "a layer share one decision (TOVA's default, better in its Table 3); model: one decision for "
                 "the whole model (Keyformer's \"Shared\" ablation).");
    ImGui::SetNextItemWidth(field_w);
    changed |= enum_combo("prefill", p.prefill,
                          {std::pair{PrefillMode::OneShot, "one_shot"}, std::pair{PrefillMode::Streaming, "streaming"}});
    help_tooltip("one_shot: the whole prompt with full attention, statistics from its attention matrix, then one "
                 "eviction down to k (H2O, Keyformer, A2SF code). streaming: the prompt token by token with the "
                 "policy at every token (TOVA's language-modelling setup, StreamingLLM).");
    ImGui::SetNextItemWidth(field_w);
    changed |= enum_combo("positions", p.positions,
                          {std::pair{PositionMode::Original, "original"}, std::pair{PositionMode::Compacted, "compacted"}});
    help_tooltip("original: keys keep their true positions (RoPE applied once, ALiBi from true distances). "
                 "compacted: keys re-rotated to their slot order (StreamingLLM's pos-shift, Keyformer's \"New Pos\" ablation).");
    ImGui::SetNextItemWidth(field_w);
    changed |= enum_combo("reduce", p.reduce,
                          {std::pair{ReaderReduce::Mean, "mean"}, std::pair{ReaderReduce::Max, "max"}});
    help_tooltip("How the statistic of a KV head is made from the query heads (and MLKV layers) that read it: "
                 "their mean (default) or their max.");
  }
  ImGui::PopID();
  return changed;
}

std::string policy_problem(const AppState& s, const PolicyParams& p) {
  if (!s.a) return "";
  try {
    resolve_policy(p, s.a->prompt_length, s.a->positions);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

}  // namespace kvscope::gui
