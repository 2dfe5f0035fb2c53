#include "reports/figure_export.h"
#include "common/nan.h"

#include <cmath>
#include <cstdio>
#include <limits>

#include "common/error.h"
#include "common/mask_codes.h"
#include "figures/heatmap.h"
#include "figures/heatmap_grid.h"
#include "figures/score_curves.h"
#include "reports/provenance.h"
#include "session/session.h"

namespace kvscope {
namespace {

int rows_of(const Session& s, int up_to_row) {
  const int recorded = s.recorder().rows_recorded();
  return up_to_row < 0 ? recorded : std::min(recorded, up_to_row + 1);
}

std::string model_name(const Session& s) { return model_display_name(s.config().model); }

// The output settings with what made the figure, unless the caller (the
// exporter, which computed it once for the whole set) filled it in.
FigureOutput output_for(const Session& s, const FigureExportOptions& o) {
  FigureOutput out = o.output;
  if (out.metadata.empty()) out.metadata = figure_metadata(session_provenance(s));
  return out;
}

// The policy in use now: "h2o k=49 (30% of prompt)".
std::string current_policy_label(const Session& s) {
  const ResolvedPolicy& r = s.policy().resolved();
  const PolicyKind kind = s.policy().kind();
  if (kind == PolicyKind::Full) return "full cache";
  std::string out = policy_name(kind);
  out += kind == PolicyKind::Ideal ? " top k=" : " k=";
  out += std::to_string(r.k);
  const Amount& b = r.params.budget;
  if (b.percent || b.ratio) {
    char buf[64];
    if (b.ratio) std::snprintf(buf, sizeof(buf), " (compression ratio %g)", b.value);
    else std::snprintf(buf, sizeof(buf), " (%g%% of prompt)", b.value);
    out += buf;
  }
  return out;
}

std::string policy_label(const Session& s) {
  std::string out = current_policy_label(s);
  if (!s.config().policy_changes.empty()) out += ", changed during the run";
  return out;
}

// B of a fork: its policy and the step it took over ("tova k=49 from step 4").
std::string fork_policy_label(const Session& b) {
  std::string out = current_policy_label(b);
  const auto& changes = b.config().policy_changes;
  if (!changes.empty()) out += " from step " + std::to_string(changes.back().from_step);
  return out;
}

ColorScale scale_for(const FigureExportOptions& o, const ValueExtent& own, const ValueExtent* shared) {
  return resolve_color_scale(o.scale, o.range, own, shared ? *shared : own);
}

HeatmapFigureOptions heatmap_options(const FigureExportOptions& o, const std::string& title, const ColorScale& scale) {
  HeatmapFigureOptions h;
  h.title = title;
  h.colormap = o.colormap;
  h.scale = scale;
  h.evicted = o.evicted;
  return h;
}

std::string steps_text(int rows) {
  return rows == 1 ? "step 0" : "steps 0\u2013" + std::to_string(rows - 1);
}

}  // namespace

FigureExportOptions FigureExportOptions::from(const ExportConfig& e) {
  if (const std::string bad = check_figure_settings(e); !bad.empty()) throw Error("export", "", bad);
  FigureExportOptions o;
  o.output.formats = parse_figure_formats(e.formats);
  o.output.dpi = e.dpi;
  o.colormap = e.colormap;
  o.scale = parse_scale(e.scale);
  o.range = RangeSpec::parse(e.range, "export.range");
  o.evicted = parse_evicted_style(e.evicted);
  o.output.size = FigureSizeSpec::parse(e.figure_size, "export.figure_size");
  o.positions = PositionRange::parse(e.positions, "export.positions");
  return o;
}

namespace {

// One head's heatmap: the masks of its KV segment, the attention `value(r, p)`
// where the position was seen, the token labels.
template <class Value>
HeatmapData head_heatmap(const Session& s, int layer, int head, int rows, const std::vector<std::string>& cols,
                         const Value& value) {
  const Recorder& rec = s.recorder();
  const int P = static_cast<int>(cols.size()), prompt = s.prompt_length();
  HeatmapData d;
  d.rows = rows;
  d.cols = P;
  d.values.assign(std::size_t(rows) * P, kNaNf);
  d.mask.assign(d.values.size(), kNotSeen);
  const int seg = rec.layout().segment_of(layer, head);
  for (int r = 0; r < rows; ++r)
    for (int p = 0; p < P; ++p) {
      const uint8_t m = rec.mask(r, seg, p);
      d.mask[std::size_t(r) * P + p] = m;
      if (m != kNotSeen) d.values[std::size_t(r) * P + p] = value(r, p);
    }
  d.row_labels.resize(rows);
  for (int r = 0; r < rows; ++r) d.row_labels[r] = cols[prompt - 1 + r];
  d.col_labels = cols;
  d.first_generated_col = prompt;
  d.first_generated_row = rows > 1 ? 1 : -1;
  return d;
}

std::vector<std::string> column_labels(const Session& s) {
  std::vector<std::string> cols(s.tokens().size());
  for (std::size_t p = 0; p < cols.size(); ++p) cols[p] = s.text_of(static_cast<int>(p));
  return cols;
}

}  // namespace

std::vector<HeatmapData> layer_heatmap_data(const Session& s, int layer, int up_to_row) {
  const int rows = rows_of(s, up_to_row), Pfull = s.recorder().positions(), H = s.model_config().n_heads;
  const std::vector<float> attn = s.layer_attention(layer);  // [recorded rows][H][Pfull]
  const std::vector<std::string> cols = column_labels(s);
  std::vector<HeatmapData> out;
  out.reserve(H);
  for (int h = 0; h < H; ++h)
    out.push_back(head_heatmap(s, layer, h, rows, cols,
                               [&](int r, int p) { return attn[(std::size_t(r) * H + h) * Pfull + p]; }));
  return out;
}

HeatmapData attention_heatmap_data(const Session& s, int layer, int head, int up_to_row) {
  const int H = s.model_config().n_heads;
  if (head < 0 || head >= H)
    throw Error("head", "", "unknown head " + std::to_string(head) + " (the model has heads 0.." + std::to_string(H - 1) + ")");
  const Recorder& rec = s.recorder();
  // A recorded head is read where it is (recording.heads may leave its
  // layer's other heads out; the layer is replayed only for those).
  if (rec.records_head(layer, head))
    return head_heatmap(s, layer, head, rows_of(s, up_to_row), column_labels(s),
                        [&](int r, int p) { return rec.attention(r, layer, head, p); });
  return std::move(layer_heatmap_data(s, layer, up_to_row)[head]);
}

std::string figure_title(const Session& s, int layer, int head, int rows) {
  const std::string dot = " \u00b7 ";
  return model_name(s) + dot + policy_label(s) + dot + "layer " + std::to_string(layer) + dot +
         (head < 0 ? std::string("all heads") : "head " + std::to_string(head)) + dot + steps_text(rows);
}

std::string statistic_name(PolicyKind kind) {
  const char* name = policy_spec(kind).statistic;
  return name ? name : "statistic";
}

std::vector<std::filesystem::path> export_attention_heatmap(const Session& s, const HeatmapData& d, int layer, int head,
                                                            const std::filesystem::path& stem,
                                                            const FigureExportOptions& o, const ValueExtent* shared) {
  const HeatmapData c = crop_columns(d, o.positions);
  ValueExtent own;
  own.add(c.values);
  return write_heatmap(stem, c, heatmap_options(o, figure_title(s, layer, head, c.rows), scale_for(o, own, shared)),
                       output_for(s, o));
}

std::vector<std::filesystem::path> export_attention_grid(const Session& s, const std::vector<HeatmapData>& heads,
                                                         int layer, const std::filesystem::path& stem,
                                                         const FigureExportOptions& o, const ValueExtent* shared) {
  if (heads.empty()) throw Error(stem.string(), "", "no heads to draw");
  std::vector<HeatmapData> cropped;
  for (const auto& d : heads) cropped.push_back(crop_columns(d, o.positions));
  ValueExtent own;  // the panels always share one range among themselves
  for (const auto& d : cropped) own.add(d.values);
  std::vector<std::string> titles;
  const KvLayout& lay = s.recorder().layout();
  for (int h = 0; h < static_cast<int>(heads.size()); ++h)
    titles.push_back("head " + std::to_string(h) + " \u00b7 KV " + std::to_string(lay.kv_head_of(h)));
  HeatmapFigureOptions ho = heatmap_options(o, figure_title(s, layer, -1, heads[0].rows), scale_for(o, own, shared));
  return write_heatmap_grid(stem, cropped, titles, ho, output_for(s, o));
}

std::vector<std::filesystem::path> export_score_curves(const Session& s, int layer, int head,
                                                       const std::filesystem::path& stem, const FigureExportOptions& o) {
  const Recorder& rec = s.recorder();
  const int rows = rows_of(s, o.up_to_row), P = static_cast<int>(s.tokens().size());
  const int seg = rec.layout().segment_of(layer, head);
  ScoreCurveData d;
  d.rows = rows;
  d.cols = P;
  bool any = false;
  for (int r = 0; r < rows; ++r)
    for (int p = 0; p < P; ++p) {
      const float v = rec.score(r, seg, p);
      any = any || std::isfinite(v);
      d.scores.push_back(v);
      d.mask.push_back(rec.mask(r, seg, p));
    }
  if (!any) return {};
  for (int p = 0; p < P; ++p) d.col_labels.push_back(s.text_of(p));
  const std::string title = model_name(s) + " \u00b7 " + policy_label(s) + " \u00b7 layer " + std::to_string(layer) +
                            " \u00b7 KV head " + std::to_string(rec.layout().kv_head_of(head)) + " \u00b7 " +
                            steps_text(rows);
  return write_score_curves(stem, d, title, statistic_name(s.policy().kind()), output_for(s, o));
}

HeatmapData fork_difference_data(const Session& a, const Session& b, int layer, int head, int up_to_row) {
  return fork_difference_data(attention_heatmap_data(a, layer, head, up_to_row), b, layer, head, up_to_row);
}

HeatmapData fork_difference_data(const HeatmapData& da, const Session& b, int layer, int head, int up_to_row) {
  const HeatmapData db = attention_heatmap_data(b, layer, head, up_to_row);
  // The runs agree up to the fork; after it each generated its own tokens
  // (a column names both where they differ) and may have run longer.
  const int rows = std::min(da.rows, db.rows), cols = std::min(da.cols, db.cols);
  HeatmapData d;
  d.rows = rows;
  d.cols = cols;
  d.values.assign(std::size_t(rows) * cols, kNaNf);
  d.mask.assign(d.values.size(), kNotSeen);
  for (int r = 0; r < rows; ++r)
    for (int p = 0; p < cols; ++p) {
      const std::size_t ia = std::size_t(r) * da.cols + p, ib = std::size_t(r) * db.cols + p,
                        i = std::size_t(r) * cols + p;
      d.mask[i] = fork_code(da.mask[ia], db.mask[ib]);
      if (d.mask[i] != kNotSeen) d.values[i] = da.values[ia] - db.values[ib];
    }
  auto both = [](const std::string& x, const std::string& y) { return x == y ? x : x + " | " + y; };
  d.row_labels.resize(rows);
  for (int r = 0; r < rows; ++r) d.row_labels[r] = both(da.row_labels[r], db.row_labels[r]);
  d.col_labels.resize(cols);
  for (int p = 0; p < cols; ++p) d.col_labels[p] = both(da.col_labels[p], db.col_labels[p]);
  d.first_generated_col = da.first_generated_col;
  d.first_generated_row = rows > 1 ? 1 : -1;
  return d;
}

std::vector<std::filesystem::path> export_fork_difference(const Session& a, const HeatmapData& a_data, const Session& b,
                                                          int layer, int head, const std::filesystem::path& stem,
                                                          const FigureExportOptions& o) {
  const HeatmapData d = crop_columns(fork_difference_data(a_data, b, layer, head, o.up_to_row), o.positions);
  ValueExtent own;
  own.add(d.values);
  HeatmapFigureOptions h;
  const std::string dot = " \u00b7 ";
  h.title = model_name(a) + dot + "A: " + policy_label(a) + " \u2212 B: " + fork_policy_label(b) + dot + "layer " +
            std::to_string(layer) + dot + "head " + std::to_string(head) + dot + steps_text(d.rows);
  h.value_name = "attention A \u2212 B";
  h.colormap = "coolwarm";  // white is "equal", as in the window's fork view
  // Its own range always: a difference shares no scale with attention, and
  // a fixed range of the export is one for attention weights.
  h.scale = diverging_color_scale(extent_magnitude(own));
  h.evicted = o.evicted == EvictedStyle::none ? EvictedStyle::none : EvictedStyle::strip;  // the comparison's codes
  return write_heatmap(stem, d, h, output_for(a, o));
}

std::vector<std::filesystem::path> export_view(const Session& s, int layer, int head, const std::filesystem::path& dir,
                                               const FigureExportOptions& options) {
  FigureExportOptions o = options;
  o.output = output_for(s, options);  // once for the three figures
  std::string l = "L";
  l += std::to_string(layer);
  const std::vector<HeatmapData> heads = layer_heatmap_data(s, layer, o.up_to_row);
  if (head < 0 || head >= static_cast<int>(heads.size()))
    throw Error("head", "", "unknown head " + std::to_string(head) + " (the model has heads 0.." +
                                std::to_string(heads.size() - 1) + ")");
  ValueExtent all;
  for (const auto& d : heads) all.add(d.values);
  std::vector<std::filesystem::path> out =
      export_attention_heatmap(s, heads[head], layer, head, dir / ("attention_" + l + "_H" + std::to_string(head)), o, &all);
  for (auto& f : export_attention_grid(s, heads, layer, dir / ("attention_" + l + "_grid"), o, &all)) out.push_back(f);
  for (auto& f : export_score_curves(s, layer, head, dir / ("score_curves_" + l + "_H" + std::to_string(head)), o))
    out.push_back(f);
  return out;
}

}  // namespace kvscope
