// config.json parsing: old and new key spellings mean the same thing, and
// every bad value is reported with the file and the field.
#include <gtest/gtest.h>

#include <cmath>

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
    "vocab_size":10,"activation_function":"mish"})")
                .find("activation_function: unsupported activation 'mish'"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"model_type":"llama","hidden_size":0})").find("hidden_size: must be positive"),
            std::string::npos);
}

// num_key_value_heads is spelled out: Mistral's and Qwen2's defaults (8 and
// 32) would not divide 4 heads.
const char* kLlama = R"({"model_type":"llama","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,
  "num_key_value_heads":4,"intermediate_size":128,"max_position_embeddings":64,"vocab_size":100)";

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
  for (const char* act : {"gelu", "gelu_pytorch_tanh", "gelu_new", "relu"})
    EXPECT_NE(error_of(std::string(kLlama) + R"(,"hidden_act":")" + act + R"("})").find("config.json: hidden_act: '" +
                                                                                          std::string(act) + "' is not supported"),
              std::string::npos)
        << act;
  EXPECT_NE(
      error_of(std::string(kLlama) + R"(,"hidden_act":"mish"})").find("hidden_act: unsupported activation 'mish'"),
      std::string::npos);
  EXPECT_EQ(parse(std::string(kLlama) + R"(,"hidden_act":"silu"})").act, Activation::Silu);
}

// The audit against transformers 5.23.0 (docs/config_fields.md): a
// field transformers reads differently from kvscope is either followed or
// refused by name; its default value still loads.

#ifndef EXPECT_CONTAINS
#define EXPECT_CONTAINS(hay, needle) EXPECT_NE((hay).find(needle), std::string::npos) << (hay)
#endif

// `text` with the first "llama" (the model_type) replaced by `type`.
std::string as_type(std::string text, const std::string& type) {
  text.replace(text.find("llama"), 5, type);
  return text;
}

const char* kGpt2 = R"({"model_type":"gpt2","n_embd":64,"n_layer":2,"n_head":4,"n_positions":64,"vocab_size":100)";

TEST(ConfigAudit, Gpt2RefusesSpellingsItDoesNotRead) {
  // GPT2Config reads layer_norm_epsilon, activation_function and n_inner;
  // layer_norm_eps, hidden_act and intermediate_size would be dropped by
  // transformers, so kvscope refuses them unless they agree.
  EXPECT_CONTAINS(error_of(std::string(kGpt2) + R"(,"layer_norm_eps":1e-3})"),
                  "config.json: layer_norm_eps: is not read by transformers 5.23.0 for gpt2 (it reads layer_norm_epsilon)");
  EXPECT_CONTAINS(error_of(std::string(kGpt2) + R"(,"hidden_act":"gelu"})"),
                  "config.json: hidden_act: is not read by transformers 5.23.0 for gpt2 (it reads activation_function)");
  EXPECT_CONTAINS(error_of(std::string(kGpt2) + R"(,"intermediate_size":128})"),
                  "config.json: intermediate_size: is not read by transformers 5.23.0 for gpt2 (it reads n_inner)");
  const ModelConfig c = parse(std::string(kGpt2) +
                              R"(,"layer_norm_eps":1e-5,"hidden_act":"gelu_new","intermediate_size":256,"n_inner":null})");
  EXPECT_EQ(c.norm_eps, 1e-5);
  EXPECT_EQ(c.act, Activation::GeluTanh);
  EXPECT_EQ(c.intermediate, 256);
  EXPECT_EQ(parse(std::string(kGpt2) + R"(,"layer_norm_epsilon":1e-3,"n_inner":96})").norm_eps, 1e-3);
}

const char* kNeox = R"({"model_type":"gpt_neox","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,
  "intermediate_size":256,"max_position_embeddings":128,"vocab_size":100)";

TEST(ConfigAudit, NeoxRefusesLlamaStyleRopeKeysAndAForeignHeadDim) {
  // GPTNeoXConfig takes the base from rotary_emb_base and the fraction from
  // rotary_pct (defaults 10000 and 0.25); top-level rope_theta and
  // partial_rotary_factor are not read.
  EXPECT_CONTAINS(error_of(std::string(kNeox) + R"(,"rope_theta":500.0})"),
                  "config.json: rope_theta: is not read by transformers 5.23.0 for gpt_neox (it reads rotary_emb_base");
  EXPECT_CONTAINS(error_of(std::string(kNeox) + R"(,"partial_rotary_factor":0.5})"),
                  "config.json: partial_rotary_factor: is not read by transformers 5.23.0 for gpt_neox (it reads rotary_pct");
  EXPECT_CONTAINS(error_of(std::string(kNeox) + R"(,"head_dim":8})"), "config.json: head_dim: must equal hidden_size");
  // Values that agree with what is used load.
  const ModelConfig c = parse(std::string(kNeox) +
                              R"(,"rotary_emb_base":500.0,"rope_theta":500.0,"partial_rotary_factor":0.25,"head_dim":16})");
  EXPECT_EQ(c.rope_theta, 500.0);
  EXPECT_EQ(c.rotary_dims, 4);
  EXPECT_EQ(parse(std::string(kNeox) + R"(,"rope_parameters":{"rope_theta":500.0},"rope_theta":500.0})").rope_theta, 500.0);
}

TEST(ConfigAudit, LlamaFamilyRefusesNeoxStyleRopeKeys) {
  for (const char* type : {"llama", "mistral", "qwen2"}) {
    EXPECT_CONTAINS(error_of(as_type(std::string(kLlama) + R"(,"rotary_emb_base":500.0})", type)),
                    "config.json: rotary_emb_base: is not read by transformers 5.23.0 for " + std::string(type));
    EXPECT_CONTAINS(error_of(as_type(std::string(kLlama) + R"(,"rotary_pct":0.5})", type)),
                    "config.json: rotary_pct: is not read by transformers 5.23.0 for " + std::string(type));
    EXPECT_EQ(parse(as_type(std::string(kLlama) + R"(,"rope_theta":500.0,"rotary_emb_base":500.0,"rotary_pct":1.0})", type))
                  .rope_theta,
              500.0)
        << type;
  }
}

TEST(ConfigAudit, RopeScalingWinsOverRopeParametersAsInTransformers) {
  // PreTrainedConfig: rope_parameters = rope_scaling or rope_parameters.
  const ModelConfig c = parse(std::string(kLlama) + R"(,"rope_parameters":{"rope_type":"default","rope_theta":500.0},
    "rope_scaling":{"rope_type":"linear","factor":2.0,"rope_theta":700.0}})");
  EXPECT_EQ(c.rope_scaling.type, RopeScaling::Type::Linear);
  EXPECT_EQ(c.rope_theta, 700.0);
  // An empty rope_scaling counts as absent.
  EXPECT_EQ(parse(std::string(kLlama) + R"(,"rope_parameters":{"rope_theta":500.0},"rope_scaling":{}})").rope_theta, 500.0);
  EXPECT_CONTAINS(error_of(std::string(kLlama) + R"(,"rope_parameters":{"full_attention":{"rope_type":"default"}}})"),
                  "config.json: rope_parameters.full_attention: per-layer-type RoPE parameters are not supported");
}

TEST(ConfigAudit, Llama3OriginalContextFollowsTransformers) {
  const std::string llama3 = std::string(kLlama) +
                             R"(,"rope_parameters":{"rope_type":"llama3","factor":8.0,"low_freq_factor":1.0,"high_freq_factor":4.0)";
  // Missing: max_position_embeddings (64 here).
  EXPECT_EQ(parse(llama3 + "}}").rope_scaling.original_max_positions, 64);
  EXPECT_EQ(parse(llama3 + R"(,"original_max_position_embeddings":16}})").rope_scaling.original_max_positions, 16);
  // A top-level one overrides the one in the dict.
  EXPECT_EQ(parse(llama3 + R"(,"original_max_position_embeddings":16},"original_max_position_embeddings":32})")
                .rope_scaling.original_max_positions,
            32);
}

TEST(ConfigAudit, MistralAndQwen2HaveNoBiasKeys) {
  // Their layers are built without reading attention_bias / mlp_bias.
  EXPECT_CONTAINS(error_of(as_type(std::string(kLlama) + R"(,"attention_bias":true})", "mistral")),
                  "config.json: attention_bias: true is not supported for mistral");
  for (const char* type : {"mistral", "qwen2"})
    EXPECT_CONTAINS(error_of(as_type(std::string(kLlama) + R"(,"mlp_bias":true})", type)),
                    "config.json: mlp_bias: true is not supported for " + std::string(type));
  const ModelConfig m = parse(as_type(std::string(kLlama) + R"(,"attention_bias":false,"mlp_bias":false})", "mistral"));
  EXPECT_FALSE(m.qkv_bias || m.o_bias || m.mlp_bias);
  const ModelConfig q = parse(as_type(std::string(kLlama) + R"(,"attention_bias":false,"mlp_bias":false})", "qwen2"));
  EXPECT_TRUE(q.qkv_bias);  // hard-coded in Qwen2Attention, whatever attention_bias says
  EXPECT_FALSE(q.o_bias || q.mlp_bias);
  // Llama reads both.
  const ModelConfig l = parse(std::string(kLlama) + R"(,"attention_bias":true,"mlp_bias":true})");
  EXPECT_TRUE(l.qkv_bias && l.o_bias && l.mlp_bias);
}

TEST(ConfigAudit, Qwen3ReadsAttentionBiasAndNormsEachHead) {
  // Qwen3Attention builds q, k, v and o with attention_bias, its MLP without
  // biases, and an RMSNorm over each head of q and k.
  const ModelConfig q = parse(as_type(std::string(kLlama) + R"(,"attention_bias":true})", "qwen3"));
  EXPECT_TRUE(q.qkv_bias && q.o_bias);
  EXPECT_FALSE(q.mlp_bias);
  EXPECT_TRUE(q.qk_norm);
  EXPECT_FALSE(parse(as_type(std::string(kLlama) + "}", "qwen3")).qkv_bias);
  EXPECT_FALSE(parse(std::string(kLlama) + "}").qk_norm);
  EXPECT_CONTAINS(error_of(as_type(std::string(kLlama) + R"(,"mlp_bias":true})", "qwen3")),
                  "config.json: mlp_bias: true is not supported for qwen3");
  // Qwen3Config's head_dim defaults to 128, not hidden_size / heads (16 here).
  EXPECT_EQ(parse(as_type(std::string(kLlama) + "}", "qwen3")).head_dim, 128);
  EXPECT_EQ(parse(as_type(std::string(kLlama) + R"(,"head_dim":24})", "qwen3")).head_dim, 24);
  // LlamaConfig reads a null head_dim as hidden_size / heads, as if missing.
  EXPECT_EQ(parse(std::string(kLlama) + R"(,"head_dim":null})").head_dim, 16);
  EXPECT_CONTAINS(error_of(std::string(kLlama) + R"(,"head_dim":0})"), "config.json: head_dim: must be positive");
  // Its window follows Qwen2Config's rules: only with use_sliding_window.
  EXPECT_EQ(parse(as_type(std::string(kLlama) + R"(,"sliding_window":32})", "qwen3")).sliding_window, 0);
}

TEST(ConfigAudit, MissingKeysTakeTransformersClassDefaults) {
  const char* base = R"({"model_type":"llama","hidden_size":256,"num_hidden_layers":2,"num_attention_heads":32,
    "intermediate_size":128,"max_position_embeddings":64,"vocab_size":100)";
  // num_key_value_heads: MistralConfig defaults to 8, Qwen2Config to 32,
  // LlamaConfig to num_attention_heads; an explicit null means
  // num_attention_heads for all.
  EXPECT_EQ(parse(as_type(std::string(base) + "}", "mistral")).n_kv_heads, 8);
  EXPECT_EQ(parse(as_type(std::string(base) + "}", "qwen2")).n_kv_heads, 32);
  EXPECT_EQ(parse(as_type(std::string(base) + "}", "qwen3")).n_kv_heads, 32);
  EXPECT_EQ(parse(std::string(base) + "}").n_kv_heads, 32);
  EXPECT_EQ(parse(as_type(std::string(base) + R"(,"num_key_value_heads":null})", "mistral")).n_kv_heads, 32);
  EXPECT_CONTAINS(error_of(R"({"model_type":"qwen2","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,
    "intermediate_size":128,"max_position_embeddings":64,"vocab_size":100})"),
                  "num_key_value_heads: missing, and transformers 5.23.0's default for qwen2 (32) does not divide");
  // sliding_window: MistralConfig defaults to 4096; null means none.
  EXPECT_EQ(parse(as_type(std::string(kLlama) + "}", "mistral")).sliding_window, 4096);
  EXPECT_EQ(parse(as_type(std::string(kLlama) + R"(,"sliding_window":null})", "mistral")).sliding_window, 0);
  EXPECT_EQ(parse(as_type(std::string(kLlama) + R"(,"sliding_window":32})", "mistral")).sliding_window, 32);
}

TEST(ConfigAudit, UndeclaredSlidingWindowStillWindowsTheCache) {
  // LlamaConfig, GPT2Config and GPTNeoXConfig declare no window, but
  // transformers' DynamicCache(config=...) reads sliding_window from any
  // config and keeps only that many tokens while decoding; kvscope takes it
  // as the model's window (longer runs are refused up front).
  const std::string configs[] = {kLlama, kGpt2, kNeox};
  for (const std::string& base : configs) {
    EXPECT_EQ(parse(base + R"(,"sliding_window":32})").sliding_window, 32) << base;
    EXPECT_EQ(parse(base + R"(,"sliding_window":null})").sliding_window, 0) << base;
    EXPECT_EQ(parse(base + "}").sliding_window, 0) << base;
    // layer_types, when given, decides which layers' caches slide.
    EXPECT_EQ(parse(base + R"(,"sliding_window":32,"layer_types":["full_attention","full_attention"]})").sliding_window, 0);
    EXPECT_CONTAINS(error_of(base + R"(,"sliding_window":32,"layer_types":["sliding_attention","full_attention"]})"),
                    "config.json: layer_types: gives 1 of 2 layers a sliding window");
    EXPECT_CONTAINS(error_of(base + R"(,"attention_chunk_size":16})"), "config.json: attention_chunk_size: is not supported");
  }
}

TEST(ConfigAudit, Qwen2SlidingWindowPerLayer) {
  const std::string q = as_type(std::string(kLlama), "qwen2");
  // use_sliding_window with max_window_layers >= num_hidden_layers: every
  // layer is full attention (Qwen2Config builds layer_types that way).
  EXPECT_EQ(parse(q + R"(,"use_sliding_window":true,"sliding_window":16,"max_window_layers":2})").sliding_window, 0);
  // Every layer sliding: one window for the model, as Mistral's.
  EXPECT_EQ(parse(q + R"(,"use_sliding_window":true,"sliding_window":16,"max_window_layers":0})").sliding_window, 16);
  EXPECT_EQ(parse(q + R"(,"use_sliding_window":true,"max_window_layers":0})").sliding_window, 4096);
  // Some layers only: refused.
  EXPECT_CONTAINS(error_of(q + R"(,"use_sliding_window":true,"sliding_window":16,"max_window_layers":1})"),
                  "config.json: use_sliding_window: gives 1 of 2 layers a sliding window");
  EXPECT_CONTAINS(error_of(q + R"(,"use_sliding_window":true,"sliding_window":16,
    "layer_types":["full_attention","sliding_attention"]})"),
                  "config.json: layer_types: gives 1 of 2 layers a sliding window");
  // Sliding layers without a window make transformers raise.
  EXPECT_CONTAINS(error_of(q + R"(,"layer_types":["sliding_attention","sliding_attention"]})"),
                  "config.json: layer_types: has sliding_attention layers but no sliding window applies "
                  "(use_sliding_window is false");
  EXPECT_CONTAINS(error_of(q + R"(,"layer_types":["full_attention","linear_attention"]})"),
                  "config.json: layer_types: unsupported layer type \"linear_attention\"");
  EXPECT_EQ(parse(q + R"(,"use_sliding_window":false,"sliding_window":16,"max_window_layers":0,
    "layer_types":["full_attention","attention"]})").sliding_window, 0);
}

TEST(ConfigAudit, PretrainingTpHasNoEffect) {
  // transformers 5.23.0's Llama does not read pretraining_tp.
  EXPECT_EQ(parse(std::string(kLlama) + R"(,"pretraining_tp":2})").hidden, 64);
}

// Gemma 3 (transformers 5.23.0's Gemma3TextConfig): class defaults for what
// config.json leaves out, layer kinds from the pattern or layer_types, RoPE
// per layer type in both spellings, and what kvscope cannot compute refused.
const char* kGemma3 = R"({"model_type":"gemma3_text","hidden_size":64,"num_hidden_layers":7,"num_attention_heads":4,
  "intermediate_size":128,"vocab_size":100)";

TEST(ConfigGemma3, MissingKeysTakeTheClassDefaults) {
  const ModelConfig c = parse(std::string(kGemma3) + "}");
  EXPECT_EQ(c.arch, Arch::Gemma3);
  EXPECT_EQ(c.n_kv_heads, 4);
  EXPECT_EQ(c.head_dim, 256);
  EXPECT_EQ(c.max_positions, 131072);
  EXPECT_EQ(c.act, Activation::GeluTanh);
  EXPECT_TRUE(c.gated_mlp && c.qk_norm && c.sandwich_norm && c.tied_embeddings);
  EXPECT_FLOAT_EQ(c.attention_scale(), 1.0f / 16);  // query_pre_attn_scalar 256
  EXPECT_FLOAT_EQ(static_cast<float>(c.embed_scale), 8.0f);  // sqrt(hidden)
  EXPECT_EQ(c.sliding_window, 4096);
  // sliding_window_pattern 6: the 6th layer (1-based) is full, the others slide.
  EXPECT_EQ(c.sliding_layers, (std::vector<uint8_t>{1, 1, 1, 1, 1, 0, 1}));
  EXPECT_EQ(c.window_of(5), 0);
  EXPECT_EQ(c.window_of(6), 4096);
  EXPECT_DOUBLE_EQ(c.rope_theta, 1e6);
  EXPECT_DOUBLE_EQ(c.rope_local_theta, 1e4);
  EXPECT_TRUE(c.uses_local_rope(0));
  EXPECT_FALSE(c.uses_local_rope(5));
  EXPECT_FALSE(c.layers_alike());
}

TEST(ConfigGemma3, RopeAndLayerKindsInBothSpellings) {
  const ModelConfig a = parse(std::string(kGemma3) + R"(,"sliding_window":16,"sliding_window_pattern":2,
    "rope_theta":50000.0,"rope_local_base_freq":500.0,"rope_scaling":{"rope_type":"linear","factor":2.0}})");
  const ModelConfig b = parse(std::string(kGemma3) + R"(,"sliding_window":16,"layer_types":["sliding_attention",
    "full_attention","sliding_attention","full_attention","sliding_attention","full_attention","sliding_attention"],
    "rope_parameters":{"full_attention":{"rope_type":"linear","factor":2.0,"rope_theta":50000.0},
    "sliding_attention":{"rope_type":"default","rope_theta":500.0}}})");
  for (const auto& c : {a, b}) {
    EXPECT_EQ(c.sliding_layers, (std::vector<uint8_t>{1, 0, 1, 0, 1, 0, 1}));
    EXPECT_EQ(c.sliding_window, 16);
    EXPECT_DOUBLE_EQ(c.rope_theta, 50000.0);
    EXPECT_DOUBLE_EQ(c.rope_local_theta, 500.0);
    EXPECT_EQ(c.rope_scaling.type, RopeScaling::Type::Linear);
    EXPECT_DOUBLE_EQ(c.rope_scaling.factor, 2.0);
  }
  // rope_scaling updates the full-attention dict, over its own values.
  const ModelConfig u = parse(std::string(kGemma3) + R"(,"rope_parameters":{"full_attention":{"rope_type":"default",
    "rope_theta":7.0}},"rope_scaling":{"rope_type":"linear","factor":4.0,"rope_theta":9.0}})");
  EXPECT_DOUBLE_EQ(u.rope_theta, 9.0);
  EXPECT_DOUBLE_EQ(u.rope_scaling.factor, 4.0);
  EXPECT_DOUBLE_EQ(u.rope_local_theta, 1e4);
  // No sliding layer: no window at all.
  const ModelConfig full = parse(std::string(kGemma3) + R"(,"sliding_window_pattern":1})");
  EXPECT_EQ(full.sliding_window, 0);
  EXPECT_TRUE(full.layers_alike());
}

TEST(ConfigGemma3, WhatKvscopeDoesNotComputeIsRefusedByName) {
  const std::string g = kGemma3;
  EXPECT_CONTAINS(error_of(g + R"(,"final_logit_softcapping":30.0})"), "config.json: final_logit_softcapping: logit soft-capping");
  EXPECT_CONTAINS(error_of(g + R"(,"attn_logit_softcapping":50.0})"), "config.json: attn_logit_softcapping:");
  EXPECT_CONTAINS(error_of(g + R"(,"use_bidirectional_attention":true})"), "config.json: use_bidirectional_attention:");
  EXPECT_CONTAINS(error_of(g + R"(,"layer_types":["sliding_attention"]})"), "config.json: layer_types: expected a list of 7");
  EXPECT_CONTAINS(error_of(g + R"(,"sliding_window":null})"), "config.json: sliding_window: is null but some layers slide");
  EXPECT_CONTAINS(error_of(g + R"(,"rope_parameters":{"rope_type":"default","rope_theta":10.0}})"),
                  "config.json: rope_parameters.rope_theta: gemma3_text takes one RoPE dict per layer type");
  EXPECT_CONTAINS(error_of(g + R"(,"rope_parameters":{"sliding_attention":{"rope_type":"linear","factor":2.0}}})"),
                  "config.json: rope_parameters.sliding_attention.rope_type: 'linear' is not supported for sliding layers");
  EXPECT_CONTAINS(error_of(g + R"(,"rope_scaling":{"rope_type":"yarn","factor":2.0}})"),
                  "config.json: rope_parameters.full_attention.rope_type: unsupported RoPE type 'yarn'");
  EXPECT_CONTAINS(error_of(g + R"(,"partial_rotary_factor":0.5})"), "config.json: partial_rotary_factor: must be 1");
  EXPECT_CONTAINS(error_of(g + R"(,"hidden_act":"silu"})"), "config.json: hidden_act: is not read by transformers");
  EXPECT_CONTAINS(error_of(g + R"(,"num_key_value_heads":3})"), "config.json: num_key_value_heads: must divide");
}

// ---- GPT-J, OPT, Phi-3 ---------------------------------------------------------------------

const char* kGptj = R"({"model_type":"gptj","n_embd":64,"n_layer":2,"n_head":4,"n_positions":64,"vocab_size":100)";
const char* kOpt = R"({"model_type":"opt","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,
  "ffn_dim":128,"max_position_embeddings":64,"vocab_size":100)";
const char* kPhi3 = R"({"model_type":"phi3","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,
  "intermediate_size":128,"max_position_embeddings":64,"vocab_size":100)";

TEST(ConfigGptj, TheClassDefaultRotaryDimNeedsAHeadOf64) {
  // rotary_dim missing means GPTJConfig's 64, wider than this 16-wide head:
  // transformers would fail on it, kvscope names it.
  EXPECT_CONTAINS(error_of(std::string(kGptj) + "}"),
                  "config.json: rotary_dim: must be a positive even number up to the head size (16)");
  EXPECT_EQ(parse(std::string(kGptj) + R"(,"rotary_dim":null})").rotary_dims, 16);  // null: the whole head
}

TEST(ConfigGptj, RotaryDimAndWhatGptjDoesNotRead) {
  const std::string g = std::string(kGptj) + R"(,"rotary_dim":8)";
  const ModelConfig c = parse(g + "}");
  EXPECT_EQ(c.rotary_dims, 8);
  EXPECT_EQ(c.head_dim, 16);
  EXPECT_EQ(c.intermediate, 256);  // n_inner missing: 4 x n_embd
  EXPECT_TRUE(c.parallel_residual);
  EXPECT_TRUE(c.lm_head_bias);
  EXPECT_FALSE(c.qkv_bias);
  EXPECT_EQ(c.act, Activation::GeluTanh);
  EXPECT_EQ(c.eos_ids, std::vector<int>{50256});  // GPTJConfig's default
  EXPECT_CONTAINS(error_of(std::string(kGptj) + R"(,"rotary_dim":7})"),
                  "config.json: rotary_dim: must be a positive even");
  EXPECT_CONTAINS(error_of(std::string(kGptj) + R"(,"rotary_dim":32})"),
                  "config.json: rotary_dim: must be a positive even");
  EXPECT_CONTAINS(error_of(g + R"(,"rope_theta":500.0})"),
                  "config.json: rope_theta: is not read by transformers 5.23.0 for gptj");
  EXPECT_CONTAINS(error_of(g + R"(,"rope_scaling":{"rope_type":"linear","factor":2.0}})"),
                  "config.json: rope_scaling: is not read by transformers 5.23.0 for gptj");
  EXPECT_CONTAINS(error_of(g + R"(,"activation_function":"quick_gelu"})"),
                  "config.json: activation_function: unsupported activation 'quick_gelu'");
}

TEST(ConfigOpt, BothNormOrdersProjectionAndRefusals) {
  const ModelConfig pre = parse(std::string(kOpt) + "}");
  EXPECT_EQ(pre.arch, Arch::OPT);
  EXPECT_FALSE(pre.post_norm);
  EXPECT_EQ(pre.word_embed_dim, 0);
  EXPECT_EQ(pre.position_offset, 2);
  EXPECT_TRUE(pre.learned_positions);
  EXPECT_EQ(pre.act, Activation::Relu);
  EXPECT_TRUE(pre.tied_embeddings);
  EXPECT_TRUE(pre.qkv_bias && pre.o_bias && pre.mlp_bias);
  EXPECT_EQ(pre.bos_id, 2);
  const ModelConfig post =
      parse(std::string(kOpt) + R"(,"do_layer_norm_before":false,"word_embed_proj_dim":32,"enable_bias":false})");
  EXPECT_TRUE(post.post_norm);
  EXPECT_EQ(post.word_embed_dim, 32);
  EXPECT_EQ(post.embed_width(), 32);
  EXPECT_FALSE(post.qkv_bias || post.mlp_bias);
  // word_embed_proj_dim equal to hidden_size: no projection (OPT-125m writes it so).
  EXPECT_EQ(parse(std::string(kOpt) + R"(,"word_embed_proj_dim":64})").word_embed_dim, 0);
  EXPECT_CONTAINS(error_of(std::string(kOpt) + R"(,"_remove_final_layer_norm":true})"),
                  "config.json: _remove_final_layer_norm: true is not supported");
  EXPECT_CONTAINS(error_of(std::string(kOpt) + R"(,"layer_norm_eps":1e-6})"),
                  "config.json: layer_norm_eps: is not read by transformers 5.23.0 for opt");
  EXPECT_CONTAINS(error_of(std::string(kOpt) + R"(,"ffn_dim":0})"), "config.json: ffn_dim: must be positive");
}

TEST(ConfigPhi3, PartialRotaryWindowAndLongropeRefused) {
  const ModelConfig c = parse(std::string(kPhi3) + R"(,"partial_rotary_factor":0.5,"sliding_window":32})");
  EXPECT_EQ(c.arch, Arch::Phi3);
  EXPECT_EQ(c.rotary_dims, 8);  // Phi3 rotates part of the head, unlike 5.23.0's Llama
  EXPECT_EQ(c.sliding_window, 32);
  EXPECT_EQ(c.n_kv_heads, 4);   // missing: num_attention_heads
  EXPECT_EQ(c.norm_eps, 1e-5);  // Phi3Config's default
  EXPECT_EQ(c.eos_ids, std::vector<int>{32000});
  EXPECT_EQ(parse(std::string(kPhi3) + R"(,"sliding_window":null})").sliding_window, 0);
  for (const char* t : {"longrope", "su", "yarn", "linear"})
    EXPECT_CONTAINS(error_of(std::string(kPhi3) + R"(,"rope_scaling":{"type":")" + t +
                             R"(","short_factor":[1],"long_factor":[1]}})"),
                    std::string("config.json: rope_scaling.type: unsupported RoPE type '") + t + "' for phi3");
  EXPECT_CONTAINS(error_of(std::string(kPhi3) + R"(,"attention_bias":true})"),
                  "config.json: attention_bias: true is not supported for phi3");
  EXPECT_CONTAINS(error_of(std::string(kPhi3) + R"(,"hidden_act":"gelu"})"),
                  "config.json: hidden_act: 'gelu' is not supported for phi3");
}

const char* kMpt = R"({"model_type":"mpt","d_model":48,"n_heads":6,"n_layers":2,"max_seq_len":64,"vocab_size":100)";

TEST(ConfigMpt, AlibiSlopesAsTransformersBuildsThem) {
  const ModelConfig c = parse(std::string(kMpt) + "}");
  EXPECT_EQ(c.arch, Arch::MPT);
  EXPECT_EQ(c.rope, RopeStyle::None);
  EXPECT_FALSE(c.learned_positions);
  EXPECT_EQ(c.intermediate, 192);
  EXPECT_EQ(c.act, Activation::GeluErf);
  EXPECT_TRUE(c.tied_embeddings);
  // 6 heads: slopes of the 8-head set 2^-1 .. 2^-8, the odd ones (2^-2,
  // 2^-4, 2^-6, 2^-8) first, then the even ones, cut to 6.
  EXPECT_EQ(c.alibi_slopes, (std::vector<float>{0.25f, 0.0625f, 0.015625f, 0.00390625f, 0.5f, 0.125f}));
  EXPECT_EQ(parse(R"({"model_type":"mpt","d_model":64,"n_heads":4,"n_layers":2,"max_seq_len":64,"vocab_size":100})")
                .alibi_slopes,
            (std::vector<float>{0.25f, 0.0625f, 0.015625f, 0.00390625f}));
  EXPECT_FLOAT_EQ(c.attention_scale(), static_cast<float>(1 / std::sqrt(8.0)));
  const ModelConfig s = parse(std::string(kMpt) + R"(,"attn_config":{"softmax_scale":0.2,"clip_qkv":3}})");
  EXPECT_EQ(s.attention_scale(), 0.2f);
  EXPECT_EQ(s.clip_qkv, 3.0f);
}

TEST(ConfigMpt, WhatTransformersDoesNotReadIsRefusedByName) {
  const std::string m = kMpt;
  EXPECT_CONTAINS(error_of(m + R"(,"attn_config":{"alibi_bias_max":16}})"),
                  "config.json: attn_config.alibi_bias_max: is not read by transformers 5.23.0");
  EXPECT_CONTAINS(error_of(m + R"(,"attn_config":{"qk_ln":true}})"),
                  "config.json: attn_config.qk_ln: true is not supported");
  EXPECT_CONTAINS(error_of(m + R"(,"attn_config":{"attn_type":"multiquery_attention"}})"),
                  "config.json: attn_config.attn_type: 'multiquery_attention' is not supported");
  EXPECT_CONTAINS(error_of(m + R"(,"attn_config":{"alibi":false}})"),
                  "config.json: attn_config.alibi: false is not supported");
  EXPECT_CONTAINS(error_of(m + R"(,"expansion_ratio":2})"),
                  "config.json: expansion_ratio: is not read by transformers 5.23.0");
  EXPECT_CONTAINS(error_of(m + R"(,"no_bias":false})"), "config.json: no_bias: false is not supported");
  EXPECT_CONTAINS(error_of(m + R"(,"logit_scale":0.5})"), "config.json: logit_scale: is not read");
  EXPECT_CONTAINS(error_of(m + R"(,"norm_type":"rmsnorm"})"), "config.json: norm_type: 'rmsnorm' is not supported");
  // The defaults and their explicit spellings load.
  parse(m + R"(,"expansion_ratio":4,"no_bias":true,"logit_scale":null,"learned_pos_emb":true,
    "attn_config":{"alibi":true,"alibi_bias_max":8,"softmax_scale":null,"clip_qkv":null}})");
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

// Values transformers would compute NaNs or a division by zero from, and
// two spellings of one setting that disagree, are refused by name.
TEST(ConfigAudit, NumbersThatMakeNaNsAndDisagreeingSpellingsAreRefused) {
  const std::string llama = kLlama, gpt2 = kGpt2, mpt = kMpt;
  EXPECT_NE(error_of(llama + R"(,"rms_norm_eps":-1.0})").find("rms_norm_eps: must be a finite number >= 0, got -1"),
            std::string::npos);
  EXPECT_NE(error_of(gpt2 + R"(,"layer_norm_epsilon":-1e-5})").find("layer_norm_epsilon: must be a finite number >= 0"),
            std::string::npos);
  EXPECT_NE(error_of(mpt + R"(,"layer_norm_epsilon":-2})").find("layer_norm_epsilon: must be a finite number >= 0"),
            std::string::npos);
  EXPECT_EQ(parse(llama + R"(,"rms_norm_eps":0})").norm_eps, 0.0);  // zero is transformers' to compute, and ours
  const std::string llama3 = llama + R"(,"rope_parameters":{"rope_type":"llama3","factor":8.0,"high_freq_factor":4.0,)";
  EXPECT_NE(error_of(llama3 + R"("low_freq_factor":0}})").find("low_freq_factor: must be positive"), std::string::npos);
  EXPECT_NE(error_of(llama3 + R"("low_freq_factor":-1}})").find("low_freq_factor: must be positive"),
            std::string::npos);
  EXPECT_NE(error_of(mpt + R"(,"hidden_size":64})").find("hidden_size: says 64 but d_model says 48"), std::string::npos)
      << error_of(mpt + R"(,"hidden_size":64})");
  EXPECT_NE(error_of(mpt + R"(,"num_attention_heads":3})").find("num_attention_heads: says 3 but n_heads says 6"),
            std::string::npos);
  EXPECT_NE(error_of(gpt2 + R"(,"hidden_size":48})").find("hidden_size: says 48 but n_embd says 64"),
            std::string::npos);
  // The same value under both spellings is one setting; GPT-2's n_ctx,
  // which transformers does not read, is not compared.
  EXPECT_EQ(parse(mpt + R"(,"hidden_size":48,"num_attention_heads":6})").hidden, 48);
  EXPECT_EQ(parse(gpt2 + R"(,"n_ctx":1024})").max_positions, 64);
  EXPECT_NE(error_of(llama + R"(,"torch_dtype":"float32","dtype":"int8"})").find("dtype: unsupported dtype 'int8'"),
            std::string::npos);
  EXPECT_NE(error_of(llama + R"(,"torch_dtype":"float32","dtype":"bfloat16"})")
                .find("dtype: 'bfloat16' but torch_dtype says 'float32'"),
            std::string::npos);
  // A bad RoPE base is named by the key it came from.
  EXPECT_NE(error_of(std::string(kNeox) + R"(,"rotary_emb_base":-1})").find("rotary_emb_base: must be positive"),
            std::string::npos)
      << error_of(std::string(kNeox) + R"(,"rotary_emb_base":-1})");
  EXPECT_NE(
      error_of(std::string(kGemma3) + R"(,"rope_local_base_freq":-5})").find("rope_local_base_freq: must be positive"),
      std::string::npos);
  // The cache every architecture builds would keep chunks of it.
  for (const char* arch : {kPhi3, kGemma3, kMpt, kOpt})
    EXPECT_NE(
        error_of(std::string(arch) + R"(,"attention_chunk_size":16})").find("attention_chunk_size: is not supported"),
        std::string::npos)
        << arch;
  EXPECT_EQ(parse(std::string(kPhi3) + R"(,"attention_chunk_size":null})").arch, Arch::Phi3);
  EXPECT_NE(error_of(std::string(kGemma3) + R"(,"rope_scaling":{"full_attention":{"rope_type":"default"}}})")
                .find("rope_scaling: 'full_attention' is a dict"),
            std::string::npos);
  EXPECT_NE(error_of(std::string(kOpt) + R"(,"do_layer_norm_before":false,"_remove_final_layer_norm":"true"})")
                .find("_remove_final_layer_norm: expected true or false"),
            std::string::npos);
}

}  // namespace
}  // namespace kvscope
