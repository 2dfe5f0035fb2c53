// Loading model directories: each kind of bad checkpoint is refused with one
// message naming the file and the tensor or field.
#include <gtest/gtest.h>

#include "common/error.h"
#include "io/json_file.h"
#include "io/safetensors.h"
#include "io/safetensors_writer.h"
#include "model/loader.h"
#include "test_util.h"

namespace kvscope {
namespace {

namespace fs = std::filesystem;

// A copy of a golden model directory the test may damage.
fs::path copy_model(const test::TempDir& dir, const std::string& name) {
  const fs::path dst = dir / name;
  fs::copy(test::model_dir(name), dst, fs::copy_options::recursive);
  return dst;
}

std::vector<SafetensorsEntry> entries_of(const fs::path& file) {
  const auto f = SafetensorsFile::open(file);
  std::vector<SafetensorsEntry> out;
  for (const auto& t : f.tensors()) {
    SafetensorsEntry e{t.name, t.stored_dtype, t.shape, {}};
    e.bytes.assign(reinterpret_cast<const unsigned char*>(t.data), reinterpret_cast<const unsigned char*>(t.data) + t.nbytes);
    out.push_back(std::move(e));
  }
  return out;
}

void edit_config(const fs::path& dir, const std::function<void(nlohmann::json&)>& fn) {
  auto j = read_json_file(dir / "config.json");
  fn(j);
  test::write_file(dir / "config.json", j.dump());
}

std::string load_error(const fs::path& dir) {
  try {
    load_model_files(dir);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

#define EXPECT_CONTAINS(hay, needle) EXPECT_NE((hay).find(needle), std::string::npos) << (hay)

TEST(Loader, LoadsEveryGoldenModel) {
  for (const char* name : {"gpt2", "gpt_neox_parallel", "gpt_neox_sequential", "llama_gqa", "llama3_mqa_bf16",
                           "qwen2_fp16_sharded", "mistral", "llama_mlkv", "gemma3", "qwen3_bf16", "gptj_fp16", "opt",
                           "opt_postnorm_proj_bf16", "phi3", "mpt", "mpt_scale_bf16"}) {
    const auto m = load_model_files(test::model_dir(name));
    EXPECT_EQ(m.weights.layers.size(), size_t(m.config.n_layers)) << name;
  }
  const auto mlkv = load_model_files(test::model_dir("llama_mlkv"));
  EXPECT_FALSE(mlkv.weights.layers[0].wk.empty());
  EXPECT_TRUE(mlkv.weights.layers[1].wk.empty());  // layer 1 reads layer 0's KV
  EXPECT_FALSE(mlkv.weights.layers[2].wk.empty());
}

TEST(Loader, MissingDirectoryAndFiles) {
  EXPECT_CONTAINS(load_error("/nonexistent/model"),
                  "/nonexistent/model: not found (a model is a Hugging Face model folder or a .gguf file)");
  test::TempDir dir;
  const auto m = copy_model(dir, "llama_gqa");
  fs::remove(m / "model.safetensors");
  EXPECT_CONTAINS(load_error(m), "no model.safetensors or model.safetensors.index.json");
  fs::remove(m / "config.json");
  EXPECT_CONTAINS(load_error(m), "config.json: file not found");
}

TEST(Loader, TruncatedSafetensors) {
  test::TempDir dir;
  const auto m = copy_model(dir, "llama_gqa");
  const std::string bytes = test::read_file(m / "model.safetensors");
  test::write_file(m / "model.safetensors", bytes.substr(0, bytes.size() / 2));
  EXPECT_CONTAINS(load_error(m), "model.safetensors: tensor '");
  EXPECT_CONTAINS(load_error(m), "truncated");
}

TEST(Loader, MissingTensor) {
  test::TempDir dir;
  const auto m = copy_model(dir, "llama_gqa");
  auto e = entries_of(m / "model.safetensors");
  std::erase_if(e, [](const SafetensorsEntry& t) { return t.name == "model.layers.1.mlp.up_proj.weight"; });
  write_safetensors(m / "model.safetensors", e);
  EXPECT_CONTAINS(load_error(m), "tensor 'model.layers.1.mlp.up_proj.weight': missing");
}

TEST(Loader, UnexpectedTensor) {
  test::TempDir dir;
  const auto m = copy_model(dir, "gpt_neox_parallel");
  auto e = entries_of(m / "model.safetensors");
  e.push_back({"gpt_neox.layers.0.attention.extra.weight", "F32", {2}, std::vector<unsigned char>(8)});
  write_safetensors(m / "model.safetensors", e);
  EXPECT_CONTAINS(load_error(m), "tensor 'gpt_neox.layers.0.attention.extra.weight': unexpected");
}

TEST(Loader, ShapeDisagreeingWithConfig) {
  test::TempDir dir;
  const auto m = copy_model(dir, "llama_gqa");
  edit_config(m, [](nlohmann::json& j) { j["intermediate_size"] = 100; });
  const std::string e = load_error(m);
  EXPECT_CONTAINS(e, "model.safetensors: tensor 'model.layers.0.mlp.gate_proj.weight': shape [96, 48]");
  EXPECT_CONTAINS(e, "disagrees with");
  EXPECT_CONTAINS(e, "config.json (expected [100, 48]");
}

TEST(Loader, DtypeDisagreeingWithConfig) {
  test::TempDir dir;
  const auto m = copy_model(dir, "gpt2");
  edit_config(m, [](nlohmann::json& j) { j["dtype"] = "bfloat16"; });
  EXPECT_CONTAINS(load_error(m), "dtype F32 disagrees with");
  EXPECT_CONTAINS(load_error(m), "(torch_dtype says BF16)");
}

TEST(Loader, NonFloatWeight) {
  test::TempDir dir;
  const auto m = copy_model(dir, "gpt2");
  auto e = entries_of(m / "model.safetensors");
  for (auto& t : e)
    if (t.name == "transformer.ln_f.bias") t.dtype = "I32";
  write_safetensors(m / "model.safetensors", e);
  EXPECT_CONTAINS(load_error(m), "tensor 'transformer.ln_f.bias': dtype I32 is not a float type");
}

TEST(Loader, UnknownModelTypeAndMalformedConfig) {
  test::TempDir dir;
  const auto m = copy_model(dir, "gpt2");
  edit_config(m, [](nlohmann::json& j) { j["model_type"] = "t5"; });
  EXPECT_CONTAINS(load_error(m), "config.json: model_type: unsupported model type 't5' (supported: gemma3_text, gpt2");
  test::write_file(m / "config.json", "{ not json");
  EXPECT_CONTAINS(load_error(m), "config.json: invalid JSON at line 1");
}

TEST(Loader, StoredMlkvIsOnlyReadForLlamaFamilies) {
  test::TempDir dir;
  const auto m = copy_model(dir, "gpt_neox_parallel");
  edit_config(m, [](nlohmann::json& j) { j["num_key_value_layers"] = 1; });
  EXPECT_CONTAINS(load_error(m), "num_key_value_layers");
}

TEST(Loader, MlkvCheckpointWithExtraKvIsRefused) {
  test::TempDir dir;
  const auto m = copy_model(dir, "llama_mlkv");
  auto e = entries_of(m / "model.safetensors");
  for (const auto& t : std::vector<SafetensorsEntry>(e))
    if (t.name == "model.layers.0.self_attn.k_proj.weight") e.push_back({"model.layers.1.self_attn.k_proj.weight", t.dtype, t.shape, t.bytes});
  write_safetensors(m / "model.safetensors", e);
  EXPECT_CONTAINS(load_error(m), "tensor 'model.layers.1.self_attn.k_proj.weight': unexpected");
}

}  // namespace
}  // namespace kvscope
