// Models fetched on purpose by tools/get-model.sh: where they are cached and
// which are complete. Nothing here downloads.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace kvscope {

// $KVSCOPE_MODELS, else $XDG_CACHE_HOME/kvscope/models, else
// ~/.cache/kvscope/models (the same rule as tools/get-model.sh).
std::filesystem::path models_cache_dir();

struct DownloadedModel {
  std::string name;             // the get-model.sh name, e.g. "smollm2-135m"
  std::filesystem::path model;  // the .gguf file (or a model directory)
};

// The names tools/get-model.sh knows (kept in step with its MODELS table).
const std::vector<std::string>& fetchable_model_names();

// A model argument as users type it: an existing path stays as it is; the
// name of a model fetched by tools/get-model.sh ("smollm2-135m") becomes its
// .gguf file; a name the script knows but that is not downloaded yet throws
// kvscope::Error saying which command fetches it. A path (with a '/') is
// returned unchanged (the loader then reports it missing); a bare word that
// is neither throws, listing the names.
std::string resolve_model_reference(const std::string& model);

// A model file fetched by tools/get-model.sh is checked, when opened,
// against the SHA-256 the script pinned and verified: its .complete marker
// beside the file holds that hash (second line), the file's name (third)
// and its size in bytes (fourth; older markers lack it). A wrong size is
// refused at once; the hash is computed once per version of the file and
// cached (io/file_hash.h), so later opens cost a stat and a small read.
// Throws kvscope::Error naming the file when it differs; a file without
// such a marker (any model not fetched by the script) passes unchecked.
void verify_fetched_model(const std::filesystem::path& file);

// Every finished download in the cache (a half-fetched one has no
// .complete marker and is skipped), sorted by name.
std::vector<DownloadedModel> downloaded_models();

}  // namespace kvscope
