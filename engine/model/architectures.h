// One function per architecture: Hugging Face tensor names -> ModelWeights,
// with that architecture's load-time fix-ups. Each lives in arch_<name>.cpp.
#pragma once

#include "model/config.h"
#include "model/tensor_picker.h"
#include "model/weights.h"

namespace kvscope {

ModelWeights map_gpt2_weights(TensorPicker& pick, const ModelConfig& cfg);
ModelWeights map_gpt_neox_weights(TensorPicker& pick, const ModelConfig& cfg);
ModelWeights map_llama_weights(TensorPicker& pick, const ModelConfig& cfg);
ModelWeights map_gemma3_weights(TensorPicker& pick, const ModelConfig& cfg);
ModelWeights map_gptj_weights(TensorPicker& pick, const ModelConfig& cfg);
ModelWeights map_opt_weights(TensorPicker& pick, const ModelConfig& cfg);
ModelWeights map_phi3_weights(TensorPicker& pick, const ModelConfig& cfg);
ModelWeights map_mpt_weights(TensorPicker& pick, const ModelConfig& cfg);

}  // namespace kvscope
