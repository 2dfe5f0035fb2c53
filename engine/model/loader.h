// A model directory's config.json and weights -> ModelConfig + ModelWeights.
#pragma once

#include <filesystem>

#include "model/config.h"
#include "model/weights.h"

namespace kvscope {

struct ModelFiles {
  std::filesystem::path dir;
  ModelConfig config;
  ModelWeights weights;
};

// A .gguf file (see gguf_model.h) is loaded the same way from its metadata.
// Reads config.json (and generation_config.json for BOS/EOS), opens the
// safetensors files and maps every tensor the architecture needs. Throws
// kvscope::Error naming the file and the field or tensor.
ModelFiles load_model_files(const std::filesystem::path& dir);

// The architecture mapping alone, for tests that build stores in memory.
ModelWeights map_weights(const ModelConfig& cfg, std::shared_ptr<const class TensorStore> store,
                         const std::string& config_source);

}  // namespace kvscope
