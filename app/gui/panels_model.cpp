// The model & device panel: a model directory (typed, picked from the
// recent ones or dropped onto the window), its summary, the device; and the
// session file field.
#include <filesystem>

#include <imgui.h>
#include <imgui_stdlib.h>

#include "backend/backend.h"
#include "bundle/downloaded_models.h"
#include "panels.h"

namespace kvscope::gui {

namespace {

// Asked once: probing CUDA on every frame would be wasteful.
const std::pair<bool, std::string>& cuda_probe() {
  static const std::pair<bool, std::string> probe = [] {
    std::string why;
    const bool ok = kvscope::cuda_available(&why);
    return std::pair{ok, why};
  }();
  return probe;
}

void draw_model_summary(const AppState& s) {
  if (!s.a || !s.a->session) {
    ImGui::TextDisabled("no model loaded yet");
    return;
  }
  const ModelConfig& m = s.a->session->model_config();
  const ModelConfig& native = s.a->session->bundle().config();
  // Wrapped at the panel's edge: a narrow Controls panel cut "3 KV heads each" to "ea".
  ImGui::TextWrapped("%s: %d layers, %d heads x %d dims", m.model_type.c_str(), m.n_layers, m.n_heads, m.head_dim);
  ImGui::TextWrapped("KV: %d of %d layers own KV, %d KV heads each", m.n_kv_layers, m.n_layers, m.n_kv_heads);
  if (m.n_kv_heads != native.n_kv_heads || m.n_kv_layers != native.n_kv_layers)
    ImGui::TextDisabled("(checkpoint: %d KV layers x %d KV heads)", native.n_kv_layers, native.n_kv_heads);
  ImGui::TextWrapped("hidden %d, vocab %d, context %d", m.hidden, m.vocab_size, m.max_positions);
}

}  // namespace

void draw_model_panel(AppState& s) {
  // Room on the right for the recent-models arrow and the Open button.
  const ImGuiStyle& style = ImGui::GetStyle();
  ImGui::SetNextItemWidth(-(ImGui::GetFrameHeight() + ImGui::CalcTextSize("Open").x + 2 * style.FramePadding.x +
                            2 * style.ItemSpacing.x));
  const bool entered = ImGui::InputTextWithHint("##model", "bundled kvscope-tiny", &s.shell.model_path,
                                                ImGuiInputTextFlags_EnterReturnsTrue);
  record_item_rect(s, "field.model");
  help_tooltip("A Hugging Face model directory (config.json, *.safetensors, tokenizer.json) or a .gguf file. "
               "Empty: the bundled kvscope-tiny. You can also drop a folder or file onto the window.");
  ImGui::SameLine();
  if (ImGui::BeginCombo("##recent", nullptr, ImGuiComboFlags_NoPreview | ImGuiComboFlags_PopupAlignLeft)) {
    if (ImGui::Selectable("(bundled kvscope-tiny)")) s.shell.model_path.clear();
    // Looked up only while the list is open: a few directory reads.
    for (const DownloadedModel& d : downloaded_models()) {
      const std::string label = d.name + "  (downloaded: " + d.model.filename().string() + ")";
      if (ImGui::Selectable(label.c_str())) s.shell.model_path = d.model.string();
    }
    for (const std::string& m : s.recent_models)
      if (ImGui::Selectable(m.c_str())) s.shell.model_path = m;
    ImGui::EndCombo();
  }
  help_tooltip("The bundled model, models fetched with tools/get-model.sh, and recent models");
  ImGui::SameLine();
  if (ImGui::Button("Open") || entered) action_open_model(s, s.shell.model_path);
  record_item_rect(s, "button.open_model");
  draw_model_summary(s);

  // Device: CUDA is only offered when this build has it and a GPU is there.
  const auto& [cuda_ok, cuda_why] = cuda_probe();
  ImGui::TextUnformatted("Device");
  ImGui::SameLine();
  bool cpu = s.editing.device != "cuda";
  if (ImGui::RadioButton("CPU", cpu) && !cpu) {
    s.editing.device = "cpu";
    action_open_model(s, s.shell.model_path);
  }
  ImGui::SameLine();
  if (cuda_ok) {
    if (ImGui::RadioButton("CUDA", !cpu) && cpu) {
      s.editing.device = "cuda";
      action_open_model(s, s.shell.model_path);
    }
  } else {
    ImGui::TextDisabled("CUDA: not available");
    help_tooltip(cuda_why.c_str());
  }
  // How the CPU backend holds its matrices (backend/weight_format.h): the
  // file's own blocks, fp32, or half.
  if (s.editing.device != "cuda") {
    ImGui::TextUnformatted("Weights");
    for (WeightFormat f : weight_formats()) {
      const char* name = weight_format_name(f);
      ImGui::SameLine();
      if (ImGui::RadioButton(name, s.editing.weights == name) && s.editing.weights != name) {
        s.editing.weights = name;
        action_open_model(s, s.shell.model_path);
      }
      help_tooltip(weight_format_description(f));
    }
  }
  if (s.a) ImGui::TextDisabled("running on %s", s.a->device.c_str());
}

void draw_session_file_panel(AppState& s) {
  ImGui::SetNextItemWidth(-ImGui::CalcTextSize("Open file").x - 3 * ImGui::GetStyle().ItemSpacing.x);
  const bool entered = ImGui::InputTextWithHint("##session", "session.json", &s.shell.session_path,
                                                ImGuiInputTextFlags_EnterReturnsTrue);
  help_tooltip("A kvscope session file (as `kvscope-cli run` reads and `Save session` writes): "
               "model, prompt, policy, policy changes, fork, view and lesson blocks.");
  ImGui::SameLine();
  if ((ImGui::Button("Open file") || entered) && !s.shell.session_path.empty())
    action_open_session_file(s, s.shell.session_path);
}

}  // namespace kvscope::gui
