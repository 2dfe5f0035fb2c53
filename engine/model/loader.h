// A model directory's config.json and weights -> ModelConfig + ModelWeights.
#pragma once

#include <filesystem>
#include <functional>
#include <string>

#include "model/config.h"
#include "model/weights.h"

namespace kvscope {

struct ModelFiles {
  std::filesystem::path dir;
  ModelConfig config;
  ModelWeights weights;
};

// A configuration field's name as the configuration's file spells it
// ("num_key_value_heads" -> "llama.attention.head_count_kv" for a GGUF
// file); empty for a config.json, which uses the fields' own names.
using FieldNamesInFile = std::function<std::string(const std::string&)>;

// Reads config.json (and generation_config.json for BOS/EOS), opens the
// safetensors files and maps every tensor the architecture needs. Throws
// kvscope::Error naming the file and the field or tensor. A .gguf file (see
// gguf_model.h) is loaded the same way from its metadata.
ModelFiles load_model_files(const std::filesystem::path& dir);

// The architecture mapping alone, for tests that build stores in memory.
// `field_in_file` names configuration fields as a GGUF file spells them.
ModelWeights map_weights(const ModelConfig& cfg, std::shared_ptr<const class TensorStore> store,
                         const std::string& config_source, FieldNamesInFile field_in_file = {});

}  // namespace kvscope
