#include "views/cell_tooltip.h"

#include <cmath>

#include "reports/figure_export.h"
#include "views/cell_codes.h"
#include "views/cell_rows.h"
#include "views/palette.h"
#include "views/token_text.h"

namespace kvscope::gui {
namespace {

void value_line(const char* label, const RunAttention* att, int row, int head, int pos) {
  const float* r = att ? att->row(row, head) : nullptr;
  if (r) ImGui::Text("%s: %.5g", label, r[pos]);
  else ImGui::Text("%s: not recorded (replay the layer)", label);
}

void mask_line(const char* label, const PublishedRun& run, int layer, int head, int row, int pos) {
  const uint8_t code = run.session->recorder().mask(row, segment_of(run, layer, head), pos);
  ImGui::ColorButton("##state", ImVec4(code_color(code).r / 255.f, code_color(code).g / 255.f, code_color(code).b / 255.f, 1),
                     ImGuiColorEditFlags_NoTooltip, ImVec2(ImGui::GetFontSize(), ImGui::GetFontSize()));
  ImGui::SameLine();
  ImGui::Text("%s%s", label, code_label(code).c_str());
}

bool keeps_statistic(PolicyKind k) { return policy_spec(k).statistic != nullptr; }

}  // namespace

void show_cell_tooltip(const TooltipInputs& in, int row, int pos) {
  const PublishedRun& a = *in.a;
  if (row < 0 || row >= a.rows || pos < 0 || pos >= a.positions) return;
  const Recorder& rec = a.session->recorder();
  const int seg = segment_of(a, in.layer, in.head);
  ImGui::BeginTooltip();
  const int query = a.prompt_length - 1 + row;
  ImGui::Text("step %d%s   query '%s' (pos %d)", row, row == 0 ? " (prompt)" : "", display_token(a.token_text, query).c_str(),
              query);
  ImGui::Text("position %d   '%s'%s", pos, display_token(a.token_text, pos).c_str(),
              pos >= a.prompt_length ? "   (generated)" : "");
  ImGui::Separator();
  const bool b_side = in.b && in.b->session && row < in.b->rows;
  value_line(b_side ? "attention A" : "attention", in.attention_a, row, in.head, pos);
  if (b_side) value_line("attention B", in.attention_b, row, in.head, pos);
  if (in.full && row < in.full->rows && pos < in.full->positions && in.head < in.full->heads) {
    const float f = in.full->attention[(std::size_t(row) * in.full->heads + in.head) * in.full->positions + pos];
    ImGui::Text("attention, full cache: %.5g", f);
  }
  const float stat = rec.score(row, seg, pos);
  const std::string stat_name = kvscope::statistic_name(a.config.policy.kind);
  if (std::isfinite(stat)) ImGui::Text("%s: %.5g", stat_name.c_str(), stat);
  else if (keeps_statistic(a.config.policy.kind)) ImGui::TextDisabled("%s: none (not in the cache)", stat_name.c_str());
  else ImGui::TextDisabled("no statistic (this policy keeps none)");
  mask_line(b_side ? "A: " : "", a, in.layer, in.head, row, pos);
  if (b_side) mask_line("B: ", *in.b, in.layer, in.head, row, pos);
  ImGui::TextDisabled("layer %d  head %d  KV head %d", in.layer, in.head, rec.layout().kv_head_of(in.head));
  ImGui::EndTooltip();
}

}  // namespace kvscope::gui
