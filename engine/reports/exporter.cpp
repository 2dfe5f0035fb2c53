#include "reports/exporter.h"
#include "common/nan.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <regex>

#include "common/error.h"
#include "io/atomic_file.h"
#include "io/csv_writer.h"
#include "io/json_file.h"
#include "io/interrupt.h"
#include "io/npy.h"
#include "reports/figure_export.h"
#include "reports/informative_head.h"
#include "policy/policy.h"
#include "reports/provenance.h"

namespace kvscope {
namespace {

namespace fs = std::filesystem;
constexpr const char* kExportFormat = "kvscope-export";

struct Dims {
  int rows, P, m, g, L, H;
};

// Writes every file of the export into `dir` (a fresh staging folder).
std::vector<std::string> write_export(const Session& s, const fs::path& dir, const ExtraExportFiles& extra,
                                      const ExportConfig& eo, const Session* fork) {
  const Recorder& rec = s.recorder();
  const KvLayout& lay = rec.layout();
  // Only what was run: a generation that stopped at EOS has fewer rows.
  const Dims d{rec.rows_recorded(), static_cast<int>(s.tokens().size()), lay.n_kv_layers, lay.n_kv_heads,
               lay.n_layers, lay.n_heads};
  const int S = lay.n_segments();
  std::vector<std::string> written;
  nlohmann::json manifest;  // written last, listing every file of the set
  const Provenance provenance = session_provenance(s);  // in session.json, the manifest and every figure
  auto path = [&](const std::string& name) {
    check_interrupt();  // between files: Ctrl-C leaves no half-written set
    if (written.size() == 1) test_pause_point("writing", "");
    written.push_back(name);
    return dir / name;
  };

  // masks.npy and scores.npy: [rows, kv layers, kv heads, positions].
  std::vector<uint8_t> masks(size_t(d.rows) * S * d.P);
  std::vector<float> scores(masks.size());
  for (int r = 0; r < d.rows; ++r)
    for (int sg = 0; sg < S; ++sg)
      for (int p = 0; p < d.P; ++p) {
        masks[(size_t(r) * S + sg) * d.P + p] = rec.mask(r, sg, p);
        scores[(size_t(r) * S + sg) * d.P + p] = rec.score(r, sg, p);
      }
  write_npy_u8(path("masks.npy"), masks, {d.rows, d.m, d.g, d.P});
  write_npy_f32(path("scores.npy"), scores, {d.rows, d.m, d.g, d.P});

  // attention.npy: [rows, recorded layers, recorded heads, positions].
  const auto& layers = rec.attention_layers();
  const auto& heads = rec.attention_heads();
  const std::size_t nh = heads.size();
  std::vector<float> attn(size_t(d.rows) * layers.size() * nh * d.P);
  for (int r = 0; r < d.rows; ++r)
    for (std::size_t li = 0; li < layers.size(); ++li)
      for (std::size_t hi = 0; hi < nh; ++hi)
        for (int p = 0; p < d.P; ++p)
          attn[((size_t(r) * layers.size() + li) * nh + hi) * d.P + p] = rec.attention(r, layers[li], heads[hi], p);
  write_npy_f32(path("attention.npy"), attn, {d.rows, int64_t(layers.size()), int64_t(nh), d.P});

  // CSV twins for the chosen layer / head (its KV segment for masks and scores).
  const int seg = lay.segment_of(eo.csv_layer(), eo.csv_head());
  std::string tag = "L";  // (appended: GCC 12 misreads "L" + ... inlined here as an overlap, -Wrestrict)
  tag += std::to_string(eo.csv_layer()) + "_H" + std::to_string(eo.csv_head());
  {
    CsvTable mt, st;
    mt.header = st.header = {"step", "token"};
    for (int p = 0; p < d.P; ++p) {
      std::string column = "p";  // (appended, as the tag above)
      column += std::to_string(p);
      mt.header.push_back(column);
      st.header.push_back(column);
    }
    for (int r = 0; r < d.rows; ++r) {
      const int pos = s.prompt_length() - 1 + r;
      std::vector<CsvCell> mr{int64_t(r), int64_t(s.tokens()[pos])}, sr = mr;
      for (int p = 0; p < d.P; ++p) {
        mr.emplace_back(int64_t(rec.mask(r, seg, p)));
        sr.emplace_back(double(rec.score(r, seg, p)));
      }
      mt.add_row(std::move(mr));
      st.add_row(std::move(sr));
    }
    write_csv(path("masks_" + tag + ".csv"), mt);
    write_csv(path("scores_" + tag + ".csv"), st);
  }
  {
    CsvTable et;
    et.header = {"step", "layer", "kv_head", "position", "token", "statistic", "rank"};
    for (const auto& e : rec.events())
      et.add_row({int64_t(e.step), int64_t(e.layer), int64_t(e.kv_head), int64_t(e.position), int64_t(e.token),
                  double(e.statistic), int64_t(e.rank)});
    write_csv(path("events.csv"), et);
  }
  {
    CsvTable mt;
    mt.header = {"step",     "position",   "token",      "kv_slots",         "kv_bytes",
                 "kv_bytes_full", "kv_bytes_native", "nll", "nll_full", "kl",
                 "top1_agree", "attention_recall", "ideal_similarity", "nll_native", "kl_native",
                 "top1_agree_native"};
    for (const auto& m : rec.metrics())
      mt.add_row({int64_t(m.step), int64_t(m.position), int64_t(m.token), m.kv_slots, m.kv_bytes, m.kv_bytes_full,
                  m.kv_bytes_native, m.nll, m.nll_full, m.kl, int64_t(m.top1_agree), m.attention_recall, m.ideal_similarity,
                  m.nll_native, m.kl_native, int64_t(m.top1_agree_native)});
    write_csv(path("metrics.csv"), mt);
  }
  {
    nlohmann::json t = {{"prompt_length", s.prompt_length()}, {"ids", s.tokens()}, {"text", nlohmann::json::array()}};
    for (int p = 0; p < d.P; ++p) t["text"].push_back(s.text_of(p));
    write_text_file(path("tokens.json"), json_text(t, 1, true) + "\n");
  }
  {
    // With the export settings this export used, so the file reruns to
    // the same set (the window exports one head of its choosing).
    SessionConfig cfg = s.config();
    cfg.export_opts = eo;
    nlohmann::json j = cfg.to_json();
    // The session's first policy as resolved for this prompt (its policy
    // changes, if any, are resolved when they take effect).
    const ResolvedPolicy r = resolve_policy(s.config().policy, s.prompt_length(), s.model_config().max_positions);
    j["resolved"] = {{"k", r.k},
                     {"window", r.w},
                     {"sinks", r.s},
                     {"granularity", granularity_name(r.granularity)},
                     {"prompt_tokens", s.prompt_length()},
                     {"new_tokens", d.rows - 1},
                     {"kv_layers", d.m},
                     {"kv_heads", d.g},
                     {"device", s.backend().name()}};
    // Budgets shaped by depth (pyramidkv): each owning layer's, in KV-layer order.
    const KvLayout& lay = s.recorder().layout();
    const auto policy = make_policy(r);
    std::vector<int> layer_budgets;
    for (int kvl = 0; kvl < lay.n_kv_layers; ++kvl)
      layer_budgets.push_back(policy->segment_budget(lay, lay.segment(kvl, 0)));
    if (std::any_of(layer_budgets.begin(), layer_budgets.end(), [&](int k) { return k != r.k; }))
      j["resolved"]["layer_budgets"] = layer_budgets;
    j["provenance"] = to_json(provenance);
    write_text_file(path("session.json"), json_text(j) + "\n");
  }
  {
    nlohmann::json m = {{"masks.npy",
                         {{"dtype", "uint8"},
                          {"axes", {"step", "kv_layer", "kv_head", "position"}},
                          {"codes",
                           {{"0", "not yet seen"},
                            {"1", "kept"},
                            {"2", "kept, protected (sink or recent window)"},
                            {"3", "evicted at this step (row 0: during the prefill)"},
                            {"4", "evicted earlier"},
                            {"5", "in the cache, outside the top k (ideal, which never evicts)"}}},
                          {"kv_layers", lay.owners}}},
                        {"scores.npy",
                         {{"dtype", "float32"},
                          {"axes", {"step", "kv_layer", "kv_head", "position"}},
                          {"nan", "no statistic (policy keeps none, or slot absent)"}}},
                        {"attention.npy",
                         {{"dtype", "float32"},
                          {"axes", {"step", "layer", "head", "position"}},
                          {"layers", layers},
                          {"heads", heads},
                          {"zero", "position absent from the cache or not yet seen"}}},
                        {"rows", "row 0 is the state after the prompt; row t after the t-th new token"}};
    manifest = m;
  }

  // Figures: the chosen (layer, head) pairs — or the most informative head
  // when none was chosen — the all-heads grid of the first pair's layer and
  // the score curves of the first pair. With a shared range (the default)
  // every heatmap of the export uses one colour range.
  FigureExportOptions fo = FigureExportOptions::from(eo);
  fo.output.metadata = figure_metadata(provenance);
  auto pairs = eo.heatmaps;
  if (pairs.empty()) {
    if (eo.layer_head_chosen()) {
      pairs.push_back({eo.csv_layer(), eo.csv_head()});
    } else {
      const HeadChoice c = informative_head(s);
      pairs.push_back({c.layer, c.head});
    }
  }
  // The grid: of the export layer when one is set, else of the first head drawn.
  const int grid_layer = eo.layer ? *eo.layer : pairs.front().first;
  std::map<int, std::vector<HeatmapData>> by_layer;  // one replay per layer at most
  auto heads_of = [&](int l) -> const std::vector<HeatmapData>& {
    auto it = by_layer.find(l);
    if (it == by_layer.end()) it = by_layer.emplace(l, layer_heatmap_data(s, l)).first;
    return it->second;
  };
  // A recorded head is drawn from the recorder; any other from its layer's replay.
  std::map<std::pair<int, int>, HeatmapData> recorded_heads;
  auto head_of = [&](int l, int h) -> const HeatmapData& {
    if (!rec.records_head(l, h)) return heads_of(l)[h];
    auto it = recorded_heads.find({l, h});
    if (it == recorded_heads.end()) it = recorded_heads.emplace(std::pair{l, h}, attention_heatmap_data(s, l, h)).first;
    return it->second;
  };
  // recording.heads (--record-heads) keeps some heads of each layer: the
  // all-heads grid would replay the whole run with every head of a layer
  // (what recording fewer heads avoids), so it is left out.
  const bool some_heads = rec.attention_heads().size() < std::size_t(s.model_config().n_heads);
  const bool draw_grid = !some_heads || rec.records_layer(grid_layer);
  ValueExtent shared;
  for (const auto& [l, h] : pairs) shared.add(head_of(l, h).values);
  if (draw_grid)
    for (const auto& d : heads_of(grid_layer)) shared.add(d.values);
  auto add = [&](const std::vector<fs::path>& files) {
    for (const auto& f : files) written.push_back(f.filename().string());
  };
  for (const auto& [l, h] : pairs)
    add(export_attention_heatmap(s, head_of(l, h), l, h,
                                 dir / ("attention_L" + std::to_string(l) + "_H" + std::to_string(h)), fo, &shared));
  if (draw_grid)
    add(export_attention_grid(s, heads_of(grid_layer), grid_layer,
                              dir / ("attention_L" + std::to_string(grid_layer) + "_grid"), fo, &shared));
  else
    manifest["attention.npy"]["grid"] =
        "left out: recording.heads keeps only some heads of layer " + std::to_string(grid_layer);
  const auto [sl, sh] = pairs.front();
  add(export_score_curves(s, sl, sh, dir / ("score_curves_L" + std::to_string(sl) + "_H" + std::to_string(sh)), fo));
  if (fork)
    add(export_fork_difference(s, head_of(sl, sh), *fork, sl, sh,
                               dir / ("fork_difference_L" + std::to_string(sl) + "_H" + std::to_string(sh)), fo));
  if (extra)
    for (const auto& f : extra(dir))
      if (std::find(written.begin(), written.end(), f) == written.end()) written.push_back(f);
  check_interrupt();
  written.push_back("manifest.json");
  manifest["format"] = kExportFormat;
  manifest["files"] = written;
  manifest["provenance"] = to_json(provenance);
  write_text_file(dir / "manifest.json", json_text(manifest) + "\n");
  return written;
}

bool is_kvscope_export(const nlohmann::json& m) {
  // Exports before the manifest named its format had masks.npy's entry.
  return m.value("format", "") == kExportFormat || m.contains("masks.npy");
}

}  // namespace

bool is_export_file_name(const std::string& name) {
  static const std::regex kNames(
      "masks\\.npy|scores\\.npy|attention\\.npy|events\\.csv|metrics\\.csv|tokens\\.json|session\\.json|"
      "manifest\\.json|(masks|scores)_L[0-9]+_H[0-9]+\\.csv|"
      "(attention_L[0-9]+_(H[0-9]+|grid)|(score_curves|fork_difference)_L[0-9]+_H[0-9]+)\\.(png|svg|pdf)");
  return std::regex_match(name, kNames);
}

std::unique_ptr<OutputFolder> open_export_folder(const fs::path& dir) {
  return std::make_unique<OutputFolder>(dir, OutputSet{"manifest.json", is_kvscope_export, is_export_file_name});
}

std::vector<std::string> export_session(const Session& s, OutputFolder& folder, const ExtraExportFiles& extra,
                                        const ExportConfig* opts, const Session* fork) {
  try {
    const std::vector<std::string> written =
        write_export(s, folder.staging(), extra, opts ? *opts : s.config().export_opts, fork);
    folder.commit(written);
    return written;
  } catch (const Interrupted&) {
    throw Interrupted(folder.nothing_written());
  } catch (const Error& e) {
    throw folder.in_target_words(e);  // "out/masks.npy: ...", not the staging folder's name
  }
}

bool is_export_session_file(const fs::path& file) {
  if (file.filename() != "session.json") return false;
  const fs::path manifest = file.parent_path() / "manifest.json";
  std::error_code ec;
  if (!fs::is_regular_file(manifest, ec)) return false;
  try {
    const nlohmann::json m = read_json_file(manifest);
    if (!is_kvscope_export(m) || !m.contains("files") || !m["files"].is_array()) return false;
    for (const auto& f : m["files"])
      if (f.is_string() && f.get<std::string>() == "session.json") return true;
  } catch (const Error&) {
    return false;  // not a manifest an export wrote
  }
  return false;
}

std::vector<std::string> export_session(const Session& s, const fs::path& dir) {
  const auto folder = open_export_folder(dir);
  return export_session(s, *folder);
}

}  // namespace kvscope
