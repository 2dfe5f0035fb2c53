// The folder `sweep --out DIR` writes its results into, under the rule of
// every kvscope output (io/output_folder.h, docs/exports.md): sweep.csv,
// sweep_items.csv, sweep_steps.csv (a session sweep), sweep.provenance.json,
// the sweep_METRIC plots and the heatmap_POLICY_BUDGET pictures are
// written into a staging folder and swapped in together, listed by
// sweep_manifest.json; an earlier sweep's files are replaced, any other
// file is left alone, and a file of the user's with one of those names is
// refused before any cell runs. The checkpoints of a running sweep
// (DIR/cells, for --resume) are written in place, as they complete.
#pragma once

#include <memory>
#include <string>

#include "io/output_folder.h"

namespace kvscope::cli {

// Opened before any work; throws kvscope::Error naming the user's file
// (or a DIR/cells folder that holds no sweep's checkpoints).
std::unique_ptr<OutputFolder> open_sweep_folder(const std::string& dir);
bool is_sweep_file_name(const std::string& name);
// Writes sweep_manifest.json beside the files in the staging folder and
// swaps them all in.
void commit_sweep(OutputFolder& folder);

}  // namespace kvscope::cli
