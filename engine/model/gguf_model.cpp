#include "model/gguf_model.h"

#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <utility>

#include "common/error.h"
#include "common/number_text.h"
#include "io/gguf_dequant.h"
#include "io/safetensors.h"
#include "model/config_parse.h"

namespace kvscope {
namespace fs = std::filesystem;

namespace {

// GGUF architecture names kvscope reads, with the model_type transformers
// gives them.
std::string model_type_of(const GgufFile& f, const std::string& arch) {
  if (arch == "llama") {
    // transformers' own rule: a llama file whose general.name is exactly
    // "mistral" loads as Mistral (llama.cpp writes both as "llama").
    return f.get_string_if("general.name").value_or("") == "mistral" ? "mistral" : "llama";
  }
  if (arch == "qwen2") return "qwen2";
  if (arch == "qwen3") return "qwen3";
  if (arch == "phi3") return "phi3";
  if (arch == "gpt2") return "gpt2";
  if (arch == "gptneox") return "gpt_neox";
  if (arch == "gemma3") return "gemma3_text";  // the file holds the text model only
  if (arch == "mpt") return "mpt";
  throw Error(f.source(), "general.architecture",
              "architecture \"" + arch +
                  "\" is not supported in GGUF files (llama, qwen2, qwen3, phi3, gpt2, gptneox, gemma3, mpt are)");
}

// Metadata that would make llama.cpp compute something transformers does not
// (or the reverse): refused by name rather than run one way or the other.
void refuse_unsupported_keys(const GgufFile& f, const std::string& arch) {
  for (const auto& [key, value] : f.metadata()) {
    if (key.rfind(arch + ".rope.scaling.", 0) == 0 && !(key.ends_with(".type") && value.type == GgufValueType::String &&
                                                       (value.string == "none" || value.string.empty())))
      throw Error(f.source(), key, "RoPE scaling in GGUF files is not supported (transformers ignores it, llama.cpp applies it)");
    if (key == arch + ".expert_count" && value.is_integer() && value.integer > 0)
      throw Error(f.source(), key, "mixture-of-experts models are not supported");
    // Gemma 3's window is read (transformers maps it), and Phi-3's (see
    // gguf_model_config_json); elsewhere llama.cpp would slide where
    // transformers does not.
    if (key == arch + ".attention.sliding_window" && arch != "gemma3" && arch != "phi3")
      throw Error(f.source(), key, "sliding-window attention from GGUF metadata is not supported");
    if (key == arch + ".attn_logit_softcapping" || key == arch + ".final_logit_softcapping")
      throw Error(f.source(), key, "logit soft-capping is not supported (transformers ignores it in GGUF files)");
  }
  if (f.find_tensor("rope_freqs.weight") && arch != "llama")
    throw Error(f.source(), "rope_freqs.weight", "RoPE frequency factors are read for llama files only");
}

// rope_freqs.weight: one divisor per rotary frequency, llama.cpp's rendering
// of a checkpoint's llama3 rope_scaling (convert_hf_to_gguf.py writes
// factor, 1, or 1 / ((1 - smooth) / factor + smooth) per frequency), so
// the rotation equals transformers' on the folder the file came from.
std::vector<float> rope_freq_factors(const GgufFile& f, const ModelConfig& cfg) {
  const GgufTensorInfo* t = f.find_tensor("rope_freqs.weight");
  if (!t) return {};
  const std::size_t want = static_cast<std::size_t>(cfg.rotary_dims / 2);
  if (t->dims.size() != 1 || static_cast<std::size_t>(t->numel()) != want)
    throw Error(f.source(), "rope_freqs.weight",
                "expected " + std::to_string(want) + " factors (one per rotary frequency), got a tensor of " +
                    std::to_string(t->numel()));
  if (cfg.rope_scaling.type != RopeScaling::Type::None)
    throw Error(f.source(), "rope_freqs.weight",
                "frequency factors together with a RoPE scaling type are not supported");
  std::vector<float> v(want);
  dequantize_ggml(t->type, t->data, t->numel(), v.data());
  for (float x : v)
    if (!(std::isfinite(x) && x > 0))
      throw Error(f.source(), "rope_freqs.weight", "factors must be finite and positive");
  return v;
}

// HF name of a GGUF tensor (llama.cpp's names, as gguf-py's tensor map
// pairs them with transformers' for each architecture).
enum class GgufNames { Llama, Gpt2, GptNeox, Gemma3, Qwen3, Phi3, Mpt };

using NamePairs = std::vector<std::pair<std::string, std::string>>;
// Per architecture: whole-name pairs, the block-part pairs, and the HF
// prefix of a layer.
struct TensorNames {
  NamePairs top, parts;
  const char* layers;
};

const TensorNames& tensor_names(GgufNames kind) {
  using Names = TensorNames;
  static const Names llama = {
      {{"token_embd.weight", "model.embed_tokens.weight"},
       {"output_norm.weight", "model.norm.weight"},
       {"output.weight", "lm_head.weight"}},
      {{"attn_norm.", "input_layernorm."}, {"ffn_norm.", "post_attention_layernorm."},
       {"attn_q.", "self_attn.q_proj."},   {"attn_k.", "self_attn.k_proj."},
       {"attn_v.", "self_attn.v_proj."},   {"attn_output.", "self_attn.o_proj."},
       {"ffn_gate.", "mlp.gate_proj."},    {"ffn_up.", "mlp.up_proj."},
       {"ffn_down.", "mlp.down_proj."}},
      "model.layers."};
  static const Names gpt2 = {
      {{"token_embd.weight", "transformer.wte.weight"},
       {"position_embd.weight", "transformer.wpe.weight"},
       {"output_norm.weight", "transformer.ln_f.weight"},
       {"output_norm.bias", "transformer.ln_f.bias"},
       {"output.weight", "lm_head.weight"}},
      {{"attn_norm.", "ln_1."},
       {"ffn_norm.", "ln_2."},
       {"attn_qkv.", "attn.c_attn."},
       {"attn_output.", "attn.c_proj."},
       {"ffn_up.", "mlp.c_fc."},
       {"ffn_down.", "mlp.c_proj."}},
      "transformer.h."};
  static const Names neox = {
      {{"token_embd.weight", "gpt_neox.embed_in.weight"},
       {"output_norm.weight", "gpt_neox.final_layer_norm.weight"},
       {"output_norm.bias", "gpt_neox.final_layer_norm.bias"},
       {"output.weight", "embed_out.weight"}},
      {{"attn_norm.", "input_layernorm."},
       {"ffn_norm.", "post_attention_layernorm."},
       {"attn_qkv.", "attention.query_key_value."},
       {"attn_output.", "attention.dense."},
       {"ffn_up.", "mlp.dense_h_to_4h."},
       {"ffn_down.", "mlp.dense_4h_to_h."}},
      "gpt_neox.layers."};
  // Gemma 3: llama's names plus the head norms and the norms around each
  // block; its ffn_norm is the MLP's input norm (pre_feedforward).
  static const Names gemma3 = {
      llama.top,
      {{"attn_norm.", "input_layernorm."},
       {"attn_q_norm.", "self_attn.q_norm."},
       {"attn_k_norm.", "self_attn.k_norm."},
       {"attn_q.", "self_attn.q_proj."},
       {"attn_k.", "self_attn.k_proj."},
       {"attn_v.", "self_attn.v_proj."},
       {"attn_output.", "self_attn.o_proj."},
       {"post_attention_norm.", "post_attention_layernorm."},
       {"ffn_norm.", "pre_feedforward_layernorm."},
       {"post_ffw_norm.", "post_feedforward_layernorm."},
       {"ffn_gate.", "mlp.gate_proj."},
       {"ffn_up.", "mlp.up_proj."},
       {"ffn_down.", "mlp.down_proj."}},
      "model.layers."};
  // Qwen3: llama's names plus the per-head q/k norms.
  static const Names qwen3 = [] {
    Names n = llama;
    n.parts.insert(n.parts.end(), {{"attn_q_norm.", "self_attn.q_norm."}, {"attn_k_norm.", "self_attn.k_norm."}});
    return n;
  }();
  // Phi-3: q, k, v fused in attn_qkv, gate and up in ffn_up, as in its
  // Hugging Face checkpoints.
  static const Names phi3 = {llama.top,
                             {{"attn_norm.", "input_layernorm."},
                              {"ffn_norm.", "post_attention_layernorm."},
                              {"attn_qkv.", "self_attn.qkv_proj."},
                              {"attn_output.", "self_attn.o_proj."},
                              {"ffn_up.", "mlp.gate_up_proj."},
                              {"ffn_down.", "mlp.down_proj."}},
                             "model.layers."};
  // MPT: its fused Wqkv is [q | k | v] in both, so nothing is reordered.
  static const Names mpt = {{{"token_embd.weight", "transformer.wte.weight"},
                             {"output_norm.weight", "transformer.norm_f.weight"},
                             {"output.weight", "lm_head.weight"}},
                            {{"attn_norm.", "norm_1."},
                             {"ffn_norm.", "norm_2."},
                             {"attn_qkv.", "attn.Wqkv."},
                             {"attn_output.", "attn.out_proj."},
                             {"ffn_up.", "ffn.up_proj."},
                             {"ffn_down.", "ffn.down_proj."}},
                            "transformer.blocks."};
  return kind == GgufNames::Gpt2      ? gpt2
         : kind == GgufNames::Mpt     ? mpt
         : kind == GgufNames::GptNeox ? neox
         : kind == GgufNames::Gemma3  ? gemma3
         : kind == GgufNames::Qwen3   ? qwen3
         : kind == GgufNames::Phi3    ? phi3
                                      : llama;
}

std::string hf_tensor_name(const std::string& g, GgufNames kind) {
  const TensorNames& names = tensor_names(kind);
  const NamePairs &top = names.top, &parts = names.parts;
  const char* layers = names.layers;
  for (const auto& [from, to] : top)
    if (g == from) return to;
  if (g.rfind("blk.", 0) != 0) return g;
  const auto dot = g.find('.', 4);
  if (dot == std::string::npos) return g;
  const std::string layer = g.substr(4, dot - 4), rest = g.substr(dot + 1);
  for (const auto& [from, to] : parts)
    if (rest.compare(0, from.size(), from) == 0) return layers + layer + "." + to + rest.substr(from.size());
  return g;  // left for the architecture mapping to report as unexpected
}

// The inverse, for messages: the name llama.cpp's file has (or would have)
// for a transformers tensor name.
std::string gguf_tensor_name(const std::string& hf, GgufNames kind) {
  const TensorNames& names = tensor_names(kind);
  for (const auto& [gguf, to] : names.top)
    if (hf == to) return gguf;
  const std::string layers = names.layers;
  if (hf.rfind(layers, 0) != 0) return hf;
  const auto dot = hf.find('.', layers.size());
  if (dot == std::string::npos) return hf;
  const std::string layer = hf.substr(layers.size(), dot - layers.size()), rest = hf.substr(dot + 1);
  for (const auto& [from, to] : names.parts)
    if (rest.compare(0, to.size(), to) == 0) return "blk." + layer + "." + from + rest.substr(to.size());
  return hf;
}

// GPT-2's Conv1D weights are [in, out]; llama.cpp stores them as [out, in]
// (transformers transposes them back on load).
bool is_gpt2_conv1d(const std::string& hf) {
  for (const char* s : {"attn.c_attn.weight", "attn.c_proj.weight", "mlp.c_fc.weight", "mlp.c_proj.weight"})
    if (hf.ends_with(s)) return true;
  return false;
}

void transpose_in_place(std::vector<float>& w, int64_t rows, int64_t cols) {
  std::vector<float> out(w.size());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) out[c * rows + r] = w[r * cols + c];
  w.swap(out);
}

// llama.cpp's converter interleaves the two rotary halves of every head's
// rows of q_proj and k_proj (for its RoPE kernel); transformers undoes it on
// load, and so does this. Row h*hd + s*(hd/2) + p comes from row
// h*hd + 2p + s. (order[i]: the stored row that becomes row i.)
std::vector<int64_t> rotary_row_order(int64_t rows, int64_t heads, const std::string& source, const std::string& name) {
  if (heads <= 0 || rows % (2 * heads) != 0)
    throw Error(source, name, std::to_string(rows) + " rows cannot be split into " + std::to_string(heads) +
                                  " heads of even size");
  const int64_t hd = rows / heads, half = hd / 2;
  std::vector<int64_t> order(static_cast<std::size_t>(rows));
  for (int64_t h = 0; h < heads; ++h)
    for (int64_t p = 0; p < half; ++p)
      for (int64_t s = 0; s < 2; ++s) order[h * hd + s * half + p] = h * hd + 2 * p + s;
  return order;
}

// llama.cpp's converter regroups GPT-NeoX's fused query_key_value from
// transformers' per-head order [head][q, k, v][head_dim] into [q | k | v],
// each [head][head_dim] (rows of the weight, entries of the bias); this puts
// the rows back where transformers keeps them. Row h*3*hd + part*hd + r
// comes from row part*d + h*hd + r.
std::vector<int64_t> qkv_row_order(int64_t rows, int64_t heads, const std::string& source, const std::string& name) {
  if (heads <= 0 || rows % (3 * heads) != 0)
    throw Error(source, name, std::to_string(rows) + " rows cannot be split into q, k and v of " +
                                  std::to_string(heads) + " heads");
  const int64_t hd = rows / (3 * heads), d = heads * hd;
  std::vector<int64_t> order(static_cast<std::size_t>(rows));
  for (int64_t part = 0; part < 3; ++part)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t r = 0; r < hd; ++r) order[h * 3 * hd + part * hd + r] = part * d + h * hd + r;
  return order;
}

// Rows of `row_bytes` each, reordered: row i of the result is row order[i]
// of `src`. Works alike on floats and on a row's GGUF blocks.
template <class T>
std::vector<T> permute_rows(const T* src, std::size_t row_elems, const std::vector<int64_t>& order) {
  std::vector<T> out(order.size() * row_elems);
  for (std::size_t i = 0; i < order.size(); ++i)
    std::copy(src + order[i] * row_elems, src + (order[i] + 1) * row_elems, out.data() + i * row_elems);
  return out;
}

struct OwnedTensors {
  std::shared_ptr<const MappedFile> mapping;
  std::vector<std::vector<float>> buffers;
  std::vector<std::vector<std::byte>> block_buffers;  // reordered rows of blocks
};

// The config.json being built from a file's metadata, and where each field
// came from: the GGUF key (or tensor) it was read or derived from, so that
// a field the configuration parser refuses is named as the file spells it
// ("llama.context_length: missing"), not by a transformers name the file
// never contained. The one place that maps a key to a field records it.
class ConfigFromKeys {
 public:
  ConfigFromKeys(const GgufFile& f, std::string arch) : f_(f), arch_(std::move(arch)) {}
  const GgufFile& file() const { return f_; }
  std::string key(const char* k) const { return arch_ + "." + k; }

  // json[field] = value, which came from `origin` (a full key or tensor name).
  void set_from(const std::string& field, const std::string& origin, nlohmann::json value) {
    json[field] = std::move(value);
    origins_[field] = origin;
  }
  // The same from the architecture's key k.
  void set(const std::string& field, const char* k, nlohmann::json value) { set_from(field, key(k), std::move(value)); }
  // field = the integer of key k (which must be present), or where present.
  // An absent key is still the field's origin: "llama.context_length:
  // missing" where the parser needs the field.
  int64_t set_int(const std::string& field, const char* k) {
    const int64_t v = f_.get_int(key(k));
    set(field, k, v);
    return v;
  }
  void set_int_if(const std::string& field, const char* k) {
    note_origin(field, k);
    if (auto v = f_.get_int_if(key(k))) set(field, k, *v);
  }
  void set_real_if(const std::string& field, const char* k) {
    note_origin(field, k);
    if (auto v = f_.get_real_if(key(k))) set(field, k, *v);
  }
  // `field` (a nested one as the parser names it: "rope_parameters.rope_theta")
  // comes from key k.
  void note_origin(const std::string& field, const char* k) { origins_[field] = key(k); }

  // The key or tensor `field` came from, or the field itself when it was
  // not read from the file.
  std::string origin_of(const std::string& field) const {
    const auto it = origins_.find(field);
    return it == origins_.end() ? field : it->second;
  }

  nlohmann::json json;

 private:
  const GgufFile& f_;
  std::string arch_;
  std::map<std::string, std::string> origins_;
};

// Every architecture: a tied head when the file has no output.weight, and
// the BOS / EOS ids of the vocabulary.
void add_head_and_special_ids(ConfigFromKeys& c) {
  const GgufFile& f = c.file();
  c.set_from("tie_word_embeddings", "output.weight", f.find_tensor("output.weight") == nullptr);
  if (auto b = f.get_int_if("tokenizer.ggml.bos_token_id"))
    c.set_from("bos_token_id", "tokenizer.ggml.bos_token_id", *b);
  if (auto e = f.get_int_if("tokenizer.ggml.eos_token_id"))
    c.set_from("eos_token_id", "tokenizer.ggml.eos_token_id", *e);
}

// The head count of an architecture with one K and V per query head
// (GPT-NeoX, MPT): it must divide embedding_length `d`, and a head_count_kv,
// if the file has one, must equal it (`why` says what would differ).
int64_t multi_head_count(const ConfigFromKeys& c, int64_t d, const std::string& why) {
  const GgufFile& f = c.file();
  const int64_t heads = f.get_int(c.key("attention.head_count"));
  if (heads <= 0 || d % heads != 0)
    throw Error(f.source(), c.key("attention.head_count"),
                std::to_string(heads) + " does not divide embedding_length " + std::to_string(d));
  if (auto kv = f.get_int_if(c.key("attention.head_count_kv")); kv && *kv != heads)
    throw Error(f.source(), c.key("attention.head_count_kv"),
                std::to_string(*kv) + " KV heads for " + std::to_string(heads) + " query heads: " + why);
  return heads;
}

// attention.key_length and value_length, where given, must be the head
// size the model is built with: transformers derives it from the widths
// (or a config key) and reads neither.
void refuse_other_key_value_lengths(const ConfigFromKeys& c, int64_t head_dim) {
  const GgufFile& f = c.file();
  for (const char* k : {"attention.key_length", "attention.value_length"})
    if (auto v = f.get_int_if(c.key(k)); v && *v != head_dim)
      throw Error(f.source(), c.key(k),
                  std::to_string(*v) + " differs from the head size " + std::to_string(head_dim) +
                      " (kvscope and transformers need them equal)");
}

// vocab_size from the embedding's rows (a 2-D token_embd.weight), which
// GPT-2 and GPT-NeoX files are sized by.
void set_vocab_from_embedding(ConfigFromKeys& c) {
  const GgufFile& f = c.file();
  const auto* emb = f.find_tensor("token_embd.weight");
  if (!emb || emb->dims.size() != 2) throw Error(f.source(), "token_embd.weight", "missing or not 2-D");
  c.set_from("vocab_size", "token_embd.weight", emb->dims[1]);
}

// GPT-NeoX as llama.cpp's converter writes it: no KV-head count (every head
// has its own K and V), the rotary width as a dimension count, no RoPE base
// unless given (llama.cpp then uses 10000, GPTNeoXConfig's default), and no
// activation: llama.cpp computes GELU for this architecture; the exact (erf)
// GELU is what the Pythia checkpoints it converts declare.
void gpt_neox_config_json(ConfigFromKeys& c) {
  const GgufFile& f = c.file();
  nlohmann::json& j = c.json;
  j["model_type"] = "gpt_neox";
  const int64_t d = c.set_int("hidden_size", "embedding_length");
  const int64_t heads = multi_head_count(c, d, "GPT-NeoX has one K and V per head");
  c.set_int("intermediate_size", "feed_forward_length");
  c.set_int("num_hidden_layers", "block_count");
  c.set("num_attention_heads", "attention.head_count", heads);
  c.set_int_if("max_position_embeddings", "context_length");
  c.set_real_if("layer_norm_eps", "attention.layer_norm_epsilon");
  if (auto par = f.get_bool_if(c.key("use_parallel_residual")))
    c.set("use_parallel_residual", "use_parallel_residual", *par);
  const int64_t head_dim = d / heads;
  refuse_other_key_value_lengths(c, head_dim);
  const int64_t rotary = f.get_int_if(c.key("rope.dimension_count")).value_or(head_dim);
  if (rotary <= 0 || rotary > head_dim || rotary % 2 != 0)
    throw Error(f.source(), c.key("rope.dimension_count"),
                std::to_string(rotary) + " is not an even width within the head size " + std::to_string(head_dim));
  j["rope_parameters"] = {{"rope_type", "default"},
                          {"rope_theta", f.get_real_if(c.key("rope.freq_base")).value_or(10000.0)},
                          {"partial_rotary_factor", static_cast<double>(rotary) / static_cast<double>(head_dim)}};
  c.note_origin("rope_parameters.rope_theta", "rope.freq_base");
  c.note_origin("rope_parameters.partial_rotary_factor", "rope.dimension_count");
  j["hidden_act"] = "gelu";
  j["attention_bias"] = f.find_tensor("blk.0.attn_qkv.bias") != nullptr;
  // The embedding's rows: Pythia pads them past its tokenizer (llama.cpp
  // then pads the token list to match, but an older file may not).
  set_vocab_from_embedding(c);
  add_head_and_special_ids(c);
}

// The keys llama-family files share, as transformers maps them (sizes,
// heads, context, RoPE base, RMS epsilon); returns the query heads.
int64_t add_llama_like_keys(ConfigFromKeys& c) {
  const GgufFile& f = c.file();
  c.set_int("hidden_size", "embedding_length");
  c.set_int("intermediate_size", "feed_forward_length");
  c.set_int("num_hidden_layers", "block_count");
  const int64_t heads = c.set_int("num_attention_heads", "attention.head_count");
  c.set("num_key_value_heads", "attention.head_count_kv",
        f.get_int_if(c.key("attention.head_count_kv")).value_or(heads));
  c.set_int_if("max_position_embeddings", "context_length");
  c.set_real_if("rope_theta", "rope.freq_base");
  c.set_real_if("rms_norm_eps", "attention.layer_norm_rms_epsilon");
  return heads;
}

// vocab_size: the key, else the token list's length, else the embedding's rows.
void add_vocab_size(ConfigFromKeys& c) {
  const GgufFile& f = c.file();
  const GgufValue* tokens = f.find("tokenizer.ggml.tokens");
  if (auto v = f.get_int_if(c.key("vocab_size"))) c.set("vocab_size", "vocab_size", *v);
  else if (tokens && tokens->is_array()) c.set_from("vocab_size", "tokenizer.ggml.tokens", tokens->array_size());
  else if (const auto* emb = f.find_tensor("token_embd.weight"); emb && emb->dims.size() == 2)
    c.set_from("vocab_size", "token_embd.weight", emb->dims[1]);
  else throw Error(f.source(), c.key("vocab_size"), "missing (and no tokenizer.ggml.tokens to count)");
}

// Gemma 3 as transformers 5.23.0 reads it: the mapped keys, everything else
// Gemma3TextConfig's defaults (query_pre_attn_scalar 256, every sixth layer
// full, local RoPE base 10000). llama.cpp instead scales attention by
// key_length^-0.5 (except for the 27B size): the two agree only when the
// head size is 256, so any other is refused rather than computed one way.
void gemma3_config_json(ConfigFromKeys& c) {
  const GgufFile& f = c.file();
  c.json["model_type"] = "gemma3_text";
  add_llama_like_keys(c);
  c.set_int_if("sliding_window", "attention.sliding_window");
  const int64_t head_dim = f.get_int_if(c.key("attention.key_length")).value_or(256);
  if (head_dim != 256)
    throw Error(f.source(), c.key("attention.key_length"),
                std::to_string(head_dim) +
                    ": transformers scales Gemma 3's attention by 256^-0.5 and llama.cpp by "
                    "key_length^-0.5; kvscope reads Gemma 3 GGUF files only where the two agree (256)");
  c.set("head_dim", "attention.key_length", head_dim);
  if (auto v = f.get_int_if(c.key("attention.value_length")); v && *v != head_dim)
    throw Error(f.source(), c.key("attention.value_length"),
                std::to_string(*v) + " differs from key_length " + std::to_string(head_dim));
  add_vocab_size(c);
  add_head_and_special_ids(c);
}

// MPT as llama.cpp's converter writes it, read into the fields transformers'
// MptConfig would hold for the checkpoint; what its MPT would not compute
// is refused by key (docs/config_fields.md, "mpt").
void mpt_config_json(ConfigFromKeys& c) {
  const GgufFile& f = c.file();
  c.json["model_type"] = "mpt";
  const int64_t d = c.set_int("d_model", "embedding_length");
  c.set_int("n_layers", "block_count");
  const int64_t heads = multi_head_count(c, d, "transformers 5.23.0 builds MPT with multi-head attention only");
  c.set("n_heads", "attention.head_count", heads);
  refuse_other_key_value_lengths(c, d / heads);
  c.set_int("max_seq_len", "context_length");
  c.set_real_if("layer_norm_epsilon", "attention.layer_norm_epsilon");
  if (auto ff = f.get_int_if(c.key("feed_forward_length")); ff && *ff != 4 * d)
    throw Error(f.source(), c.key("feed_forward_length"),
                std::to_string(*ff) + " is not 4 x embedding_length (transformers builds MPT's MLP that size)");
  const double alibi = f.get_real_if(c.key("attention.max_alibi_bias")).value_or(0.0);
  if (alibi == 0.0)
    throw Error(f.source(), c.key("attention.max_alibi_bias"),
                "absent or 0: an MPT without ALiBi (llama.cpp adds learned positions) is not supported; "
                "transformers 5.23.0's MPT always uses ALiBi");
  if (alibi != 8.0)
    throw Error(f.source(), c.key("attention.max_alibi_bias"),
                number_text(alibi) + ": transformers 5.23.0 builds MPT's ALiBi slopes with 8");
  nlohmann::json attn;
  attn["alibi"] = true;
  attn["alibi_bias_max"] = 8;
  c.note_origin("attn_config.alibi_bias_max", "attention.max_alibi_bias");
  // 0 clamps nothing, in llama.cpp and transformers alike.
  if (auto clip = f.get_real_if(c.key("attention.clamp_kqv"))) {
    if (*clip < 0)
      throw Error(f.source(), c.key("attention.clamp_kqv"),
                  number_text(*clip) +
                      ": negative (llama.cpp would not clamp, transformers would clamp every value "
                      "to it)");
    if (*clip > 0) {
      attn["clip_qkv"] = *clip;
      c.note_origin("attn_config.clip_qkv", "attention.clamp_kqv");
    }
  }
  c.set("attn_config", "attention.max_alibi_bias", attn);
  for (const GgufTensorInfo& t : f.tensors())
    if (t.name.ends_with(".bias"))
      throw Error(f.source(), t.name,
                  "biases in an mpt file are not supported (transformers 5.23.0 builds MPT "
                  "without biases)");
  add_vocab_size(c);
  add_head_and_special_ids(c);
}

// GPT-2: transformers maps block_count, embedding_length, head_count and
// layer_norm_epsilon; its GPT2Config then sizes the MLP as 4 x n_embd, and
// the positions and vocabulary are the tensors' rows.
void gpt2_config_json(ConfigFromKeys& c) {
  const GgufFile& f = c.file();
  const int64_t d = c.set_int("n_embd", "embedding_length");
  c.set_int("n_layer", "block_count");
  const int64_t heads = c.set_int("n_head", "attention.head_count");
  if (heads > 0 && d % heads == 0) refuse_other_key_value_lengths(c, d / heads);
  c.set_real_if("layer_norm_epsilon", "attention.layer_norm_epsilon");
  if (auto ff = f.get_int_if(c.key("feed_forward_length")); ff && *ff != 4 * d)
    throw Error(f.source(), c.key("feed_forward_length"),
                std::to_string(*ff) + " is not 4 x embedding_length (transformers builds GPT-2's MLP that size)");
  const auto* pos = f.find_tensor("position_embd.weight");
  if (!pos || pos->dims.size() != 2) throw Error(f.source(), "position_embd.weight", "missing or not 2-D");
  c.set_from("n_positions", "position_embd.weight", pos->dims[1]);
  set_vocab_from_embedding(c);
  add_head_and_special_ids(c);
}

// Llama, Mistral, Qwen2, Qwen3 and Phi-3 files.
void llama_family_config_json(ConfigFromKeys& c, const std::string& type) {
  const GgufFile& f = c.file();
  nlohmann::json& j = c.json;
  const int64_t heads = add_llama_like_keys(c);
  // transformers takes llama's head_dim from the rotary width (a partial
  // rotary llama does not exist in its code); qwen2 and phi3 derive it from
  // the widths; qwen3 reads none (Qwen3Config's 128), while llama.cpp sizes
  // the heads by key_length, which the tensors follow: kvscope reads that.
  int64_t head_dim = j["hidden_size"].get<int64_t>() / std::max<int64_t>(heads, 1);
  if (type == "qwen3") {
    head_dim = f.get_int_if(c.key("attention.key_length")).value_or(128);
    c.set("head_dim", "attention.key_length", head_dim);
  } else if (type == "phi3") {
    // transformers rotates the whole head of a phi3 file (it maps no rotary
    // width); llama.cpp rotates dimension_count: they agree only when equal.
    if (auto rd = f.get_int_if(c.key("rope.dimension_count")); rd && *rd != head_dim)
      throw Error(f.source(), c.key("rope.dimension_count"),
                  std::to_string(*rd) + " differs from the head size " + std::to_string(head_dim) +
                      " (transformers rotates the whole head of a phi3 file, llama.cpp only these dimensions)");
    // llama.cpp slides where transformers (which maps no window) does not:
    // the two agree up to the window, so it becomes the model's window and a
    // longer run is refused up front.
    c.set_int_if("sliding_window", "attention.sliding_window");
  } else if (type != "qwen2") {
    const auto rd = f.get_int_if(c.key("rope.dimension_count"));
    if (rd) head_dim = *rd;
    c.set("head_dim", rd ? "rope.dimension_count" : "embedding_length", head_dim);
  }
  // llama.cpp builds Qwen3 and Phi-3 without attention biases (and
  // transformers would drop them): a file that has them is refused.
  if ((type == "qwen3" || type == "phi3") &&
      (f.find_tensor("blk.0.attn_q.bias") || f.find_tensor("blk.0.attn_qkv.bias")))
    throw Error(
        f.source(), f.find_tensor("blk.0.attn_q.bias") ? "blk.0.attn_q.bias" : "blk.0.attn_qkv.bias",
        "attention biases in a " + type + " file are not supported (neither llama.cpp nor transformers reads them)");
  refuse_other_key_value_lengths(c, head_dim);
  add_vocab_size(c);
  add_head_and_special_ids(c);
  j["hidden_act"] = "silu";
  if (type == "llama" || type == "mistral") j["attention_bias"] = f.find_tensor("blk.0.attn_q.bias") != nullptr;
  if (type == "llama") j["mlp_bias"] = f.find_tensor("blk.0.ffn_gate.bias") != nullptr;
}

// The config and its fields' origins (gguf_model_config_json's work).
ConfigFromKeys config_from_keys(const GgufFile& f) {
  const std::string arch = f.get_string("general.architecture");
  const std::string type = model_type_of(f, arch);
  refuse_unsupported_keys(f, arch);
  ConfigFromKeys c(f, arch);
  c.json["model_type"] = type;
  if (type == "gpt2") gpt2_config_json(c);
  else if (type == "gpt_neox") gpt_neox_config_json(c);
  else if (type == "gemma3_text") gemma3_config_json(c);
  else if (type == "mpt") mpt_config_json(c);
  else llama_family_config_json(c, type);
  return c;
}

}  // namespace

bool is_gguf_file(const fs::path& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return false;
  std::ifstream in(path, std::ios::binary);
  char magic[4] = {};
  in.read(magic, 4);
  return in.gcount() == 4 && std::memcmp(magic, "GGUF", 4) == 0;
}

nlohmann::json gguf_model_config_json(const GgufFile& f) { return config_from_keys(f).json; }

ModelFiles load_gguf_model(const fs::path& path) { return load_gguf_model(GgufFile::open(path)); }

ModelFiles load_gguf_model(const GgufFile& f) {
  ModelFiles m;
  m.dir = f.source();
  const ConfigFromKeys c = config_from_keys(f);
  try {
    m.config = parse_model_config(c.json, f.source());
  } catch (const Error& e) {
    if (e.source() != f.source()) throw;
    throw e.renamed(c.origin_of(e.field()));
  }
  m.config.rope_freq_factors = rope_freq_factors(f, m.config);
  const ModelConfig& cfg = m.config;
  const std::string arch = f.get_string("general.architecture");
  const bool interleaved_rotary = arch == "llama", gpt2 = arch == "gpt2", neox = arch == "gptneox";
  const bool gemma3 = arch == "gemma3";
  const GgufNames names = gpt2              ? GgufNames::Gpt2
                          : neox            ? GgufNames::GptNeox
                          : gemma3          ? GgufNames::Gemma3
                          : arch == "qwen3" ? GgufNames::Qwen3
                          : arch == "phi3"  ? GgufNames::Phi3
                          : arch == "mpt"   ? GgufNames::Mpt
                                            : GgufNames::Llama;

  auto owned = std::make_shared<OwnedTensors>();
  owned->mapping = f.mapping();
  owned->buffers.reserve(f.tensors().size());
  std::vector<TensorView> views;
  views.reserve(f.tensors().size());
  for (const GgufTensorInfo& t : f.tensors()) {
    if (t.name == "rope_freqs.weight") continue;  // in the configuration (rope_freq_factors)
    TensorView v;
    v.name = hf_tensor_name(t.name, names);
    v.stored_dtype = "F32";  // what the views hold (blocks: what they dequantize to)
    v.dtype = DType::F32;
    v.shape = t.torch_shape();
    v.file = f.source();
    v.nbytes = static_cast<std::size_t>(t.numel()) * 4;
    const bool is_q = v.name.ends_with("self_attn.q_proj.weight"), is_k = v.name.ends_with("self_attn.k_proj.weight");
    // The converter permutes the q and k biases as it does their weights' rows.
    const bool is_qk_bias = v.name.ends_with("self_attn.q_proj.bias") || v.name.ends_with("self_attn.k_proj.bias");
    const bool rotary_rows =
        interleaved_rotary && (((is_q || is_k) && v.shape.size() == 2) || (is_qk_bias && v.shape.size() == 1));
    const bool conv1d = gpt2 && is_gpt2_conv1d(v.name) && v.shape.size() == 2;
    const bool grouped_qkv = neox && v.name.find(".attention.query_key_value.") != std::string::npos;
    // llama.cpp's converter stores Gemma's norm weights as 1 + w;
    // transformers subtracts the 1 again in fp32 (and its RMSNorm adds it
    // back at run time), so the same subtraction is made here.
    const bool unit_offset = gemma3 && t.name.find("norm.weight") != std::string::npos;
    if (conv1d) std::swap(v.shape[0], v.shape[1]);
    const int64_t rows = v.shape[0], cols = v.shape.size() == 2 ? v.shape[1] : 1;
    std::vector<int64_t> order;  // empty: the stored row order is transformers'
    if (rotary_rows)
      order = rotary_row_order(rows, (is_q || v.name.ends_with("q_proj.bias")) ? cfg.n_heads : cfg.n_kv_heads,
                               f.source(), t.name);
    if (grouped_qkv) order = qkv_row_order(rows, cfg.n_heads, f.source(), t.name);
    if (t.type == GgmlType::F32 && order.empty() && !conv1d && !unit_offset) {
      v.data = t.data;  // used in place, inside the mapping
    } else if (t.type != GgmlType::F32 && v.shape.size() == 2 && !conv1d && !unit_offset) {
      // A matrix whose rows are whole blocks: kept as the file stores it
      // (the backends dequantize where they read it), rows reordered in a
      // copy of the blocks when llama.cpp's order differs.
      v.blocks = t.type;
      v.nbytes = t.nbytes;
      if (order.empty()) {
        v.data = t.data;
      } else {
        owned->block_buffers.push_back(permute_rows(t.data, t.nbytes / static_cast<std::size_t>(rows), order));
        v.data = owned->block_buffers.back().data();
        f.mapping()->drop_pages(t.data, t.nbytes);  // only the copy is read from here on
      }
    } else {
      std::vector<float> buf(static_cast<std::size_t>(t.numel()));
      dequantize_ggml(t.type, t.data, t.numel(), buf.data());
      f.mapping()->drop_pages(t.data, t.nbytes);
      if (conv1d) transpose_in_place(buf, v.shape[1], v.shape[0]);  // stored [out, in] -> [in, out]
      if (!order.empty()) buf = permute_rows(buf.data(), static_cast<std::size_t>(cols), order);
      if (unit_offset)
        for (float& x : buf) x = x - 1.0f;
      owned->buffers.push_back(std::move(buf));
      v.data = reinterpret_cast<const std::byte*>(owned->buffers.back().data());
    }
    views.push_back(std::move(v));
  }
  auto store = std::make_shared<TensorStore>(TensorStore::from_views(std::move(views), owned, f.source()));
  store->set_names_in_file([names](const std::string& hf) { return gguf_tensor_name(hf, names); });
  m.weights = map_weights(cfg, store, f.source(), [&c](const std::string& field) { return c.origin_of(field); });
  return m;
}

}  // namespace kvscope
