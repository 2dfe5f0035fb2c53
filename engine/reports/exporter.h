// Writes a finished (or paused) session to a directory — the files
// researchers put in papers, documented in docs/exports.md:
// masks.npy, attention.npy, scores.npy, CSV twins for one layer/head,
// events.csv, metrics.csv, tokens.json, session.json, manifest.json and the
// figures (reports/figure_export.h): a heatmap per chosen layer/head (the
// most informative head when none is chosen), the all-heads grid of its
// layer and the score curves, in the export block's formats.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "session/session.h"

namespace kvscope {

// Returns the files written (relative names). The set is written into a
// staging folder beside `dir` and renamed into place, replacing an earlier
// kvscope export there as a whole; manifest.json lists the files. A
// folder that is not empty and holds no kvscope export is refused.
std::vector<std::string> export_session(const Session& s, const std::filesystem::path& dir);
// The refusal above, before any work: throws kvscope::Error naming `dir`.
void check_export_target(const std::filesystem::path& dir);

}  // namespace kvscope
