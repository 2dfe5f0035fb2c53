// Everything one model directory provides: config, weights, tokenizer and
// the BOS/EOS ids, loaded and validated together.
#pragma once

#include <filesystem>
#include <memory>
#include <mutex>
#include <string>

#include "model/loader.h"
#include "tokenizer/tokenizer.h"

namespace kvscope {

struct ModelBundle {
  ModelFiles files;
  std::shared_ptr<const Tokenizer> tokenizer;

  // The weights last prepared for a backend from this model (backend.h's
  // PreparedWeights, under `key`: device, sharing layout, format), kept so
  // that the next session with the same settings skips the preparation.
  // One entry, so that at most one prepared copy outlives the sessions
  // using it; shared by copies of the bundle, guarded by its mutex.
  struct PreparedSlot {
    std::mutex mutex;
    std::string key;
    std::shared_ptr<const void> value;
  };
  std::shared_ptr<PreparedSlot> prepared = std::make_shared<PreparedSlot>();

  const ModelConfig& config() const { return files.config; }
  bool is_eos(int id) const;
};

// Loads <dir>/config.json, the safetensors, <dir>/tokenizer.json and the
// BOS/EOS ids (generation_config.json, config.json, tokenizer_config.json).
// Checks that the tokenizer fits the model's vocabulary.
ModelBundle load_model_bundle(const std::filesystem::path& dir);

// The bundled default model (assets/models/kvscope-tiny): $KVSCOPE_ASSETS,
// then <executable>/../share/kvscope/assets, then the source tree.
std::filesystem::path assets_dir();
std::filesystem::path default_model_dir();

}  // namespace kvscope
