// config_sha256's identity of a configuration: every field that changes the
// numbers changes it; the file format a model came in does not.
#include <gtest/gtest.h>

#include <functional>
#include <utility>

#include "bundle/model_bundle.h"
#include "common/aggregate_fields.h"
#include "model/config_identity.h"
#include "test_util.h"

namespace kvscope {
namespace {

// The count config_identity.cpp's static_assert relies on: one per field,
// whatever its type (a nested struct counts once, as its member does).
struct Inner {
  int a = 0;
  double b = 0;
};
struct Mixed {
  std::string name;
  std::vector<float> values;
  Inner inner;
  bool flag = false;
  int method() const { return 0; }
};
static_assert(aggregate_field_count<Inner>() == 2);
static_assert(aggregate_field_count<Mixed>() == 4);

ModelConfig config_of(const std::filesystem::path& model) { return load_model_bundle(model).config(); }

TEST(ConfigIdentity, EveryFieldThatChangesTheNumbersChangesIt) {
  const ModelConfig base = config_of(test::model_dir("mpt"));
  const nlohmann::json id = model_config_identity(base);
  const std::vector<std::pair<const char*, std::function<void(ModelConfig&)>>> changes = {
      {"clip_qkv", [](ModelConfig& c) { c.clip_qkv = 0; }},
      {"alibi_slopes", [](ModelConfig& c) { c.alibi_slopes[1] *= 2; }},
      {"softmax_scale", [](ModelConfig& c) { c.softmax_scale = 0.5; }},
      {"post_norm", [](ModelConfig& c) { c.post_norm = !c.post_norm; }},
      {"word_embed_dim", [](ModelConfig& c) { c.word_embed_dim = 16; }},
      {"norm_affine", [](ModelConfig& c) { c.norm_affine = !c.norm_affine; }},
      {"lm_head_bias", [](ModelConfig& c) { c.lm_head_bias = !c.lm_head_bias; }},
      {"rope_freq_factors",
       [](ModelConfig& c) {
         c.rope_freq_factors = {1.f, 2.f};
       }},
      {"sliding_layers",
       [](ModelConfig& c) {
         c.sliding_layers = {1, 0};
       }},
      {"rope_scaling.factor", [](ModelConfig& c) { c.rope_scaling.factor = 2; }},
      {"norm_eps", [](ModelConfig& c) { c.norm_eps *= 2; }},
      {"eos_ids", [](ModelConfig& c) { c.eos_ids.push_back(3); }},
  };
  for (const auto& [name, change] : changes) {
    ModelConfig c = base;
    change(c);
    EXPECT_NE(model_config_identity(c), id) << name;
  }
  // The stored weights' type sizes memory figures only: the weights
  // themselves are the model files' hashes.
  ModelConfig c = base;
  c.dtype = c.dtype == DType::F32 ? DType::BF16 : DType::F32;
  EXPECT_EQ(model_config_identity(c), id);
}

// A GGUF file converted from a folder the way llama.cpp's converter does
// runs with the folder's configuration, so it hashes alike but for what
// the file stores differently: the norm epsilon as a 32-bit float (the
// engine adds it in double, so 1e-5 and float(1e-5) are two settings), and
// Llama 3's rope_scaling as rope_freqs.weight.
TEST(ConfigIdentity, AGgufFileIsTheFolderItWasConvertedFrom) {
  for (const auto& [gguf, folder] : {std::pair{"tiny_mpt.gguf", "mpt"},
                                     {"tiny_gptneox.gguf", "gpt_neox_parallel"},
                                     {"tiny_gptneox_f16.gguf", "gpt_neox_sequential"},
                                     {"tiny_llama3.gguf", "llama3_mqa_bf16"}}) {
    nlohmann::json a = model_config_identity(config_of(test::data_dir() / "gguf" / gguf));
    nlohmann::json b = model_config_identity(config_of(test::model_dir(folder)));
    EXPECT_EQ(a.at("norm_eps").get<double>(), double(float(b.at("norm_eps").get<double>()))) << gguf;
    EXPECT_NE(a, b) << gguf << ": the epsilon differs";
    a["norm_eps"] = b["norm_eps"];
    if (a.contains("rope_freq_factors")) {
      EXPECT_EQ(b.at("rope_scaling").at("type"), int(RopeScaling::Type::Llama3)) << gguf;
      a.erase("rope_freq_factors");
      a["rope_scaling"] = b["rope_scaling"];
    }
    EXPECT_EQ(a, b) << gguf << " vs " << folder << "\n" << nlohmann::json::diff(a, b).dump();
  }
}

}  // namespace
}  // namespace kvscope
