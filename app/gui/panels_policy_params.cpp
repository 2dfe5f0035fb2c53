// The editor of one eviction policy's parameters, used for A and for the
// fork B: one control per parameter the policy reads, all drawn from the
// engine's policy table (policy/policy_table.h), so the window offers what
// the CLI and session files take, with the same help as tooltips. The
// engine's resolve_policy is the judge of what is possible, so the panel
// shows its message (in the window's words) instead of guessing.
#include <algorithm>
#include <cmath>
#include <cstring>

#include <imgui.h>

#include "common/error.h"
#include "panels.h"
#include "text_fit.h"

namespace kvscope::gui {

namespace {

// A policy's tooltip: what it does and where it comes from.
std::string policy_tooltip(const PolicySpec& p) {
  std::string t = p.help;
  if (*p.paper) t += std::string("\n\n") + p.paper;
  return t;
}

// A parameter's tooltip: its help and the default of the policy in effect.
std::string param_tooltip(const PolicySpec& policy, const ParamSpec& param) {
  std::string t = param.help;
  const std::string d = param_default(policy, param);
  if (!d.empty()) t += "\n\nDefault for " + std::string(policy.name) + ": " + d + ".";
  return t;
}

// An Amount as a number with a unit switch that cycles "tokens" -> "% of
// ..." -> (a budget) kvpress's compression ratio -> "tokens".
bool edit_amount(const char* id, Amount& a, const ParamSpec& param) {
  ImGui::PushID(id);
  bool changed = false;
  float v = static_cast<float>(a.value);
  ImGui::SetNextItemWidth(ImGui::GetTextLineHeight() * 6);
  if (a.ratio) {
    // The ratio's own range, [0, 1): the largest float below 1 is its top.
    changed |=
        ImGui::DragFloat("##v", &v, 0.005f, 0.0f, std::nextafter(1.0f, 0.0f), "%.3f", ImGuiSliderFlags_AlwaysClamp);
  } else if (a.percent) {
    changed |= ImGui::DragFloat("##v", &v, 0.5f, 0.0f, 100.0f, "%.0f%%", ImGuiSliderFlags_AlwaysClamp);
  } else {
    changed |= ImGui::DragFloat("##v", &v, 0.5f, 0.0f, param.slider_max, "%.0f tokens", ImGuiSliderFlags_AlwaysClamp);
  }
  // A ratio is kept as the decimal it shows, so "0.25" is kvpress's 0.25
  // (whose rounding of n (1 - r) depends on the double's last bit).
  if (changed) a.value = a.ratio ? std::round(v * 1000.0) / 1000.0 : a.percent ? v : std::round(v);
  const std::string pct = std::string("% of ") + param.percent_of;
  const char* unit = a.ratio ? "compression ratio" : a.percent ? pct.c_str() : "tokens";
  same_line_if_fits(small_button_width(unit));  // under the value in a narrow panel, not cut at its edge
  if (ImGui::SmallButton(unit)) {
    // A sensible value in the new unit rather than a surprising conversion.
    if (a.ratio) a = Amount{32, false};
    else if (a.percent) a = param.takes_ratio ? Amount{0.5, false, true} : Amount{32, false};
    else a = Amount{30, true};
    changed = true;
  }
  ImGui::PopID();
  return changed;
}

// An optional parameter: a checkbox that sets it (unticked: the policy's default).
bool edit_optional(const PolicySpec& policy, const ParamSpec& param, bool& set, const std::string& tooltip) {
  const std::string box = std::string(param.label) + "##custom";
  const bool changed = ImGui::Checkbox(box.c_str(), &set);
  help_tooltip(tooltip.c_str());
  if (!set) {
    const std::string d = param_default(policy, param);
    const std::string text = "policy default" + (d.empty() ? std::string() : " (" + d + ")");
    same_line_if_fits(ImGui::CalcTextSize(text.c_str()).x);
    ImGui::TextDisabled("%s", text.c_str());
  }
  return changed;
}

// One control for one parameter of the table, whatever its kind.
bool edit_param(AppState& s, const char* id, PolicyParams& p, const PolicySpec& policy, const ParamSpec& param,
                float field_w) {
  const std::string tooltip = param_tooltip(policy, param);
  const ParamField& f = param.field;
  bool changed = false;
  ImGui::PushID(param.key);
  if (f.amount) {
    ImGui::TextUnformatted(param.label);
    ImGui::SameLine();
    changed |= edit_amount(param.key, *f.amount(p), param);
    help_tooltip(tooltip.c_str());
  } else if (f.optional_amount) {
    std::optional<Amount>& v = *f.optional_amount(p);
    bool set = v.has_value();
    if (edit_optional(policy, param, set, tooltip)) {
      changed = true;
      if (set) v = Amount{param.custom_start, false};
      else v.reset();
    }
    if (v) {
      ImGui::SameLine();
      changed |= edit_amount(param.key, *v, param);
    }
  } else if (f.optional_count) {
    std::optional<int>& v = *f.optional_count(p);
    bool set = v.has_value();
    if (edit_optional(policy, param, set, tooltip)) {
      changed = true;
      if (set) v = static_cast<int>(param.custom_start);
      else v.reset();
    }
    if (v) {
      ImGui::SameLine();
      ImGui::SetNextItemWidth(ImGui::GetTextLineHeight() * 6);
      const std::string fmt = std::string("%d ") + param.unit;
      changed |= ImGui::DragInt("##count", &*v, 0.2f, static_cast<int>(param.min), static_cast<int>(param.slider_max),
                                fmt.c_str(), ImGuiSliderFlags_AlwaysClamp);
    }
  } else if (f.real) {
    ImGui::SetNextItemWidth(field_w);
    const ImGuiSliderFlags flags = param.log_scale ? ImGuiSliderFlags_Logarithmic : ImGuiSliderFlags_AlwaysClamp;
    changed |= ImGui::SliderFloat(param.label, f.real(p), param.slider_min, param.slider_max, "%.2f", flags);
    help_tooltip(tooltip.c_str());
  } else if (param.kind == ParamKind::Real || param.kind == ParamKind::Count) {
    // A parameter without a field of its own (PolicyParams::extra).
    float v = static_cast<float>(param_number(p, param));
    ImGui::SetNextItemWidth(field_w);
    const ImGuiSliderFlags flags = param.log_scale ? ImGuiSliderFlags_Logarithmic : ImGuiSliderFlags_AlwaysClamp;
    if (ImGui::SliderFloat(param.label, &v, param.slider_min, param.slider_max,
                           param.kind == ParamKind::Count ? "%.0f" : "%.2f", flags)) {
      p.extra[param.key] = param.kind == ParamKind::Count ? std::round(v) : v;
      changed = true;
    }
    help_tooltip(tooltip.c_str());
  } else if (f.choice_index) {
    // An optional choice lists "policy default" first.
    const int current = f.choice_index(p);
    const std::string d = param_default(policy, param);
    const std::string unset = "default (" + d + ")";
    const char* preview = current < 0 ? unset.c_str() : param.choices[current];
    ImGui::SetNextItemWidth(field_w);
    if (ImGui::BeginCombo(param.label, preview)) {
      if (param.optional && ImGui::Selectable(unset.c_str(), current < 0)) {
        changed |= current >= 0;
        f.set_choice(p, -1);
      }
      for (int i = 0; i < static_cast<int>(param.choices.size()); ++i)
        if (ImGui::Selectable(param.choices[i], i == current)) {
          changed |= i != current;
          f.set_choice(p, i);
        }
      ImGui::EndCombo();
    }
    help_tooltip(tooltip.c_str());
  }
  ImGui::PopID();
  // Where the control is, for tests that compare the window with the CLI.
  record_item_rect(s, std::string("param.") + id + "." + param.key);
  return changed;
}

}  // namespace

bool edit_policy_params(AppState& s, const char* id, PolicyParams& p, bool expert) {
  ImGui::PushID(id);
  bool changed = false;
  const float field_w = ImGui::GetTextLineHeight() * 9;

  ImGui::SetNextItemWidth(field_w);
  if (ImGui::BeginCombo("policy", policy_spec(p.kind).label)) {
    for (const PolicySpec& info : policy_specs()) {
      if (ImGui::Selectable(info.label, info.kind == p.kind)) {
        changed |= info.kind != p.kind;
        p.kind = info.kind;
      }
      help_tooltip(policy_tooltip(info).c_str());
    }
    ImGui::EndCombo();
  }
  const PolicySpec& policy = policy_spec(p.kind);
  help_tooltip(policy_tooltip(policy).c_str());

  // The parameters this policy reads, in the table's order; the expert
  // ones (granularity, prefill, ...) only in the expert view; the
  // schedules and wrappers (AdaKV, ChunkKV, CriticalKV, DecodingPress) in
  // a header of their own, closed at first unless one is set, whose label
  // names those that are.
  for (const ParamSpec& param : param_specs())
    if (policy.uses(param.key) && !param.expert && !param.wrapper)
      changed |= edit_param(s, id, p, policy, param, field_w);
  if (expert) {
    for (const ParamSpec& param : param_specs())
      if (policy.uses(param.key) && param.expert && !param.wrapper)
        changed |= edit_param(s, id, p, policy, param, field_w);
    std::string active;
    for (const ParamSpec& param : param_specs())
      if (policy.uses(param.key) && param.wrapper && param.kind != ParamKind::Real) {
        const std::string v = param_text(p, param);
        if (!v.empty() && v != param_default(policy, param))
          active += (active.empty() ? "" : ", ") + std::string(param.label) + " " + v;
      }
    const std::string header = "wrappers and schedule" + (active.empty() ? std::string() : " (" + active + ")");
    if (std::any_of(param_specs().begin(), param_specs().end(),
                    [&](const ParamSpec& q) { return policy.uses(q.key) && q.wrapper; })) {
      // Open at first when a wrapper is set (a session file that uses one shows it).
      if (!active.empty()) ImGui::SetNextItemOpen(true, ImGuiCond_Once);
      const bool open = ImGui::TreeNode((header + "###wrappers").c_str());
      record_item_rect(s, std::string("wrappers.") + id);
      // The label may be cut by the panel's width: the tooltip says it whole.
      help_tooltip(("kvpress's wrappers over this policy's ranking: AdaKV's head budgets, ChunkKV's whole chunks, "
                    "CriticalKV's value norms, and DecodingPress's schedule (compress every N steps). Set now: " +
                    (active.empty() ? std::string("none") : active) + ".")
                       .c_str());
      if (open) {
        for (const ParamSpec& param : param_specs())
          if (policy.uses(param.key) && param.wrapper) changed |= edit_param(s, id, p, policy, param, field_w);
        ImGui::TreePop();
      }
    }
  }
  ImGui::PopID();
  return changed;
}

std::string policy_problem(const AppState& s, const PolicyParams& p) {
  if (!s.a) return "";
  try {
    resolve_policy(p, s.a->prompt_length, s.a->positions);
  } catch (const Error& e) {
    return in_window_words(e);
  }
  return "";
}

}  // namespace kvscope::gui
