// The prompt panel: the prompt, an optional teacher-forced continuation
// (the run then feeds that text instead of sampling, so NLL is measured on
// it), the number of new tokens with the memory the run will need, and the
// sampling settings.
#include <imgui.h>
#include <imgui_stdlib.h>

#include "panels.h"
#include "session/memory_forecast.h"
#include "session/session_file.h"

namespace kvscope::gui {
namespace {

// What a run of the edited settings will hold (the recorder and the KV
// caches), planned as the Session will plan it, with the open run's model;
// red with the reason when it will not fit. Recomputed only when a setting
// changes (it tokenizes the prompt).
void draw_memory_forecast(AppState& s) {
  if (!s.a || !s.a->session) return;
  const Session& run = *s.a->session;
  const SessionConfig cfg = config_from_panels(s);
  ShellState::MemoryNote& note = s.shell.memory_note;
  const std::string key = cfg.to_json().dump() + "\n" + run.config().model;
  if (note.key != key) {
    note.key = key;
    note.fits = true;
    try {
      if (absolute_model_path(cfg.model) != absolute_model_path(run.config().model)) {
        // Another model in the field: its plan needs its shape, known once it is open.
        note.line = "memory: open the model to plan a run";
        note.detail = "The memory a run needs is planned with the model's shape, known once the model is open.";
      } else {
        const MemoryForecast f = forecast_session_memory(run.bundle(), cfg);
        note.line = "memory: " + format_bytes(double(f.total())) + " of " + format_bytes(f.available) + " available";
        note.detail = f.summary() + ". Layers the recorder does not keep are replayed when a view needs them.";
      }
    } catch (const Error& e) {
      note.fits = false;
      note.line = "will not run: " + in_window_words(e);
      note.detail = note.line;
    }
  }
  if (note.fits) {
    ImGui::TextDisabled("%s", note.line.c_str());
  } else {
    ImGui::PushStyleColor(ImGuiCol_Text, kProblemColour);
    ImGui::TextWrapped("%s", note.line.c_str());
    ImGui::PopStyleColor();
  }
  record_item_rect(s, "text.memory");
  help_tooltip(note.detail.c_str());
}

}  // namespace

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
  record_item_rect(s, "field.max_new_tokens");
  help_tooltip("How many tokens the run generates (or teacher-forces) after the prompt.");
  draw_memory_forecast(s);

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
