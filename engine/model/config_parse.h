// Hugging Face config.json -> ModelConfig, accepting the old and the new
// spellings of every key (n_embd / hidden_size, rotary_pct /
// rope_parameters.partial_rotary_factor, rope_theta / rope_parameters, ...).
#pragma once

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "model/config.h"

namespace kvscope {

// Throws kvscope::Error naming `source` and the field. An unknown model_type
// lists the supported ones.
ModelConfig parse_model_config(const nlohmann::json& j, const std::string& source);
ModelConfig read_model_config(const std::filesystem::path& config_json);

// BOS/EOS from generation_config.json (preferred) or config.json, already in
// `cfg`; fills cfg.eos_ids / cfg.bos_id when those files say more.
void read_generation_config(const std::filesystem::path& model_dir, ModelConfig& cfg);

}  // namespace kvscope
