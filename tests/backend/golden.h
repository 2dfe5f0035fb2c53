// The golden outputs tools/goldens_models.py wrote with Hugging Face
// transformers (fp32, eager attention) for each tiny checkpoint.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "io/json_file.h"
#include "io/npy.h"
#include "test_util.h"

namespace kvscope::test {

struct Golden {
  std::vector<int> prompt, greedy;
  NpyArray logits;  // [prompt + greedy, vocab]
  NpyArray attn;    // [layers, heads, prompt, prompt]

  static Golden load(const std::string& model) {
    Golden g;
    const auto dir = model_dir(model);
    const auto j = read_json_file(dir / "golden_ids.json");
    g.prompt = j.at("prompt").get<std::vector<int>>();
    g.greedy = j.at("greedy").get<std::vector<int>>();
    g.logits = read_npy(dir / "golden_logits.npy");
    g.attn = read_npy(dir / "golden_attn.npy");
    return g;
  }
};

inline const std::vector<std::string>& golden_models() {
  static const std::vector<std::string> names = {"gpt2",
                                                 "gpt_neox_parallel",
                                                 "gpt_neox_sequential",
                                                 "llama_gqa",
                                                 "llama3_mqa_bf16",
                                                 "qwen2_fp16_sharded",
                                                 "mistral",
                                                 "llama_mlkv",
                                                 "gemma3",
                                                 "qwen3_bf16",
                                                 "gptj_fp16",
                                                 "opt",
                                                 "opt_postnorm_proj_bf16",
                                                 "phi3",
                                                 "mpt",
                                                 "mpt_scale_bf16"};
  return names;
}

}  // namespace kvscope::test
