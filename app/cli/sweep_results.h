// The files of a finished sweep, written from its cells: sweep.csv (each
// cell's summary with intervals), sweep_items.csv, sweep_steps.csv (a
// session sweep), the sweep_METRIC plots, --heatmaps' pictures and
// sweep.provenance.json, swapped into the output folder together with its
// manifest. One definition for a sweep run on one machine and for
// sweep-merge of its shards, so the two write the same bytes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "figures/heatmap.h"
#include "io/output_folder.h"
#include "policy/params.h"
#include "reports/figure_export.h"
#include "reports/provenance.h"
#include "reports/sweep_summary.h"

namespace kvscope::cli {

struct Cell {
  std::string policy, budget;
  double budget_value = 0;
  std::vector<SweepItemResult> items;  // one per item x seed
  HeatmapData heatmap;                 // --heatmaps: the cell's attention heatmap (its first seed)
  std::string heatmap_title;
  // A session sweep (one text): one per counted decode step x seed, the
  // unit of its statistics ("item" holds the step).
  std::vector<SweepItemResult> steps;
};

// --policies / --budgets: the comma-separated list, empty entries dropped.
std::vector<std::string> split_list(const std::string& s);

// A budget as a file name part: "30%" -> "30pct", "ratio:0.25" -> "ratio0.25".
std::string budget_tag(const std::string& b);

// A cell's rows as JSON and back (checkpoints, shard files): metrics
// not measured (NaN) are left out.
nlohmann::json rows_json(const std::vector<SweepItemResult>& rows);
std::vector<SweepItemResult> rows_from_json(const nlohmann::json& j, const std::string& policy,
                                            const std::string& budget);

struct SweepResultsSpec {
  std::vector<std::string> policies, budgets;  // as given, in order
  std::vector<PolicyKind> kinds;
  std::vector<Amount> amounts;
  std::string dataset;  // --dataset as given; "" for a session sweep (its unit is the decode step)
  bool heatmaps = false;
  FigureExportOptions figure_opts;
  Provenance provenance;
};

struct SweepResultsWritten {
  std::size_t plots = 0, heatmaps = 0;
  std::string summary_csv;  // sweep.csv's text, which the CLI prints
};

// Writes every result file of `cells` (in policy, budget order) into the
// folder's staging area and commits them with the manifest.
SweepResultsWritten write_sweep_results(const SweepResultsSpec& spec, const std::vector<Cell>& cells,
                                        OutputFolder& folder);

}  // namespace kvscope::cli
