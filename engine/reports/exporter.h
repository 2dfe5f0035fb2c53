// Writes a finished (or paused) session to a directory — the files
// researchers put in papers, documented in docs/exports.md:
// masks.npy, attention.npy, scores.npy, CSV twins for one layer/head,
// events.csv, metrics.csv, tokens.json, session.json, manifest.json and the
// figures (reports/figure_export.h): a heatmap per chosen layer/head (the
// most informative head when none is chosen), the all-heads grid of its
// layer and the score curves, in the export block's formats; with a fork,
// the figure comparing it with the run.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "io/output_folder.h"
#include "session/session.h"

namespace kvscope {

// The export folder `dir`, opened before any work (io/output_folder.h):
// locked, and refused (kvscope::Error naming the file) when a file that
// kvscope did not write there (not in its manifest.json) has a name the
// export may write. The user's other files and folders are left alone.
std::unique_ptr<OutputFolder> open_export_folder(const std::filesystem::path& dir);
// Whether an export may write a file of this name (masks.npy, the CSV
// twins, attention_L0_H1.png, ...): the names checked before any work.
bool is_export_file_name(const std::string& name);

// More files written into the staging folder before the manifest (the
// window's view figures, its session file); returns their names.
using ExtraExportFiles = std::function<std::vector<std::string>(const std::filesystem::path& staging)>;

// Writes the export into the folder's staging folder and commits it:
// the earlier export's files are replaced, manifest.json lists the new
// set. Returns the files written (relative names). Throws kvscope::Error
// naming the file that failed (the folder is then as it was), or
// Interrupted (io/interrupt.h) saying that nothing was written.
// `opts`: the export settings (layer / head of the CSVs and figures,
// formats); default: the session's own export block. `fork`: B of a fork
// of `s` (exported to its own folder, fork/): adds the comparison figure
// fork_difference_L{l}_H{h} of the figures' first head.
std::vector<std::string> export_session(const Session& s, OutputFolder& folder, const ExtraExportFiles& extra = {},
                                        const ExportConfig* opts = nullptr, const Session* fork = nullptr);
// Whether `file` is the session.json of a kvscope export (its folder's
// manifest.json is an export's and lists it): a later export replaces it,
// so the window's Save session refuses to write there.
bool is_export_session_file(const std::filesystem::path& file);

// Both steps at once (when there is no work between them).
std::vector<std::string> export_session(const Session& s, const std::filesystem::path& dir);

}  // namespace kvscope
