// Writes a finished (or paused) session to a directory — the files
// researchers put in papers, documented in the README ("Exports"):
// masks.npy, attention.npy, scores.npy, CSV twins for one layer/head,
// events.csv, metrics.csv, tokens.json, session.json, manifest.json and
// heatmap PNGs (one per chosen layer/head, and an all-heads grid).
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
