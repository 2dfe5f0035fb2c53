// The policy & sharing panel of A, with Apply, and the fork panel of B.
// Apply takes effect "from this step on" (the past stays as recorded) or
// "replay from the start" (the whole run again, to the same step); the line
// under the button says which was done, and the list of policy changes in
// effect shows where each began.
#include <imgui.h>

#include "panels.h"

namespace kvscope::gui {

namespace {

// The KV-sharing layout and the bytes it implies at the current length.
bool edit_sharing(AppState& s, SharingLayout& l) {
  bool changed = false;
  const char* kinds[] = {"native", "MHA", "GQA", "MQA", "MLKV"};
  int k = static_cast<int>(l.kind);
  ImGui::SetNextItemWidth(ImGui::GetTextLineHeight() * 9);
  if (ImGui::Combo("KV sharing", &k, kinds, 5)) {
    const auto kind = static_cast<SharingLayout::Kind>(k);
    // A kind picked starts from counts that work on the open model.
    if (s.a && s.a->session) l = l.with_kind(kind, s.a->session->bundle().config());
    else l.kind = kind;
    changed = true;
  }
  help_tooltip("How many KV heads the cache holds. native: the checkpoint's own layout. MHA: one KV head per query "
               "head. GQA:G (Ainslie et al. 2023): G KV heads per layer shared by groups of query heads. MQA "
               "(Shazeer 2019): one KV head per layer. MLKV:M (Zuhri et al. 2024): only M layers own KV, the others "
               "read the nearest owning layer below. Converted without training by averaging K/V projections, so "
               "quality drops: the metrics show how much.");
  const float w = ImGui::GetTextLineHeight() * 5;
  if (l.kind == SharingLayout::Kind::GQA || l.kind == SharingLayout::Kind::MLKV) {
    ImGui::SetNextItemWidth(w);
    if (ImGui::InputInt("KV heads G", &l.kv_heads)) {
      l.kv_heads = std::max(0, l.kv_heads);
      changed = true;
    }
    help_tooltip("G: KV heads per owning layer (must divide the query heads).");
  }
  if (l.kind == SharingLayout::Kind::MLKV) {
    ImGui::SetNextItemWidth(w);
    if (ImGui::InputInt("KV layers M", &l.kv_layers)) {
      l.kv_layers = std::max(0, l.kv_layers);
      changed = true;
    }
    help_tooltip("M: layers that own KV; owning layers are [0] + floor((i+1) L / M) as in the MLKV code.");
  }

  if (s.a && s.a->session) {
    // KV bytes per token as the engine counts them (ModelConfig::
    // kv_bytes_per_token, MLKV paper Table 1) for the layout's m owning
    // layers and g KV heads, at the element size the session's cache uses.
    const ModelConfig& native = s.a->session->bundle().config();
    try {
      const auto [m, g] = kvscope::check_sharing(native, l);
      ModelConfig shared = native;
      shared.n_kv_layers = m;
      shared.n_kv_heads = g;
      const double tokens = static_cast<double>(s.a->tokens.size());
      const double per_token = static_cast<double>(shared.kv_bytes_per_token(s.a->kv_element_bytes));
      const double native_per_token = static_cast<double>(native.kv_bytes_per_token(s.a->kv_element_bytes));
      ImGui::TextWrapped("%s: %d KV layers x %d KV heads = %s per token; a full cache of the %d tokens now: %s "
                         "(checkpoint's layout: %s)",
                         l.str().c_str(), m, g, format_bytes(per_token).c_str(), static_cast<int>(tokens),
                         format_bytes(per_token * tokens).c_str(), format_bytes(native_per_token * tokens).c_str());
    } catch (const Error& e) {
      ImGui::PushStyleColor(ImGuiCol_Text, kProblemColour);
      ImGui::TextWrapped("%s", in_window_words(e).c_str());
      ImGui::PopStyleColor();
    } catch (const std::exception& e) {
      ImGui::PushStyleColor(ImGuiCol_Text, kProblemColour);
      ImGui::TextWrapped("%s", e.what());
      ImGui::PopStyleColor();
    }
  }
  return changed;
}

void draw_problem(const std::string& problem) {
  if (problem.empty()) return;
  ImGui::PushStyleColor(ImGuiCol_Text, kProblemColour);
  ImGui::TextWrapped("%s", problem.c_str());
  ImGui::PopStyleColor();
}

}  // namespace

void draw_policy_panel(AppState& s) {
  edit_policy_params(s, "A", s.pending.policy, !s.presenter);
  s.pending.policy.seed = s.editing.seed;
  if (!s.presenter) edit_sharing(s, s.pending.sharing);
  const std::string problem = policy_problem(s, s.pending.policy);
  draw_problem(problem);

  int mode = static_cast<int>(s.pending.mode);
  ImGui::RadioButton("from this step on", &mode, static_cast<int>(ApplyMode::FromNow));
  help_tooltip("The new settings take effect at the next step; the rows already recorded stay as they were, so "
               "the heatmap shows the change as a boundary. (A sharing change always replays: the cache layout changes.)");
  ImGui::SameLine();
  ImGui::RadioButton("replay from the start", &mode, static_cast<int>(ApplyMode::Replay));
  help_tooltip("The whole run again from the prompt under the new settings, up to the same step, as if they had "
               "been in effect all along.");
  s.pending.mode = static_cast<ApplyMode>(mode);

  const bool sharing_changed = s.a && s.pending.sharing.str() != s.a->config.sharing.str();
  // Compared as the session file writes them (every parameter, nothing
  // else) with the policy the next step runs under: one applied "from this
  // step on" is in effect from row `rows`, not yet at the last recorded one.
  const bool policy_changed =
      s.a && policy_to_json(s.pending.policy) != policy_to_json(policy_at_row(s.a->config, s.a->rows));
  const bool replay = s.pending.mode == ApplyMode::Replay || sharing_changed;
  const int row = s.a ? s.a->rows - 1 : 0;
  s.shell.unapplied_edits = s.a && (sharing_changed || policy_changed);
  const std::string edits = policy_to_json(s.pending.policy).dump() + " " + s.pending.sharing.str();
  if (s.shell.unapplied_edits) {
    // Edits not yet applied, and what Apply will do with them, before it
    // does it (a replay of a long run on a real model takes a while);
    // wrapped, so a narrow panel shows all of it.
    ImGui::PushTextWrapPos(0);
    ImGui::TextColored({1.0f, 0.8f, 0.3f, 1}, "Not applied yet. Apply will %s",
                       replay
                           ? ("replay the whole run from the prompt to step " + std::to_string(row) +
                              (sharing_changed ? " (a sharing change always replays: the cache layout changes)" : ""))
                                 .c_str()
                           : ("take effect from step " + std::to_string(row + 1) + " on (steps 0-" +
                              std::to_string(row) + " stay as recorded)")
                                 .c_str());
    ImGui::PopTextWrapPos();
    record_item_rect(s, "note.unapplied");
  }
  if (ImGui::Button("Apply") && s.worker && s.a) {
    s.worker->apply(s.pending.policy, s.pending.sharing, s.pending.mode);
    s.shell.apply_feedback =
        replay ? "from the start to step " + std::to_string(row)
               : "from step " + std::to_string(row + 1) + " on (steps 0-" + std::to_string(row) + " unchanged)";
    s.shell.apply_replays = replay;
    s.shell.applied_edits = edits;
  }
  record_item_rect(s, "button.apply");
  if (!s.shell.apply_feedback.empty() && s.shell.applied_edits == edits) {
    // Says "Replaying" while the worker is still at it, "Replayed" once
    // done; wrapped under the button, so a narrow panel shows all of it.
    const char* verb =
        s.shell.apply_replays ? (s.status.busy ? "Replaying" : "Replayed") : (s.status.busy ? "Applying" : "Applied");
    ImGui::PushTextWrapPos(0);
    ImGui::TextColored({0.55f, 0.85f, 0.55f, 1}, "%s %s", verb, s.shell.apply_feedback.c_str());
    ImGui::PopTextWrapPos();
  }
  if (s.a) {
    ImGui::TextDisabled("in effect: %s", s.a->policy_label.c_str());
    for (const auto& ch : s.a->config.policy_changes)
      ImGui::BulletText("from step %d: %s %s", ch.from_step, policy_name(ch.policy.kind), ch.policy.budget.str().c_str());
  }
}

void draw_fork_panel(AppState& s) {
  ImGui::TextWrapped("B goes on from the current step (or the scrubbed one) under this policy; the views compare it with A.");
  edit_policy_params(s, "B", s.pending.fork_policy, !s.presenter);
  s.pending.fork_policy.seed = s.editing.seed;
  draw_problem(policy_problem(s, s.pending.fork_policy));
  if (ImGui::Button(s.b ? "Fork again" : "Fork")) action_fork(s);
  record_item_rect(s, "button.fork");
  help_tooltip("F: snapshot A here (caches, statistics, sampler, recorder) and continue the copy under B's policy.");
  if (s.b) {
    ImGui::SameLine();
    if (ImGui::Button("Apply to B") && s.worker)
      s.worker->apply(s.pending.fork_policy, s.a ? s.a->config.sharing : SharingLayout{}, ApplyMode::FromNow, true);
    ImGui::SameLine();
    if (ImGui::Button("Drop fork") && s.worker) s.worker->drop_fork();
    ImGui::TextDisabled("B: %s (%d rows)", s.b->policy_label.c_str(), s.b->rows);
  }
}

}  // namespace kvscope::gui
