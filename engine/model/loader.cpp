#include "model/loader.h"

#include "common/error.h"
#include "io/safetensors.h"
#include "model/architectures.h"
#include "model/config_parse.h"
#include "model/gguf_model.h"

namespace kvscope {

ModelWeights map_weights(const ModelConfig& cfg, std::shared_ptr<const TensorStore> store,
                         const std::string& config_source, FieldNamesInFile field_in_file) {
  TensorPicker pick(std::move(store), cfg, config_source, std::move(field_in_file));
  switch (cfg.arch) {
    case Arch::GPT2: return map_gpt2_weights(pick, cfg);
    case Arch::GPTNeoX: return map_gpt_neox_weights(pick, cfg);
    case Arch::Llama: return map_llama_weights(pick, cfg);
    case Arch::Gemma3: return map_gemma3_weights(pick, cfg);
    case Arch::GPTJ: return map_gptj_weights(pick, cfg);
    case Arch::OPT: return map_opt_weights(pick, cfg);
    case Arch::Phi3: return map_phi3_weights(pick, cfg);
    case Arch::MPT: return map_mpt_weights(pick, cfg);
  }
  throw Error(config_source, "model_type", "no weight mapping");
}

ModelFiles load_model_files(const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::exists(dir, ec))
    throw Error(dir.string(), "", "not found (a model is a Hugging Face model folder or a .gguf file)");
  if (is_gguf_file(dir)) return load_gguf_model(dir);
  if (!fs::is_directory(dir, ec))
    throw Error(dir.string(), "", "not a directory or a GGUF file (expected a Hugging Face model directory or a .gguf file)");
  ModelFiles m;
  m.dir = dir;
  const fs::path config_path = dir / "config.json";
  m.config = read_model_config(config_path);
  read_generation_config(dir, m.config);
  auto store = std::make_shared<TensorStore>(TensorStore::open_model_dir(dir));
  m.weights = map_weights(m.config, store, config_path.string());
  return m;
}

}  // namespace kvscope
