// Opening what a user points at: a model directory ("" = the bundled one),
// a device name, a session file with its model. The CLI and the window both
// open sessions through here, so a file that runs in one runs in the other
// and bad input gets the same one-line message in both.
#pragma once

#include <memory>
#include <string>

#include "backend/backend.h"
#include "bundle/model_bundle.h"
#include "session/session_config.h"

namespace kvscope {

// "" -> the bundled default model.
ModelBundle load_bundle(const std::string& model);
std::shared_ptr<const ModelBundle> bundle_for(const std::string& model);

// auto: CUDA when available, else CPU; cuda without a GPU throws
// Error::setting("device", ...), which a front end names in its words.
Device resolve_device(const std::string& device);
// The same for a loaded model: "auto" takes the CPU also when the CUDA
// backend cannot compute the model (cuda_supports); "cuda" then refuses it
// when the backend is made.
Device resolve_device(const std::string& device, const ModelConfig& cfg);

// The model directory a Session should carry: absolute, so an exported
// session.json reruns from any directory; "" -> the bundled default.
std::string absolute_model_path(const std::string& model);

// A session file's settings with its model loaded. A relative model path
// is read from beside the file when it is there (else from the current
// directory) and made absolute; errors name the file and the field
// ("s.json: model: ...").
struct SessionFile {
  SessionConfig cfg;
  std::shared_ptr<const ModelBundle> bundle;
};
SessionFile load_session_file(const std::string& path);

}  // namespace kvscope
