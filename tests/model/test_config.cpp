// config.json parsing: old and new key spellings mean the same thing, and
// every bad value is reported with the file and the field.
#include <gtest/gtest.h>

#include "common/error.h"
#include "model/config_parse.h"
#include "test_util.h"

namespace kvscope {
namespace {

ModelConfig parse(const std::string& text) { return parse_model_config(nlohmann::json::parse(text), "config.json"); }

std::string error_of(const std::string& text) {
  try {
    parse(text);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

const char* kNeoxNew = R"({"model_type":"gpt_neox","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,
  "intermediate_size":256,"max_position_embeddings":128,"vocab_size":100,"use_parallel_residual":false,
  "rope_parameters":{"rope_type":"default","rope_theta":500.0,"partial_rotary_factor":0.5},"dtype":"float16"})";
const char* kNeoxOld = R"({"model_type":"gpt_neox","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,
  "intermediate_size":256,"max_position_embeddings":128,"vocab_size":100,"use_parallel_residual":false,
  "rotary_pct":0.5,"rotary_emb_base":500.0,"torch_dtype":"float16"})";

TEST(Config, NeoxOldAndNewSpellingsAgree) {
  for (const char* text : {kNeoxNew, kNeoxOld}) {
    const ModelConfig c = parse(text);
    EXPECT_EQ(c.arch, Arch::GPTNeoX);
    EXPECT_EQ(c.head_dim, 16);
    EXPECT_EQ(c.rotary_dims, 8);
    EXPECT_EQ(c.rope_theta, 500.0);
    EXPECT_FALSE(c.parallel_residual);
    EXPECT_EQ(c.dtype, DType::F16);
    EXPECT_EQ(c.norm, NormKind::LayerNorm);
    EXPECT_EQ(c.act, Activation::GeluErf);
  }
}

TEST(Config, NeoxDefaultsFollowPythia) {
  const ModelConfig c = parse(R"({"model_type":"gpt_neox","hidden_size":64,"num_hidden_layers":2,
    "num_attention_heads":4,"intermediate_size":256,"max_position_embeddings":128,"vocab_size":100})");
  EXPECT_EQ(c.rotary_dims, 4);  // rotary_pct defaults to 0.25
  EXPECT_TRUE(c.parallel_residual);
  EXPECT_FALSE(c.tied_embeddings);
  EXPECT_TRUE(c.qkv_bias);
}

TEST(Config, LlamaRopeScalingBothSpellings) {
  const char* base = R"({"model_type":"llama","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,
    "num_key_value_heads":2,"intermediate_size":128,"max_position_embeddings":256,"vocab_size":100,)";
  const ModelConfig a = parse(std::string(base) + R"("rope_theta":500000.0,"rope_scaling":{"type":"llama3",
    "factor":8.0,"low_freq_factor":1.0,"high_freq_factor":4.0,"original_max_position_embeddings":64}})");
  const ModelConfig b = parse(std::string(base) + R"("rope_parameters":{"rope_type":"llama3","rope_theta":500000.0,
    "factor":8.0,"low_freq_factor":1.0,"high_freq_factor":4.0,"original_max_position_embeddings":64}})");
  for (const auto& c : {a, b}) {
    EXPECT_EQ(c.rope_theta, 500000.0);
    EXPECT_EQ(c.rope_scaling.type, RopeScaling::Type::Llama3);
    EXPECT_EQ(c.rope_scaling.factor, 8.0);
    EXPECT_EQ(c.rope_scaling.original_max_positions, 64);
    EXPECT_EQ(c.n_kv_heads, 2);
    EXPECT_EQ(c.rotary_dims, 16);
  }
}

TEST(Config, Gpt2SpellingsAndDefaults) {
  const ModelConfig c = parse(R"({"model_type":"gpt2","n_embd":64,"n_layer":3,"n_head":4,"n_positions":128,
    "vocab_size":100,"n_inner":null,"activation_function":"gelu_new"})");
  EXPECT_EQ(c.intermediate, 256);
  EXPECT_TRUE(c.learned_positions);
  EXPECT_TRUE(c.tied_embeddings);
  EXPECT_EQ(c.act, Activation::GeluTanh);
  const ModelConfig d = parse(R"({"model_type":"gpt2","hidden_size":64,"num_hidden_layers":3,
    "num_attention_heads":4,"max_position_embeddings":128,"vocab_size":100})");
  EXPECT_EQ(d.hidden, 64);
  EXPECT_EQ(d.n_layers, 3);
}

TEST(Config, QwenHasQkvBiasesAndMlkvLayersAreRead) {
  const ModelConfig c = parse(R"({"model_type":"qwen2","hidden_size":64,"num_hidden_layers":4,
    "num_attention_heads":4,"num_key_value_heads":1,"intermediate_size":128,"max_position_embeddings":256,
    "vocab_size":100,"num_key_value_layers":2})");
  EXPECT_TRUE(c.qkv_bias);
  EXPECT_FALSE(c.o_bias);
  EXPECT_EQ(c.n_kv_layers, 2);
  EXPECT_EQ(c.owning_layers(), (std::vector<int>{0, 2}));
  EXPECT_EQ(c.kv_source(), (std::vector<int>{0, 0, 1, 1}));
  EXPECT_EQ(c.kv_bytes_per_token(2), 2 * 2 * 1 * 16 * 2);
}

TEST(Config, OwningLayersFollowTheMlkvCode) {
  ModelConfig c;
  c.n_layers = 12;
  c.n_kv_layers = 5;
  // [0] + [floor((i+1)*12/5) for i in 0..3] = [0, 2, 4, 7, 9]
  EXPECT_EQ(c.owning_layers(), (std::vector<int>{0, 2, 4, 7, 9}));
  EXPECT_EQ(c.kv_source(), (std::vector<int>{0, 0, 1, 1, 2, 2, 2, 3, 3, 4, 4, 4}));
}

TEST(Config, UnknownModelTypeListsTheSupportedOnes) {
  const std::string e = error_of(R"({"model_type":"bert","vocab_size":10})");
  EXPECT_NE(e.find("config.json: model_type: unsupported model type 'bert'"), std::string::npos) << e;
  for (const char* t : {"gpt2", "gpt_neox", "llama", "mistral", "qwen2"}) EXPECT_NE(e.find(t), std::string::npos);
}

TEST(Config, BadFieldsAreNamed) {
  EXPECT_NE(error_of(R"({"vocab_size":10})").find("model_type: missing"), std::string::npos);
  EXPECT_NE(error_of(R"({"model_type":"llama","hidden_size":"big"})").find("hidden_size: expected an integer"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"model_type":"llama","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,
    "num_key_value_heads":3,"intermediate_size":8,"max_position_embeddings":8,"vocab_size":10})")
                .find("num_key_value_heads: must divide"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"model_type":"llama","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,
    "intermediate_size":8,"max_position_embeddings":8,"vocab_size":10,"rope_scaling":{"type":"yarn","factor":2}})")
                .find("rope_scaling.type: unsupported RoPE type 'yarn'"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"model_type":"llama","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,
    "intermediate_size":8,"max_position_embeddings":8,"vocab_size":10,"num_key_value_layers":3})")
                .find("num_key_value_layers: must be between 1 and num_hidden_layers"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"model_type":"gpt2","n_embd":64,"n_layer":2,"n_head":4,"n_positions":8,
    "vocab_size":10,"activation_function":"relu"})").find("activation_function: unsupported activation 'relu'"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"model_type":"llama","hidden_size":0})").find("hidden_size: must be positive"),
            std::string::npos);
}

const char* kLlama = R"({"model_type":"llama","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,
  "intermediate_size":128,"max_position_embeddings":64,"vocab_size":100)";

TEST(Config, LlamaFamilyRotatesTheWholeHeadLikeTransformers) {
  // transformers 5.23 ignores partial_rotary_factor for llama / mistral /
  // qwen2 (their default RoPE rotates head_dim); kvscope must not apply it.
  for (const char* type : {"llama", "mistral", "qwen2"}) {
    std::string text = std::string(kLlama) + R"(,"partial_rotary_factor":0.5})";
    text.replace(text.find("llama"), 5, type);
    EXPECT_EQ(parse(text).rotary_dims, 16) << type;
    std::string nested = std::string(kLlama) + R"(,"rope_parameters":{"rope_type":"default","partial_rotary_factor":0.25}})";
    nested.replace(nested.find("llama"), 5, type);
    EXPECT_EQ(parse(nested).rotary_dims, 16) << type;
  }
  // GPT-NeoX does apply it (rotary_pct), as in transformers.
  EXPECT_EQ(parse(kNeoxNew).rotary_dims, 8);
  EXPECT_NE(error_of(std::string(kLlama) + R"(,"partial_rotary_factor":0.5,
    "rope_scaling":{"rope_type":"linear","factor":2}})").find("partial_rotary_factor: is not supported together"),
            std::string::npos);
}

TEST(Config, GatedMlpActivationsOtherThanSiluAreRefused) {
  for (const char* act : {"gelu", "gelu_pytorch_tanh", "gelu_new"})
    EXPECT_NE(error_of(std::string(kLlama) + R"(,"hidden_act":")" + act + R"("})").find("config.json: hidden_act: '" +
                                                                                          std::string(act) + "' is not supported"),
              std::string::npos)
        << act;
  EXPECT_NE(error_of(std::string(kLlama) + R"(,"hidden_act":"relu"})").find("hidden_act: unsupported activation 'relu'"),
            std::string::npos);
  EXPECT_EQ(parse(std::string(kLlama) + R"(,"hidden_act":"silu"})").act, Activation::Silu);
}

TEST(Config, MalformedJsonNamesFileAndLine) {
  test::TempDir dir;
  test::write_file(dir / "config.json", "{\n  \"model_type\": \"llama\",\n  \"hidden_size\": ,\n}");
  try {
    read_model_config(dir / "config.json");
    FAIL();
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("config.json: invalid JSON at line 3"), std::string::npos) << m;
  }
}

}  // namespace
}  // namespace kvscope
