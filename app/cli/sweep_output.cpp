#include "sweep_output.h"

#include <algorithm>
#include <filesystem>
#include <regex>
#include <vector>

#include "common/error.h"
#include "io/atomic_file.h"

namespace kvscope::cli {
namespace {

constexpr const char* kManifest = "sweep_manifest.json";
constexpr const char* kSweepFormat = "kvscope-sweep";

}  // namespace

bool is_sweep_file_name(const std::string& name) {
  static const std::regex kNames(
      "sweep\\.csv|sweep_items\\.csv|sweep_steps\\.csv|sweep\\.provenance\\.json|sweep_manifest\\.json|sweep_shard\\."
      "json|"
      "(sweep|heatmap)_[^/]+\\.(png|svg|pdf)");
  return std::regex_match(name, kNames);
}

std::unique_ptr<OutputFolder> open_sweep_folder(const std::string& dir) {
  auto folder = std::make_unique<OutputFolder>(
      dir, OutputSet{kManifest, [](const nlohmann::json& m) { return m.value("format", "") == kSweepFormat; },
                     is_sweep_file_name});
  // DIR/cells holds a sweep's checkpoints, removed when it finishes: a
  // folder of that name without them is the user's.
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path cells = folder->dir() / "cells";
  if (fs::exists(fs::symlink_status(cells, ec)) && !fs::is_regular_file(cells / "sweep.json", ec))
    throw Error((fs::path(dir) / "cells").string(), "",
                "is not a sweep's checkpoint folder (no sweep.json in it) and a sweep keeps its checkpoints there; "
                "move it away or choose another folder");
  return folder;
}

void commit_sweep(OutputFolder& folder) {
  namespace fs = std::filesystem;
  std::vector<std::string> files;
  std::error_code ec;
  for (fs::directory_iterator it(folder.staging(), ec), end; !ec && it != end; it.increment(ec))
    if (it->is_regular_file()) files.push_back(it->path().filename().string());
  std::sort(files.begin(), files.end());
  files.push_back(kManifest);
  const nlohmann::json m = {{"format", kSweepFormat}, {"files", files}};
  write_text_file(folder.staging() / kManifest, m.dump(2) + "\n");
  folder.commit(files);
}

}  // namespace kvscope::cli
