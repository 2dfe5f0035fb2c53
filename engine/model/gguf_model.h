// A GGUF file as a model: its metadata becomes the config.json transformers
// would build from it, its tensors (dequantized to float32 on load, llama's
// rotary row order undone) the tensors of a Hugging Face checkpoint, so the
// same config checks and architecture mappings apply as for a directory.
#pragma once

#include <filesystem>

#include <nlohmann/json.hpp>

#include "io/gguf.h"
#include "model/loader.h"

namespace kvscope {

// True when `path` is a regular file that starts with the GGUF magic.
bool is_gguf_file(const std::filesystem::path& path);

// The Hugging Face config (config.json keys) transformers 5.23.0 derives from
// the file's metadata; architectures and keys kvscope cannot compute like it
// (rope scaling, experts, unsupported architectures) are refused by key name.
nlohmann::json gguf_model_config_json(const GgufFile& file);

ModelFiles load_gguf_model(const std::filesystem::path& path);
// The same from a file already opened (the bundle also reads its tokenizer).
ModelFiles load_gguf_model(const GgufFile& file);

}  // namespace kvscope
