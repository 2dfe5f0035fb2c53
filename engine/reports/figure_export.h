// A session's pictures, drawn by the figures layer (engine/figures): the
// attention heatmap of one head over the recorded steps, the grid of every
// head of a layer, and the score curves of the policy's statistic. The CLI's
// exports, sweeps and the desktop app's "export the current view" all come
// through here, so the same session gives the same figures everywhere.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "figures/canvas.h"
#include "figures/color_scale.h"
#include "figures/heatmap_panel.h"
#include "session/session_config.h"

namespace kvscope {

class Session;

struct FigureExportOptions {
  FigureOutput output;  // formats and PNG DPI
  std::string colormap = "viridis";
  ScaleKind scale = ScaleKind::linear;
  RangeSpec range;  // shared (the default): one range over the figures exported together
  EvictedStyle evicted = EvictedStyle::strip;
  int up_to_row = -1;  // draw rows 0..up_to_row; -1: every recorded row
  PositionRange positions;  // the heatmaps' key positions (all by default)

  // The settings of a session file's "export" block (already validated).
  static FigureExportOptions from(const ExportConfig& e);
};

// The attention of (layer, query head) as a heatmap: one row per recorded
// step, one column per position, NaN where the position was not yet seen,
// the mask of the KV head it reads, token text on both axes.
HeatmapData attention_heatmap_data(const Session& s, int layer, int head, int up_to_row = -1);
// Every head of a layer (one replay at most when the layer is not recorded).
std::vector<HeatmapData> layer_heatmap_data(const Session& s, int layer, int up_to_row = -1);
// "kvscope-tiny · h2o k=49 (30% of prompt) · layer 0 · head 3 · steps 0–8";
// head < 0: "all heads".
std::string figure_title(const Session& s, int layer, int head, int rows);

// Each writes stem + ".png" / ".svg" / ".pdf" per the options and returns
// the files. `shared`: the data of every figure to compare with, for a
// shared range (nullptr: this figure's own data).
std::vector<std::filesystem::path> export_attention_heatmap(const Session& s, const HeatmapData& d, int layer, int head,
                                                            const std::filesystem::path& stem,
                                                            const FigureExportOptions& o,
                                                            const ValueExtent* shared = nullptr);
std::vector<std::filesystem::path> export_attention_grid(const Session& s, const std::vector<HeatmapData>& heads,
                                                         int layer, const std::filesystem::path& stem,
                                                         const FigureExportOptions& o,
                                                         const ValueExtent* shared = nullptr);
// Nothing (an empty list) when the policy keeps no statistic (full, window, sink).
std::vector<std::filesystem::path> export_score_curves(const Session& s, int layer, int head,
                                                       const std::filesystem::path& stem, const FigureExportOptions& o);

// A fork's comparison at (layer, query head): attention A - B over the rows
// and positions both runs have (NaN where either has not seen a position),
// and per cell the fork code of A's mask against B's
// (common/mask_codes.h); a label names both tokens where the runs' differ.
HeatmapData fork_difference_data(const Session& a, const Session& b, int layer, int head, int up_to_row = -1);
// The same from A's heatmap of that head already made (attention_heatmap_data
// or a layer's replay, as the exporter draws it), so A is not replayed
// twice; B's rows up to up_to_row. a_data must be whole (not cropped,
// its rows up to the same up_to_row): cell (row, position) of A is set
// against the same cell of B, so a cropped A would be compared with the
// wrong positions.
HeatmapData fork_difference_data(const HeatmapData& a_data, const Session& b, int layer, int head, int up_to_row = -1);
// That comparison as a figure, the window's third fork panel: coolwarm on a
// range symmetric about zero (white: equal), the masks' comparison in the
// strip under it (unless the evicted style is none). a_data: A's heatmap of
// (layer, head); a names the model and A's policy in the title.
std::vector<std::filesystem::path> export_fork_difference(const Session& a, const HeatmapData& a_data, const Session& b,
                                                          int layer, int head, const std::filesystem::path& stem,
                                                          const FigureExportOptions& o);

// "Export the current view", the app's button: into `dir`, the heatmap of
// (layer, head) as attention_L{l}_H{h}, the grid of the layer's heads as
// attention_L{l}_grid (one colour range across both unless the range is
// auto or fixed) and the score curves as score_curves_L{l}_H{h}. Returns the
// files written. Throws kvscope::Error naming the file on a failed write.
std::vector<std::filesystem::path> export_view(const Session& s, int layer, int head, const std::filesystem::path& dir,
                                               const FigureExportOptions& o);

// The statistic a policy ranks by, for an axis ("accumulated attention").
std::string statistic_name(PolicyKind kind);

}  // namespace kvscope
