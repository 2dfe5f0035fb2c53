#include "model/config_parse.h"

#include <cmath>

#include "common/error.h"
#include "io/json_file.h"

namespace kvscope {
namespace {

// The first of several spellings of one setting that is present.
std::string spelled(const JsonReader& r, std::initializer_list<const char*> keys) {
  for (const char* k : keys)
    if (r.has(k)) return k;
  return *keys.begin();
}

int positive_int(const JsonReader& r, std::initializer_list<const char*> keys) {
  const std::string k = spelled(r, keys);
  const int v = r.get_int(k);
  if (v <= 0) r.fail(k, "must be positive, got " + std::to_string(v));
  return v;
}

std::vector<int> token_ids(const JsonReader& r, const std::string& key) {
  std::vector<int> out;
  if (!r.has(key)) return out;
  const auto& v = r.raw(key);
  if (v.is_number_integer()) {
    out.push_back(v.get<int>());
  } else if (v.is_array()) {
    for (const auto& e : v) {
      if (!e.is_number_integer()) r.fail(key, "expected token ids, got " + v.dump());
      out.push_back(e.get<int>());
    }
  } else {
    r.fail(key, "expected a token id or a list of them, got " + v.dump());
  }
  return out;
}

Activation parse_activation(const JsonReader& r, const std::string& key, const std::string& fallback) {
  const std::string a = r.get_string(key, fallback);
  if (a == "gelu_new" || a == "gelu_pytorch_tanh" || a == "gelu_fast") return Activation::GeluTanh;
  if (a == "gelu") return Activation::GeluErf;
  if (a == "silu" || a == "swish") return Activation::Silu;
  r.fail(key, "unsupported activation '" + a + "' (supported: gelu, gelu_new, gelu_pytorch_tanh, silu)");
}

// RoPE settings: new configs nest them in rope_parameters, old ones use
// rope_theta / rotary_emb_base / rotary_pct and rope_scaling at the top level.
void parse_rope(const JsonReader& r, ModelConfig& c, double default_partial) {
  double theta = 10000.0, partial = default_partial;
  if (r.has("rope_theta")) theta = r.get_number("rope_theta");
  if (r.has("rotary_emb_base")) theta = r.get_number("rotary_emb_base");
  if (r.has("rotary_pct")) partial = r.get_number("rotary_pct");
  if (r.has("partial_rotary_factor")) partial = r.get_number("partial_rotary_factor");
  std::string scaling_key;
  if (r.has("rope_parameters")) scaling_key = "rope_parameters";
  else if (r.has("rope_scaling")) scaling_key = "rope_scaling";
  if (!scaling_key.empty()) {
    const JsonReader s = r.child(scaling_key);
    if (s.has("rope_theta")) theta = s.get_number("rope_theta");
    if (s.has("partial_rotary_factor")) partial = s.get_number("partial_rotary_factor");
    const std::string tkey = s.has("rope_type") ? "rope_type" : "type";
    const std::string type = s.get_string(tkey, "default");
    if (type == "default") {
      c.rope_scaling.type = RopeScaling::Type::None;
    } else if (type == "linear") {
      c.rope_scaling.type = RopeScaling::Type::Linear;
      c.rope_scaling.factor = s.get_number("factor");
      if (c.rope_scaling.factor <= 0) s.fail("factor", "must be positive");
    } else if (type == "llama3") {
      c.rope_scaling.type = RopeScaling::Type::Llama3;
      c.rope_scaling.factor = s.get_number("factor");
      c.rope_scaling.low_freq_factor = s.get_number("low_freq_factor");
      c.rope_scaling.high_freq_factor = s.get_number("high_freq_factor");
      c.rope_scaling.original_max_positions = s.get_int("original_max_position_embeddings");
      if (c.rope_scaling.factor <= 0) s.fail("factor", "must be positive");
      if (c.rope_scaling.high_freq_factor <= c.rope_scaling.low_freq_factor)
        s.fail("high_freq_factor", "must be greater than low_freq_factor");
    } else {
      s.fail(tkey, "unsupported RoPE type '" + type + "' (supported: default, linear, llama3)");
    }
  }
  if (!(theta > 0)) r.fail("rope_theta", "must be positive");
  if (!(partial > 0 && partial <= 1)) r.fail("partial_rotary_factor", "must be in (0, 1]");
  c.rope_theta = theta;
  c.rotary_dims = static_cast<int>(c.head_dim * partial);
  if (c.rotary_dims % 2 != 0) r.fail("partial_rotary_factor", "gives an odd number of rotary dimensions");
}

void parse_gpt2(const JsonReader& r, ModelConfig& c) {
  c.arch = Arch::GPT2;
  c.hidden = positive_int(r, {"n_embd", "hidden_size"});
  c.n_layers = positive_int(r, {"n_layer", "num_hidden_layers"});
  c.n_heads = positive_int(r, {"n_head", "num_attention_heads"});
  c.max_positions = positive_int(r, {"n_positions", "max_position_embeddings", "n_ctx"});
  const std::string inner = spelled(r, {"n_inner", "intermediate_size"});
  c.intermediate = r.has(inner) ? r.get_int(inner) : 4 * c.hidden;
  c.norm = NormKind::LayerNorm;
  c.norm_eps = r.get_number(spelled(r, {"layer_norm_epsilon", "layer_norm_eps"}), 1e-5);
  c.act = parse_activation(r, spelled(r, {"activation_function", "hidden_act"}), "gelu_new");
  c.gated_mlp = false;
  c.parallel_residual = false;
  c.rope = RopeStyle::None;
  c.learned_positions = true;
  c.qkv_bias = c.o_bias = c.mlp_bias = true;
  c.tied_embeddings = r.get_bool("tie_word_embeddings", true);
  if (c.hidden % c.n_heads != 0) r.fail("n_head", "does not divide n_embd");
  c.head_dim = c.hidden / c.n_heads;
  c.n_kv_heads = c.n_heads;
  if (r.get_bool("scale_attn_by_inverse_layer_idx", false))
    r.fail("scale_attn_by_inverse_layer_idx", "true is not supported");
  if (!r.get_bool("scale_attn_weights", true)) r.fail("scale_attn_weights", "false is not supported");
}

void parse_neox(const JsonReader& r, ModelConfig& c) {
  c.arch = Arch::GPTNeoX;
  c.hidden = positive_int(r, {"hidden_size"});
  c.n_layers = positive_int(r, {"num_hidden_layers"});
  c.n_heads = positive_int(r, {"num_attention_heads"});
  c.intermediate = positive_int(r, {"intermediate_size"});
  c.max_positions = positive_int(r, {"max_position_embeddings"});
  c.norm = NormKind::LayerNorm;
  c.norm_eps = r.get_number("layer_norm_eps", 1e-5);
  c.act = parse_activation(r, "hidden_act", "gelu");
  c.gated_mlp = false;
  c.parallel_residual = r.get_bool("use_parallel_residual", true);
  c.rope = RopeStyle::Half;
  if (c.hidden % c.n_heads != 0) r.fail("num_attention_heads", "does not divide hidden_size");
  c.head_dim = c.hidden / c.n_heads;
  c.n_kv_heads = c.n_heads;
  c.qkv_bias = c.o_bias = r.get_bool("attention_bias", true);
  c.mlp_bias = true;
  c.tied_embeddings = r.get_bool("tie_word_embeddings", false);
  parse_rope(r, c, 0.25);  // GPT-NeoX's rotary_pct default
}

void parse_llama(const JsonReader& r, ModelConfig& c) {
  c.arch = Arch::Llama;
  c.hidden = positive_int(r, {"hidden_size"});
  c.n_layers = positive_int(r, {"num_hidden_layers"});
  c.n_heads = positive_int(r, {"num_attention_heads"});
  c.intermediate = positive_int(r, {"intermediate_size"});
  c.max_positions = positive_int(r, {"max_position_embeddings"});
  c.n_kv_heads = r.has("num_key_value_heads") ? r.get_int("num_key_value_heads") : c.n_heads;
  if (c.n_kv_heads <= 0 || c.n_heads % c.n_kv_heads != 0)
    r.fail("num_key_value_heads", "must divide num_attention_heads (" + std::to_string(c.n_heads) + ")");
  if (r.has("head_dim")) {
    c.head_dim = r.get_int("head_dim");
    if (c.head_dim <= 0) r.fail("head_dim", "must be positive");
  } else {
    if (c.hidden % c.n_heads != 0) r.fail("num_attention_heads", "does not divide hidden_size");
    c.head_dim = c.hidden / c.n_heads;
  }
  c.norm = NormKind::RMSNorm;
  c.norm_eps = r.get_number("rms_norm_eps", 1e-6);
  c.act = parse_activation(r, "hidden_act", "silu");
  // The gated MLP computes act(gate) * up with SiLU only; another act would
  // silently give other numbers than transformers, so it is refused.
  if (c.act != Activation::Silu)
    r.fail("hidden_act", "'" + r.get_string("hidden_act") + "' is not supported for " + c.model_type +
                             " (its gated MLP is implemented with silu only)");
  c.gated_mlp = true;
  c.parallel_residual = false;
  c.rope = RopeStyle::Half;
  if (c.model_type == "qwen2") {
    c.qkv_bias = true;  // Qwen2 always has q/k/v biases and no o bias
    c.o_bias = false;
    if (r.get_bool("use_sliding_window", false)) r.fail("use_sliding_window", "true is not supported");
  } else {
    c.qkv_bias = c.o_bias = r.get_bool("attention_bias", false);
  }
  c.mlp_bias = r.get_bool("mlp_bias", false);
  c.tied_embeddings = r.get_bool("tie_word_embeddings", false);
  if (c.model_type == "mistral" && r.has("sliding_window")) c.sliding_window = r.get_int("sliding_window");
  if (c.sliding_window < 0) r.fail("sliding_window", "must be positive");
  if (r.get_int("pretraining_tp", 1) != 1) r.fail("pretraining_tp", "only 1 is supported");
  parse_rope(r, c, 1.0);
  // transformers 5.23 (the version the goldens pin) rotates every dimension
  // of a llama / mistral / qwen2 head: its default RoPE ignores
  // partial_rotary_factor for these models. Do the same. Its scaled RoPE
  // types would read the factor for the frequencies but still rotate the
  // whole head, which does not work; refuse that combination.
  if (c.rotary_dims != c.head_dim) {
    if (c.rope_scaling.type != RopeScaling::Type::None)
      r.fail("partial_rotary_factor", "is not supported together with a scaled RoPE for " + c.model_type);
    c.rotary_dims = c.head_dim;
  }
}

DType parse_dtype(const JsonReader& r) {
  const std::string key = r.has("torch_dtype") ? "torch_dtype" : "dtype";
  const std::string s = r.get_string(key, "float32");
  if (s == "float32") return DType::F32;
  if (s == "float16") return DType::F16;
  if (s == "bfloat16") return DType::BF16;
  r.fail(key, "unsupported dtype '" + s + "' (supported: float32, float16, bfloat16)");
}

}  // namespace

ModelConfig parse_model_config(const nlohmann::json& j, const std::string& source) {
  if (!j.is_object()) throw Error(source, "", "expected a JSON object");
  JsonReader r(j, source);
  ModelConfig c;
  c.model_type = r.get_string("model_type");
  if (c.model_type == "gpt2") {
    parse_gpt2(r, c);
  } else if (c.model_type == "gpt_neox") {
    parse_neox(r, c);
  } else if (c.model_type == "llama" || c.model_type == "mistral" || c.model_type == "qwen2") {
    parse_llama(r, c);
  } else {
    std::string list;
    for (const auto& t : supported_model_types()) list += (list.empty() ? "" : ", ") + t;
    r.fail("model_type", "unsupported model type '" + c.model_type + "' (supported: " + list + ")");
  }
  c.vocab_size = r.get_int("vocab_size");
  if (c.vocab_size <= 0) r.fail("vocab_size", "must be positive");
  // MLKV checkpoints declare how many layers own KV (the MLKV code's key).
  c.n_kv_layers = r.has("num_key_value_layers") ? r.get_int("num_key_value_layers") : c.n_layers;
  if (c.n_kv_layers <= 0 || c.n_kv_layers > c.n_layers)
    r.fail("num_key_value_layers", "must be between 1 and num_hidden_layers (" + std::to_string(c.n_layers) + ")");
  c.dtype = parse_dtype(r);
  c.eos_ids = token_ids(r, "eos_token_id");
  auto bos = token_ids(r, "bos_token_id");
  if (!bos.empty()) c.bos_id = bos[0];
  return c;
}

ModelConfig read_model_config(const std::filesystem::path& config_json) {
  return parse_model_config(read_json_file(config_json), config_json.string());
}

void read_generation_config(const std::filesystem::path& model_dir, ModelConfig& cfg) {
  const auto gen = model_dir / "generation_config.json";
  std::error_code ec;
  if (!std::filesystem::exists(gen, ec)) return;
  const auto j = read_json_file(gen);
  JsonReader r(j, gen.string());
  auto eos = token_ids(r, "eos_token_id");
  if (!eos.empty()) cfg.eos_ids = eos;
  auto bos = token_ids(r, "bos_token_id");
  if (!bos.empty()) cfg.bos_id = bos[0];
}

}  // namespace kvscope
