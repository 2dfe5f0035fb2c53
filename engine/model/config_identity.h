// The architecture a model runs with, as one JSON object: every field of
// ModelConfig that decides the numbers, after the load-time fix-ups (EOS ids
// from the tokenizer's files, a GGUF file's metadata). Its hash is an
// export's config_sha256: two runs with the same hash ran the same
// architecture settings, whichever file format they came from.
#pragma once

#include <nlohmann/json.hpp>

#include "model/config.h"

namespace kvscope {

nlohmann::json model_config_identity(const ModelConfig& c);

}  // namespace kvscope
