// Writes a finished (or paused) session to a directory — the files
// researchers put in papers, documented in the README ("Exports"):
// masks.npy, attention.npy, scores.npy, CSV twins for one layer/head,
// events.csv, metrics.csv, tokens.json, session.json, manifest.json and the
// figures (session/figure_export.h): a heatmap per chosen layer/head (the
// most informative head when none is chosen), the all-heads grid of its
// layer and the score curves, in the export block's formats.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "session/session.h"

namespace kvscope {

// Returns the files written (relative names). Each file is written
// atomically; the directory is created when missing.
std::vector<std::string> export_session(const Session& s, const std::filesystem::path& dir);

}  // namespace kvscope
