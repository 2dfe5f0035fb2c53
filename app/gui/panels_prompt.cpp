// The prompt panel: the prompt, an optional teacher-forced continuation
// (the run then feeds that text instead of sampling, so NLL is measured on
// it), the number of new tokens and the sampling settings.
#include <imgui.h>
#include <imgui_stdlib.h>

#include "panels.h"

namespace kvscope::gui {

void draw_prompt_panel(AppState& s) {
  SessionConfig& c = s.editing;
  const float line = ImGui::GetTextLineHeight();
  ImGui::InputTextMultiline("##prompt", &c.prompt, {-1, line * (s.presenter ? 4.0f : 6.0f)});
  help_tooltip("The prompt. Run it with \"Open with this prompt\" (the policy of the panel below applies).");

  bool forced = c.continuation.has_value();
  if (ImGui::Checkbox("Teacher-forced continuation", &forced)) {
    if (forced) c.continuation = std::string();
    else c.continuation.reset();
  }
  help_tooltip("Feed this text after the prompt instead of sampling: every step then has a known next "
               "token, so the metrics panel shows its NLL under the policy and under the full cache.");
  if (c.continuation) ImGui::InputTextMultiline("##continuation", &*c.continuation, {-1, line * 3});

  ImGui::SetNextItemWidth(line * 7);
  if (ImGui::InputInt("max new tokens", &c.max_new_tokens, 1, 16)) c.max_new_tokens = std::clamp(c.max_new_tokens, 1, 8192);
  help_tooltip("How many tokens the run generates (or teacher-forces) after the prompt.");

  if (!s.presenter && ImGui::TreeNode("Sampling")) {
    SamplingParams& p = c.sampling;
    ImGui::SetNextItemWidth(line * 8);
    ImGui::SliderFloat("temperature", &p.temperature, 0.0f, 2.0f, "%.2f");
    help_tooltip("0 = greedy (the most likely token, lowest id on ties). Higher values flatten the distribution.");
    ImGui::SetNextItemWidth(line * 8);
    if (ImGui::InputInt("top-k", &p.top_k)) p.top_k = std::max(0, p.top_k);
    help_tooltip("Keep only the k most likely tokens before sampling (0 = off).");
    ImGui::SetNextItemWidth(line * 8);
    ImGui::SliderFloat("top-p", &p.top_p, 0.01f, 1.0f, "%.2f");
    help_tooltip("Nucleus sampling: keep the smallest set of tokens whose probability reaches p (1 = off).");
    ImGui::SetNextItemWidth(line * 8);
    ImGui::InputScalar("seed", ImGuiDataType_U64, &c.seed);
    help_tooltip("Keys every random draw of the run: sampling, Keyformer's noise, the random policy. "
                 "The same seed reproduces the run bit for bit.");
    p.seed = c.seed;
    ImGui::TreePop();
  }
  if (ImGui::Button("Open with this prompt")) action_open_model(s, s.shell.model_path);
  record_item_rect(s, "button.open_prompt");
  help_tooltip("Start a new run A of this prompt with the model above and the policy below (drops any fork).");
}

}  // namespace kvscope::gui
