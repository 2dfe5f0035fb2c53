// Memory and quality over the steps, for A and (when forked) B: KV bytes
// now / full / native, then KL, top-1 agreement, NLL and attention recall
// as small plots (ImGui::PlotLines), each with its latest value; under a
// sharing conversion also KL and top-1 against the native model.
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include <imgui.h>

#include "panels.h"
#include "session/metric_sums.h"

namespace kvscope::gui {

namespace {

// The finite values of one metric over the rows shown (NaN rows skipped:
// e.g. NLL is only known where the next token is).
std::vector<float> series(const PublishedRun& r, int up_to_row, const std::function<double(const StepMetrics&)>& f) {
  std::vector<float> v;
  for (size_t i = 0; i < r.metrics.size() && static_cast<int>(i) <= up_to_row; ++i) {
    const double x = f(r.metrics[i]);
    if (std::isfinite(x)) v.push_back(static_cast<float>(x));
  }
  return v;
}

// The overlay shows the latest value and, where the run has one, its mean
// over the decode steps shown (the engine's means: step 0 left out, as in
// the CLI's summaries and the sweeps).
void plot(const char* label, const char* help, const std::vector<float>& v, float lo, float hi, float width,
          std::optional<double> mean = std::nullopt) {
  // The longest form that fits the plot's width (a small window's plots are
  // narrow): "KL 0.003 (mean 1.497)", "KL 0.003 (μ 1.497)", "KL 0.003".
  char overlay[80] = "-";
  const float room = width - 2 * ImGui::GetStyle().FramePadding.x;
  if (!v.empty() && mean) {
    std::snprintf(overlay, sizeof overlay, "%s %.3f (mean %.3f)", label, v.back(), *mean);
    if (ImGui::CalcTextSize(overlay).x > room)
      std::snprintf(overlay, sizeof overlay, "%s %.3f (\u03bc %.3f)", label, v.back(), *mean);
  }
  if (!v.empty() && (!mean || ImGui::CalcTextSize(overlay).x > room))
    std::snprintf(overlay, sizeof overlay, "%s %.3f", label, v.back());
  const float h = ImGui::GetTextLineHeight() * 2.2f;
  ImGui::PlotLines((std::string("##") + label).c_str(), v.empty() ? nullptr : v.data(), static_cast<int>(v.size()), 0,
                   overlay, lo, hi, {width, h});
  help_tooltip(help);
}

void draw_run_metrics(const char* name, const PublishedRun& r, int row) {
  ImGui::PushID(name);
  if (row >= 0 && row < static_cast<int>(r.metrics.size())) {
    const StepMetrics& m = r.metrics[row];
    ImGui::TextWrapped("%s  KV %s / full %s / native %s", name, format_bytes(static_cast<double>(m.kv_bytes)).c_str(),
                format_bytes(static_cast<double>(m.kv_bytes_full)).c_str(),
                format_bytes(static_cast<double>(m.kv_bytes_native)).c_str());
  } else {
    ImGui::Text("%s  KV %s / full %s", name, format_bytes(static_cast<double>(r.kv_bytes)).c_str(),
                format_bytes(static_cast<double>(r.kv_bytes_full)).c_str());
  }
  help_tooltip("Bytes of the policy's KV cache at this step, of a full cache of the same tokens in the layout in "
               "use, and in the checkpoint's native layout (sharing and eviction together).");
  const float autoscale = FLT_MAX;  // ImGui: FLT_MAX = scale to the data
  const std::size_t shown = std::min<std::size_t>(r.metrics.size(), static_cast<std::size_t>(std::max(row + 1, 0)));
  const std::map<std::string, double> means = metric_means(sum_metrics({r.metrics.data(), shown}));
  auto mean = [&](const char* name) -> std::optional<double> {
    const auto it = means.find(name);
    return it == means.end() ? std::nullopt : std::optional<double>(it->second);
  };
  // Two plots a line, each half the panel wide.
  const float w = 0.5f * (ImGui::GetContentRegionAvail().x - ImGui::GetStyle().ItemSpacing.x);
  plot("KL",
       "KL(p_full || p_policy) of the next-token distributions, in nats: 0 = the policy predicts exactly what the full "
       "cache does.",
       series(r, row, [](const StepMetrics& m) { return m.kl; }), 0, autoscale, w, mean("kl"));
  ImGui::SameLine();
  plot("top-1", "Top-1 agreement: 1 when the policy's most likely next token equals the full cache's.",
       series(r, row, [](const StepMetrics& m) { return m.top1_agree < 0 ? std::nan("") : double(m.top1_agree); }), 0,
       1, w, mean("top1_agreement"));
  plot("NLL",
       "Negative log-likelihood of the token that actually followed, under the policy (known with a "
       "teacher-forced continuation or after sampling).",
       series(r, row, [](const StepMetrics& m) { return m.nll; }), 0, autoscale, w, mean("nll"));
  ImGui::SameLine();
  plot("recall",
       "Attention recall: the share of the full cache's attention mass on the slots the policy kept "
       "(per head, averaged). 1 = nothing the full model looks at was evicted.",
       series(r, row, [](const StepMetrics& m) { return m.attention_recall; }), 0, 1, w, mean("attention_recall"));
  // Under a sharing conversion the plots above compare against the
  // converted model (eviction alone); these against the checkpoint as
  // trained (conversion and eviction together).
  if (r.config.sharing.kind != SharingLayout::Kind::Native) {
    plot("KL native", "KL(p_native || p_policy): against the checkpoint's own model with a full cache, so the cost of "
                      "the sharing conversion shows (the KL above is against the converted model's full cache).",
         series(r, row, [](const StepMetrics& m) { return m.kl_native; }), 0, autoscale, w);
    ImGui::SameLine();
    plot("top-1 native", "Top-1 agreement with the checkpoint's own model (full cache, native KV layout).",
         series(r, row, [](const StepMetrics& m) {
           return m.top1_agree_native < 0 ? std::nan("") : double(m.top1_agree_native);
         }), 0, 1, w);
  }
  ImGui::PopID();
}

}  // namespace

void draw_metrics_panel(AppState& s) {
  if (!s.a) {
    ImGui::TextDisabled("no run yet");
    return;
  }
  const int row = s.shown_row();
  draw_run_metrics("A", *s.a, row);
  if (s.b) {
    ImGui::Separator();
    draw_run_metrics("B", *s.b, std::min(row, s.b->rows - 1));
  }
}

}  // namespace kvscope::gui
