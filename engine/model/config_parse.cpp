#include "model/config_parse.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "common/error.h"
#include "common/number_text.h"
#include "io/json_file.h"

namespace kvscope {
namespace {

// The first of several spellings of one setting that is present.
std::string spelled(const JsonReader& r, std::initializer_list<const char*> keys) {
  for (const char* k : keys)
    if (r.has(k)) return k;
  return *keys.begin();
}

// One setting under any of its spellings (GPT-2's n_embd or hidden_size).
// Two spellings present must agree: which one transformers keeps depends
// on the order its config class assigns them, so a file that says both
// ways is refused rather than read one way. `fallbacks` are read only when
// no spelling is present, and not compared (GPT-2's n_ctx, which
// transformers does not read).
int positive_int(const JsonReader& r, std::initializer_list<const char*> keys,
                 std::initializer_list<const char*> fallbacks = {}) {
  std::string k = spelled(r, keys);
  if (!r.has(k))
    for (const char* f : fallbacks)
      if (r.has(f)) {
        k = f;
        break;
      }
  const int v = r.get_int(k);
  if (v <= 0) r.fail(k, "must be positive, got " + std::to_string(v));
  for (const char* other : keys)
    if (other != k && r.has(other) && r.get_int(other) != v)
      r.fail(other, "says " + std::to_string(r.get_int(other)) + " but " + k + " says " + std::to_string(v) +
                        " (two spellings of one setting): remove one or make them agree");
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

// A norm's epsilon: added to the variance under the square root, so a
// negative one makes NaNs wherever the variance is smaller, and a NaN or
// infinite one makes every output NaN or zero. transformers computes with
// any of them; kvscope refuses them by name.
double norm_epsilon(const JsonReader& r, const std::string& key, double fallback) {
  const double v = r.get_number(key, fallback);
  if (!(std::isfinite(v) && v >= 0)) r.fail(key, "must be a finite number >= 0, got " + number_text(v));
  return v;
}

Activation parse_activation(const JsonReader& r, const std::string& key, const std::string& fallback) {
  const std::string a = r.get_string(key, fallback);
  if (a == "gelu_new" || a == "gelu_pytorch_tanh" || a == "gelu_fast") return Activation::GeluTanh;
  if (a == "gelu") return Activation::GeluErf;
  if (a == "silu" || a == "swish") return Activation::Silu;
  if (a == "relu") return Activation::Relu;
  r.fail(key, "unsupported activation '" + a + "' (supported: gelu, gelu_new, gelu_pytorch_tanh, silu, relu)");
}

// A key that transformers 5.23.0 does not read for this model_type, though it
// names the same setting as a key it does read (another architecture's
// spelling, e.g. GPT-NeoX's rotary_emb_base in a llama config). Reading it
// would compute what transformers does not; dropping it silently would
// surprise whoever wrote it. So it is accepted only when it agrees with the
// value that is used.
void refuse_unread_spelling(const JsonReader& r, const std::string& key, const std::string& read_key,
                            const std::string& model_type, double used) {
  if (!r.has(key)) return;
  const double v = r.get_number(key);
  if (v == used) return;
  r.fail(key, "is not read by transformers 5.23.0 for " + model_type + " (it reads " + read_key + "); it says " +
                  number_text(v) + " but " + number_text(used) + " is used: remove it or make the two agree");
}

void refuse_unread_spelling(const JsonReader& r, const std::string& key, const std::string& read_key,
                            const std::string& model_type, const std::string& used) {
  if (!r.has(key)) return;
  const std::string v = r.get_string(key);
  if (v == used) return;
  r.fail(key, "is not read by transformers 5.23.0 for " + model_type + " (it reads " + read_key + "); it says '" + v +
                  "' but '" + used + "' is used: remove it or make the two agree");
}

// Where an architecture's config class takes the RoPE base and the rotary
// fraction from when rope_parameters does not say (transformers 5.23.0:
// GPTNeoXConfig and the RotaryEmbeddingConfigMixin that llama, mistral and
// qwen2 use), and the other spelling, which it does not read.
struct RopeSpelling {
  const char* theta_key;
  const char* partial_key;
  double default_partial;
  const char* unread_theta_key;
  const char* unread_partial_key;
};
constexpr RopeSpelling kNeoxRope{"rotary_emb_base", "rotary_pct", 0.25, "rope_theta", "partial_rotary_factor"};
constexpr RopeSpelling kLlamaRope{"rope_theta", "partial_rotary_factor", 1.0, "rotary_emb_base", "rotary_pct"};

// rope_type (or the older "type") of one RoPE dict `s` of config `r`, and
// the parameters that type reads, into c.rope_scaling.
void parse_rope_type(const JsonReader& r, const JsonReader& s, ModelConfig& c) {
  const std::string tkey = s.has("rope_type") ? "rope_type" : "type";
  const std::string type = s.get_string(tkey, "default");
  if (type == "default") {
    c.rope_scaling.type = RopeScaling::Type::None;
  } else if (type == "linear") {
    c.rope_scaling.type = RopeScaling::Type::Linear;
    c.rope_scaling.factor = s.get_number("factor");
    if (!(c.rope_scaling.factor > 0 && std::isfinite(c.rope_scaling.factor))) s.fail("factor", "must be positive");
  } else if (type == "llama3") {
    c.rope_scaling.type = RopeScaling::Type::Llama3;
    c.rope_scaling.factor = s.get_number("factor");
    c.rope_scaling.low_freq_factor = s.get_number("low_freq_factor");
    c.rope_scaling.high_freq_factor = s.get_number("high_freq_factor");
    // transformers' standardize_rope_params: a top-level
    // original_max_position_embeddings overrides the one in the dict (it
    // re-runs when the frequencies are computed, after config.json's extra
    // keys became attributes), and a missing one falls back to
    // max_position_embeddings.
    const char* omk = "original_max_position_embeddings";
    if (r.has(omk)) c.rope_scaling.original_max_positions = r.get_int(omk);
    else if (s.has(omk)) c.rope_scaling.original_max_positions = s.get_int(omk);
    else c.rope_scaling.original_max_positions = c.max_positions;
    if (c.rope_scaling.original_max_positions <= 0) (r.has(omk) ? r : s).fail(omk, "must be positive");
    if (!(c.rope_scaling.factor > 0 && std::isfinite(c.rope_scaling.factor))) s.fail("factor", "must be positive");
    // transformers divides the original context by it (a wavelength).
    if (!(c.rope_scaling.low_freq_factor > 0 && std::isfinite(c.rope_scaling.low_freq_factor)))
      s.fail("low_freq_factor", "must be positive");
    if (!(c.rope_scaling.high_freq_factor <= std::numeric_limits<double>::max()))
      s.fail("high_freq_factor", "must be finite");
    if (c.rope_scaling.high_freq_factor <= c.rope_scaling.low_freq_factor)
      s.fail("high_freq_factor", "must be greater than low_freq_factor");
  } else {
    // dynamic, yarn, longrope, proportional: not implemented, so refused
    // rather than run as plain RoPE.
    s.fail(tkey, "unsupported RoPE type '" + type + "' (supported: default, linear, llama3)");
  }
}

// RoPE settings: new configs nest them in rope_parameters, old ones use a
// top-level base and fraction and rope_scaling. Precedence as in
// transformers: values inside the dict win over top-level ones, and the old
// rope_scaling wins over rope_parameters when both are there (a non-empty
// rope_scaling replaces rope_parameters outright).
void parse_rope(const JsonReader& r, ModelConfig& c, const RopeSpelling& sp) {
  double theta = 10000.0, partial = sp.default_partial;
  std::string theta_from = "rope_theta";  // the key it was read from, for the message
  if (r.has(sp.theta_key)) {
    theta = r.get_number(sp.theta_key);
    theta_from = sp.theta_key;
  }
  if (r.has(sp.partial_key)) partial = r.get_number(sp.partial_key);
  std::string scaling_key;
  const bool old_scaling =
      r.has("rope_scaling") && !(r.raw("rope_scaling").is_object() && r.raw("rope_scaling").empty());
  if (old_scaling) scaling_key = "rope_scaling";
  else if (r.has("rope_parameters")) scaling_key = "rope_parameters";
  if (!scaling_key.empty()) {
    const JsonReader s = r.child(scaling_key);
    // transformers nests one dict per layer type ({"full_attention": {...},
    // "sliding_attention": {...}}) for models whose layers differ; a flat
    // reading of such a dict would miss every value in it.
    for (const auto& [k, v] : s.json().items())
      if (v.is_object()) s.fail(k, "per-layer-type RoPE parameters are not supported");
    if (s.has("rope_theta")) {
      theta = s.get_number("rope_theta");
      theta_from = scaling_key + ".rope_theta";
    }
    if (s.has("partial_rotary_factor")) partial = s.get_number("partial_rotary_factor");
    parse_rope_type(r, s, c);
  }
  refuse_unread_spelling(r, sp.unread_theta_key, std::string(sp.theta_key) + " or rope_parameters.rope_theta",
                         c.model_type, theta);
  refuse_unread_spelling(r, sp.unread_partial_key,
                         std::string(sp.partial_key) + " or rope_parameters.partial_rotary_factor", c.model_type,
                         partial);
  if (!(theta > 0 && std::isfinite(theta))) r.fail(theta_from, "must be positive");
  if (!(partial > 0 && partial <= 1)) r.fail("partial_rotary_factor", "must be in (0, 1]");
  c.rope_theta = theta;
  c.rotary_dims = static_cast<int>(c.head_dim * partial);
  if (c.rotary_dims % 2 != 0) r.fail("partial_rotary_factor", "gives an odd number of rotary dimensions");
}

bool is_null(const JsonReader& r, const char* key) { return r.json().contains(key) && r.json().at(key).is_null(); }

// config.json's layer_types as transformers reads it (the legacy
// "attention" is "full_attention"): 1 for each sliding layer; a wrong length
// or another kind is refused by name.
std::vector<uint8_t> sliding_layer_flags(const JsonReader& r, int n_layers) {
  const auto& types = r.raw("layer_types");
  if (!types.is_array() || static_cast<int>(types.size()) != n_layers)
    r.fail("layer_types", "expected a list of " + std::to_string(n_layers) + " layer types, got " + types.dump());
  std::vector<uint8_t> flags;
  for (const auto& t : types) {
    const std::string s = t.is_string() ? t.get<std::string>() : "";
    if (s != "full_attention" && s != "attention" && s != "sliding_attention")
      r.fail("layer_types", "unsupported layer type " + t.dump() + " (supported: full_attention, sliding_attention)");
    flags.push_back(s == "sliding_attention");
  }
  return flags;
}

// The one sliding window every layer uses (0: none), from the layer kinds
// transformers 5.23.0 works out: layer_types when config.json gives it
// (legacy "attention" = "full_attention"), otherwise `default_sliding` of the
// layers (the last ones) slide. `blame` names the key behind that default,
// `no_window_why` says why `window` may be 0. A window on some layers only is
// refused: kvscope has one window per model.
int uniform_window(const JsonReader& r, int n_layers, int window, int default_sliding, const char* blame,
                   const char* no_window_why) {
  int sliding = default_sliding;
  if (r.has("layer_types")) {
    blame = "layer_types";
    sliding = 0;
    for (uint8_t v : sliding_layer_flags(r, n_layers)) sliding += v;
    // transformers raises on a sliding layer without a window.
    if (sliding > 0 && window == 0)
      r.fail("layer_types",
             std::string("has sliding_attention layers but no sliding window applies (") + no_window_why + ")");
  }
  if (sliding == 0) return 0;
  if (sliding != n_layers)
    r.fail(blame, "gives " + std::to_string(sliding) + " of " + std::to_string(n_layers) +
                      " layers a sliding window (see max_window_layers / layer_types); a window on some layers"
                      " only is not supported");
  return window;
}

int positive_window(const JsonReader& r, int fallback) {
  const int w = r.get_int("sliding_window", fallback);
  if (w <= 0) r.fail("sliding_window", "must be positive");
  return w;
}

// Qwen2Config keeps sliding_window only when use_sliding_window is true
// (default window 4096), and then slides the layers from max_window_layers
// (default 28) on, unless layer_types says otherwise.
int qwen2_sliding_window(const JsonReader& r, int n_layers) {
  const bool use = r.get_bool("use_sliding_window", false) && !is_null(r, "sliding_window");
  const int window = use ? positive_window(r, 4096) : 0;
  const int from = r.get_int("max_window_layers", 28);
  const int default_sliding = window > 0 ? std::max(0, n_layers - std::max(0, from)) : 0;
  return uniform_window(r, n_layers, window, default_sliding, "use_sliding_window",
                        "use_sliding_window is false or sliding_window is null");
}

// GPT-2, GPT-NeoX and Llama declare no window, but transformers 5.23.0's
// DynamicCache(config=...) reads sliding_window (and layer_types, and
// attention_chunk_size) from any config: with one there, each layer's cache
// keeps only the last sliding_window tokens while decoding. Within the
// window nothing changes, so kvscope takes it as the model's window (longer
// runs are refused up front, as for Mistral).
int undeclared_sliding_window(const JsonReader& r, int n_layers) {
  const int window = r.has("sliding_window") ? positive_window(r, 0) : 0;
  return uniform_window(r, n_layers, window, window > 0 ? n_layers : 0, "sliding_window",
                        "sliding_window is missing or null");
}

void parse_gpt2(const JsonReader& r, ModelConfig& c) {
  c.arch = Arch::GPT2;
  // GPT2Config's attribute_map makes these true aliases of n_embd, n_layer,
  // n_head and n_positions. n_ctx is not one, but the wpe shape checked at
  // load catches a disagreement.
  c.hidden = positive_int(r, {"n_embd", "hidden_size"});
  c.n_layers = positive_int(r, {"n_layer", "num_hidden_layers"});
  c.n_heads = positive_int(r, {"n_head", "num_attention_heads"});
  c.max_positions = positive_int(r, {"n_positions", "max_position_embeddings"}, {"n_ctx"});
  // n_inner, layer_norm_epsilon and activation_function are the only
  // spellings GPT-2 reads; the llama-style names are refused unless they agree.
  c.intermediate = r.has("n_inner") ? r.get_int("n_inner") : 4 * c.hidden;
  if (c.intermediate <= 0) r.fail("n_inner", "must be positive");
  refuse_unread_spelling(r, "intermediate_size", "n_inner", c.model_type, c.intermediate);
  c.norm = NormKind::LayerNorm;
  c.norm_eps = norm_epsilon(r, "layer_norm_epsilon", 1e-5);
  refuse_unread_spelling(r, "layer_norm_eps", "layer_norm_epsilon", c.model_type, c.norm_eps);
  c.act = parse_activation(r, "activation_function", "gelu_new");
  refuse_unread_spelling(r, "hidden_act", "activation_function", c.model_type,
                         r.get_string("activation_function", "gelu_new"));
  c.gated_mlp = false;
  c.parallel_residual = false;
  c.rope = RopeStyle::None;
  c.learned_positions = true;
  c.qkv_bias = c.o_bias = c.mlp_bias = true;
  c.tied_embeddings = r.get_bool("tie_word_embeddings", true);
  if (c.hidden % c.n_heads != 0) r.fail("n_head", "does not divide n_embd");
  c.head_dim = c.hidden / c.n_heads;
  c.n_kv_heads = c.n_heads;
  // Both change the attention scale, which the backends fix at
  // 1/sqrt(head_dim). (reorder_and_upcast_attn only reorders the same fp32
  // product, so it is read as having no effect.)
  if (r.get_bool("scale_attn_by_inverse_layer_idx", false))
    r.fail("scale_attn_by_inverse_layer_idx", "true is not supported");
  if (!r.get_bool("scale_attn_weights", true)) r.fail("scale_attn_weights", "false is not supported");
  c.sliding_window = undeclared_sliding_window(r, c.n_layers);
}

void parse_neox(const JsonReader& r, ModelConfig& c) {
  c.arch = Arch::GPTNeoX;
  c.hidden = positive_int(r, {"hidden_size"});
  c.n_layers = positive_int(r, {"num_hidden_layers"});
  c.n_heads = positive_int(r, {"num_attention_heads"});
  c.intermediate = positive_int(r, {"intermediate_size"});
  c.max_positions = positive_int(r, {"max_position_embeddings"});
  c.norm = NormKind::LayerNorm;
  c.norm_eps = norm_epsilon(r, "layer_norm_eps", 1e-5);
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
  // GPTNeoXConfig has no head_dim, but its rotary embedding takes
  // getattr(config, "head_dim") when config.json carries one, while the
  // attention splits heads by hidden_size / num_attention_heads: the
  // rotated width would follow a number the rest of the model ignores.
  if (r.has("head_dim") && r.get_int("head_dim") != c.head_dim)
    r.fail("head_dim", "must equal hidden_size / num_attention_heads (" + std::to_string(c.head_dim) +
                           ") for gpt_neox (transformers 5.23.0 would size the rotary part by it)");
  parse_rope(r, c, kNeoxRope);
  c.sliding_window = undeclared_sliding_window(r, c.n_layers);
}

// The sizes Llama-family configs name alike: hidden_size, num_hidden_layers,
// num_attention_heads, intermediate_size, max_position_embeddings.
void parse_llama_sizes(const JsonReader& r, ModelConfig& c) {
  c.hidden = positive_int(r, {"hidden_size"});
  c.n_layers = positive_int(r, {"num_hidden_layers"});
  c.n_heads = positive_int(r, {"num_attention_heads"});
  c.intermediate = positive_int(r, {"intermediate_size"});
  c.max_positions = positive_int(r, {"max_position_embeddings"});
}

// head_dim as config.json gives it; missing or null: `absent` where the
// config class has a default of its own, else hidden_size /
// num_attention_heads (what the attention takes then).
void parse_head_dim(const JsonReader& r, ModelConfig& c, int absent = 0) {
  if (r.has("head_dim") && !is_null(r, "head_dim")) {
    c.head_dim = r.get_int("head_dim");
    if (c.head_dim <= 0) r.fail("head_dim", "must be positive");
  } else if (absent > 0) {
    c.head_dim = absent;
  } else {
    if (c.hidden % c.n_heads != 0) r.fail("num_attention_heads", "does not divide hidden_size");
    c.head_dim = c.hidden / c.n_heads;
  }
}

// The gated MLP computes act(gate) * up with SiLU only; another act would
// silently give other numbers than transformers, so it is refused.
void parse_gated_silu(const JsonReader& r, ModelConfig& c) {
  c.act = parse_activation(r, "hidden_act", "silu");
  if (c.act != Activation::Silu)
    r.fail("hidden_act", "'" + r.get_string("hidden_act") + "' is not supported for " + c.model_type +
                             " (its gated MLP is implemented with silu only)");
  c.gated_mlp = true;
}

// num_key_value_heads when config.json leaves it out: the class default in
// transformers 5.23.0, which is not always num_attention_heads (an explicit
// null does mean num_attention_heads for all three).
int default_kv_heads(const ModelConfig& c, const JsonReader& r) {
  const bool absent = !r.json().contains("num_key_value_heads");
  if (absent && c.model_type == "mistral") return 8;
  if (absent && (c.model_type == "qwen2" || c.model_type == "qwen3")) return 32;
  return c.n_heads;
}

void parse_llama(const JsonReader& r, ModelConfig& c) {
  c.arch = Arch::Llama;
  const bool is_llama = c.model_type == "llama";
  parse_llama_sizes(r, c);
  c.n_kv_heads = r.has("num_key_value_heads") ? r.get_int("num_key_value_heads") : default_kv_heads(c, r);
  if (c.n_kv_heads <= 0 || c.n_heads % c.n_kv_heads != 0) {
    const std::string heads = "num_attention_heads (" + std::to_string(c.n_heads) + ")";
    if (!r.json().contains("num_key_value_heads"))
      r.fail("num_key_value_heads", "missing, and transformers 5.23.0's default for " + c.model_type + " (" +
                                        std::to_string(c.n_kv_heads) + ") does not divide " + heads);
    r.fail("num_key_value_heads", "must divide " + heads);
  }
  // Qwen3Config's default head_dim is 128, whatever hidden_size / num_attention_heads is.
  parse_head_dim(r, c, c.model_type == "qwen3" ? 128 : 0);
  c.norm = NormKind::RMSNorm;
  c.norm_eps = norm_epsilon(r, "rms_norm_eps", 1e-6);
  parse_gated_silu(r, c);
  c.parallel_residual = false;
  c.rope = RopeStyle::Half;
  // Biases: LlamaConfig reads attention_bias (q, k, v and o) and mlp_bias;
  // Qwen3 reads attention_bias the same way and has no MLP biases.
  // Qwen2 hard-codes q/k/v biases and no o bias; Mistral and Qwen2 build
  // their layers without reading either key. A true there would make kvscope
  // load biases that transformers leaves out, so it is refused.
  if (is_llama) {
    c.qkv_bias = c.o_bias = r.get_bool("attention_bias", false);
    c.mlp_bias = r.get_bool("mlp_bias", false);
  } else if (c.model_type == "qwen3") {
    c.qkv_bias = c.o_bias = r.get_bool("attention_bias", false);
    c.mlp_bias = false;
    if (r.get_bool("mlp_bias", false))
      r.fail("mlp_bias", "true is not supported for qwen3 (transformers 5.23.0 builds its MLP without biases)");
  } else {
    c.qkv_bias = c.model_type == "qwen2";
    c.o_bias = false;
    c.mlp_bias = false;
    if (c.model_type == "mistral" && r.get_bool("attention_bias", false))
      r.fail("attention_bias",
             "true is not supported for mistral (transformers 5.23.0 builds Mistral without attention biases)");
    if (r.get_bool("mlp_bias", false))
      r.fail("mlp_bias",
             "true is not supported for " + c.model_type + " (transformers 5.23.0 builds its MLP without biases)");
  }
  c.tied_embeddings = r.get_bool("tie_word_embeddings", false);
  if (c.model_type == "mistral") {
    // MistralConfig's default window is 4096 when the key is missing; null
    // means none. Its mask applies the window to every layer whatever
    // layer_types says (transformers only warns about that key), so
    // layer_types has no effect here.
    c.sliding_window = is_null(r, "sliding_window") ? 0 : positive_window(r, 4096);
  } else if (c.model_type == "qwen2" || c.model_type == "qwen3") {
    // Qwen3Config keeps Qwen2Config's rules for the window.
    c.sliding_window = qwen2_sliding_window(r, c.n_layers);
  } else {
    c.sliding_window = undeclared_sliding_window(r, c.n_layers);
  }
  // Qwen3: RMSNorm over each head of q and k before RoPE, plain weights.
  c.qk_norm = c.model_type == "qwen3";
  // pretraining_tp: transformers 5.23.0's Llama no longer reads it (4.x
  // split the projections into slices, the same sum), so it has no effect.
  parse_rope(r, c, kLlamaRope);
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

// Gemma 3's RoPE, as Gemma3TextConfig.convert_rope_params_to_dict builds it:
// one dict per layer type; a non-empty rope_scaling updates the full-attention
// dict; the top-level rope_theta (default 1e6) and rope_local_base_freq
// (default 1e4) fill in a base a dict leaves out. Sliding layers rotate with
// their own base and no scaling. Every type rotates the whole head
// (partial_rotary_factor other than 1 is refused: Gemma3's own default
// ignores it, the scaled types would read it).
void parse_gemma3_rope(const JsonReader& r, ModelConfig& c) {
  nlohmann::json full = nlohmann::json::object(), sliding = nlohmann::json::object();
  if (r.has("rope_parameters") && !is_null(r, "rope_parameters")) {
    const JsonReader rp = r.child("rope_parameters");
    for (const auto& [k, v] : rp.json().items()) {
      if (k != "full_attention" && k != "sliding_attention")
        rp.fail(k, "gemma3_text takes one RoPE dict per layer type (full_attention, sliding_attention)");
      if (!v.is_null() && !v.is_object()) rp.fail(k, "expected an object");
    }
    if (rp.has("full_attention") && rp.raw("full_attention").is_object()) full = rp.raw("full_attention");
    if (rp.has("sliding_attention") && rp.raw("sliding_attention").is_object()) sliding = rp.raw("sliding_attention");
  }
  if (r.has("rope_scaling") && !is_null(r, "rope_scaling")) {
    if (!r.raw("rope_scaling").is_object()) r.fail("rope_scaling", "expected an object");
    // One dict of RoPE settings; per-layer-type dicts are rope_parameters'.
    for (const auto& [k, v] : r.raw("rope_scaling").items())
      if (v.is_object())
        r.fail("rope_scaling", "'" + k +
                                   "' is a dict: rope_scaling holds one set of RoPE settings (per-layer-type "
                                   "dicts belong in rope_parameters)");
    full.update(r.raw("rope_scaling"));
  }
  if (!full.contains("rope_theta")) full["rope_theta"] = r.has("rope_theta") ? r.get_number("rope_theta") : 1e6;
  if (!sliding.contains("rope_theta"))
    sliding["rope_theta"] = r.has("rope_local_base_freq") ? r.get_number("rope_local_base_freq") : 1e4;
  const JsonReader f(full, r.source(), "rope_parameters.full_attention");
  const JsonReader sl(sliding, r.source(), "rope_parameters.sliding_attention");
  parse_rope_type(r, f, c);
  if (c.rope_scaling.type == RopeScaling::Type::Llama3) f.fail("rope_type", "llama3 is not supported for gemma3_text");
  const std::string stype = sl.get_string(sl.has("rope_type") ? "rope_type" : "type", "default");
  if (stype != "default")
    sl.fail("rope_type", "'" + stype + "' is not supported for sliding layers (kvscope rotates them without scaling)");
  for (const JsonReader* d : {&f, &sl})
    if (d->has("partial_rotary_factor") && d->get_number("partial_rotary_factor") != 1.0)
      d->fail("partial_rotary_factor", "must be 1 for gemma3_text (every dimension of a head is rotated)");
  if (r.has("partial_rotary_factor") && r.get_number("partial_rotary_factor") != 1.0)
    r.fail("partial_rotary_factor", "must be 1 for gemma3_text (every dimension of a head is rotated)");
  c.rope_theta = f.get_number("rope_theta");
  c.rope_local_theta = sl.get_number("rope_theta");
  // Named by the key the value came from: a top-level rope_theta or
  // rope_local_base_freq, else the rope_parameters entry.
  auto in_dict = [&](const char* layer_type) {
    const nlohmann::json& j = r.json();
    if (!j.contains("rope_parameters") || !j.at("rope_parameters").is_object()) return false;
    const nlohmann::json& p = j.at("rope_parameters");
    return p.contains(layer_type) && p.at(layer_type).is_object() && p.at(layer_type).contains("rope_theta");
  };
  const bool full_from_dict = in_dict("full_attention"), sliding_from_dict = in_dict("sliding_attention");
  if (!(c.rope_theta > 0 && std::isfinite(c.rope_theta))) {
    if (!full_from_dict && r.has("rope_theta")) r.fail("rope_theta", "must be positive");
    f.fail("rope_theta", "must be positive");
  }
  if (!(c.rope_local_theta > 0 && std::isfinite(c.rope_local_theta))) {
    if (!sliding_from_dict && r.has("rope_local_base_freq")) r.fail("rope_local_base_freq", "must be positive");
    sl.fail("rope_theta", "must be positive");
  }
  c.rope = RopeStyle::Half;
  c.rotary_dims = c.head_dim;
}

// Gemma 3's text model (transformers 5.23.0's Gemma3TextConfig and
// modeling_gemma3): its class defaults where config.json leaves a setting
// out, layer kinds from layer_types or every sliding_window_pattern-th
// layer full (default 6), and what kvscope does not compute refused.
void parse_gemma3(const JsonReader& r, ModelConfig& c) {
  c.arch = Arch::Gemma3;
  c.hidden = positive_int(r, {"hidden_size"});
  c.n_layers = positive_int(r, {"num_hidden_layers"});
  c.n_heads = positive_int(r, {"num_attention_heads"});
  c.intermediate = positive_int(r, {"intermediate_size"});
  c.n_kv_heads = r.get_int("num_key_value_heads", 4);
  if (c.n_kv_heads <= 0 || c.n_heads % c.n_kv_heads != 0)
    r.fail("num_key_value_heads", "must divide num_attention_heads (" + std::to_string(c.n_heads) + ")");
  c.head_dim = r.get_int("head_dim", 256);
  if (c.head_dim <= 0 || c.head_dim % 2 != 0) r.fail("head_dim", "must be a positive even number");
  c.max_positions = r.get_int("max_position_embeddings", 131072);
  if (c.max_positions <= 0) r.fail("max_position_embeddings", "must be positive");
  // Gemma3TextConfig.validate_architecture raises on this.
  if (c.hidden % c.n_heads != 0) r.fail("num_attention_heads", "does not divide hidden_size");
  c.norm = NormKind::RMSNorm;
  c.norm_eps = norm_epsilon(r, "rms_norm_eps", 1e-6);
  c.act = parse_activation(r, "hidden_activation", "gelu_pytorch_tanh");
  refuse_unread_spelling(r, "hidden_act", "hidden_activation", c.model_type,
                         r.get_string("hidden_activation", "gelu_pytorch_tanh"));
  c.gated_mlp = true;
  c.parallel_residual = false;
  c.qkv_bias = c.o_bias = r.get_bool("attention_bias", false);
  c.mlp_bias = false;
  if (r.get_bool("mlp_bias", false))
    r.fail("mlp_bias", "true is not supported for gemma3_text (transformers 5.23.0 builds its MLP without biases)");
  c.tied_embeddings = r.get_bool("tie_word_embeddings", true);
  c.embed_scale = std::sqrt(static_cast<double>(c.hidden));
  c.qk_norm = true;
  c.sandwich_norm = true;
  c.query_pre_attn_scalar = r.get_number("query_pre_attn_scalar", 256);
  if (!(c.query_pre_attn_scalar > 0)) r.fail("query_pre_attn_scalar", "must be positive");
  for (const char* k : {"final_logit_softcapping", "attn_logit_softcapping"})
    if (r.has(k) && !is_null(r, k)) r.fail(k, "logit soft-capping is not supported");
  if (r.get_bool("use_bidirectional_attention", false))
    r.fail("use_bidirectional_attention", "true is not supported (kvscope decodes causally)");
  // Layer kinds: layer_types, else every pattern-th layer (1-based) is full.
  if (r.has("layer_types")) {
    c.sliding_layers = sliding_layer_flags(r, c.n_layers);
  } else {
    const int pattern = r.get_int("sliding_window_pattern", 6);
    if (pattern <= 0) r.fail("sliding_window_pattern", "must be positive");
    c.sliding_layers.assign(c.n_layers, 0);
    for (int i = 0; i < c.n_layers; ++i) c.sliding_layers[i] = (i + 1) % pattern != 0;
  }
  bool any_sliding = false;
  for (uint8_t v : c.sliding_layers) any_sliding = any_sliding || v;
  if (any_sliding) {
    if (is_null(r, "sliding_window")) r.fail("sliding_window", "is null but some layers slide (see layer_types)");
    c.sliding_window = positive_window(r, 4096);
  } else {
    c.sliding_window = 0;
    c.sliding_layers.clear();
  }
  parse_gemma3_rope(r, c);
}

// GPT-J (transformers 5.23.0's GPTJConfig and modeling_gptj): GPT-2's key
// names, one LayerNorm feeding attention and MLP in parallel, no attention
// biases, RoPE on the first rotary_dim dims of each head in interleaved pairs
// (2i, 2i + 1) with base 10000 (not configurable), a head with a bias.
// arch_gptj.cpp reorders the rotated rows of q and k into halves at load, so
// the backends rotate them as NeoX's pairs (q.k is unchanged by the shared
// permutation).
void parse_gptj(const JsonReader& r, ModelConfig& c) {
  c.arch = Arch::GPTJ;
  c.hidden = positive_int(r, {"n_embd", "hidden_size"});
  c.n_layers = positive_int(r, {"n_layer", "num_hidden_layers"});
  c.n_heads = positive_int(r, {"n_head", "num_attention_heads"});
  c.max_positions = positive_int(r, {"n_positions", "max_position_embeddings"});
  c.intermediate = r.has("n_inner") && !is_null(r, "n_inner") ? r.get_int("n_inner") : 4 * c.hidden;
  if (c.intermediate <= 0) r.fail("n_inner", "must be positive");
  refuse_unread_spelling(r, "intermediate_size", "n_inner", c.model_type, c.intermediate);
  if (c.hidden % c.n_heads != 0) r.fail("n_head", "does not divide n_embd");
  c.head_dim = c.hidden / c.n_heads;
  c.n_kv_heads = c.n_heads;
  c.norm = NormKind::LayerNorm;
  c.norm_eps = norm_epsilon(r, "layer_norm_epsilon", 1e-5);
  refuse_unread_spelling(r, "layer_norm_eps", "layer_norm_epsilon", c.model_type, c.norm_eps);
  c.act = parse_activation(r, "activation_function", "gelu_new");
  refuse_unread_spelling(r, "hidden_act", "activation_function", c.model_type,
                         r.get_string("activation_function", "gelu_new"));
  c.gated_mlp = false;
  c.parallel_residual = true;
  c.qkv_bias = c.o_bias = false;
  c.mlp_bias = true;
  c.lm_head_bias = true;
  c.tied_embeddings = r.get_bool("tie_word_embeddings", false);
  c.rope = RopeStyle::Half;
  // rotary_dim: GPTJConfig's default 64 when missing, the whole head when null.
  c.rotary_dims = is_null(r, "rotary_dim") ? c.head_dim : r.get_int("rotary_dim", 64);
  if (c.rotary_dims <= 0 || c.rotary_dims > c.head_dim || c.rotary_dims % 2 != 0)
    r.fail("rotary_dim", "must be a positive even number up to the head size (" + std::to_string(c.head_dim) + ")");
  c.rope_theta = 10000.0;
  refuse_unread_spelling(r, "rope_theta", "no base: GPT-J rotates with 10000", c.model_type, c.rope_theta);
  if (r.has("rope_scaling") && !is_null(r, "rope_scaling") &&
      !(r.raw("rope_scaling").is_object() && r.raw("rope_scaling").empty()))
    r.fail("rope_scaling", "is not read by transformers 5.23.0 for gptj (its rotary embedding has no scaling)");
  c.sliding_window = undeclared_sliding_window(r, c.n_layers);
}

// OPT (transformers 5.23.0's OPTConfig and modeling_opt): learned positions
// looked up at position + 2, LayerNorm before each block or (OPT-350m,
// do_layer_norm_before false) after each residual add with no final norm,
// an embedding of word_embed_proj_dim projected in and out, ReLU, biases
// (enable_bias), a tied head. Its queries are scaled before q.k rather than
// the product after: the same up to fp32 rounding.
void parse_opt(const JsonReader& r, ModelConfig& c) {
  c.arch = Arch::OPT;
  c.hidden = positive_int(r, {"hidden_size"});
  c.n_layers = positive_int(r, {"num_hidden_layers"});
  c.n_heads = positive_int(r, {"num_attention_heads"});
  c.intermediate = positive_int(r, {"ffn_dim"});
  refuse_unread_spelling(r, "intermediate_size", "ffn_dim", c.model_type, c.intermediate);
  c.max_positions = positive_int(r, {"max_position_embeddings"});
  if (c.hidden % c.n_heads != 0) r.fail("num_attention_heads", "does not divide hidden_size");
  c.head_dim = c.hidden / c.n_heads;
  c.n_kv_heads = c.n_heads;
  c.norm = NormKind::LayerNorm;
  c.norm_eps = 1e-5;  // nn.LayerNorm's default: OPT reads no epsilon
  refuse_unread_spelling(r, "layer_norm_eps", "no epsilon: OPT's LayerNorm uses 1e-5", c.model_type, c.norm_eps);
  c.act = parse_activation(r, "activation_function", "relu");
  c.gated_mlp = false;
  c.parallel_residual = false;
  const bool pre = r.get_bool("do_layer_norm_before", true);
  c.post_norm = !pre;
  // OPTDecoder builds its final norm only for pre-norm models that keep it.
  // Read (so a wrong type is named) even where it has no effect: a post-norm
  // model has no final norm to remove.
  const bool remove_final_norm = r.get_bool("_remove_final_layer_norm", false);
  if (pre && remove_final_norm)
    r.fail("_remove_final_layer_norm", "true is not supported (a pre-norm OPT without its final norm)");
  const int proj =
      r.has("word_embed_proj_dim") && !is_null(r, "word_embed_proj_dim") ? r.get_int("word_embed_proj_dim") : c.hidden;
  if (proj <= 0) r.fail("word_embed_proj_dim", "must be positive");
  c.word_embed_dim = proj == c.hidden ? 0 : proj;
  c.qkv_bias = c.o_bias = c.mlp_bias = r.get_bool("enable_bias", true);
  c.norm_affine = r.get_bool("layer_norm_elementwise_affine", true);
  c.tied_embeddings = r.get_bool("tie_word_embeddings", true);
  c.rope = RopeStyle::None;
  c.rotary_dims = 0;
  c.learned_positions = true;
  c.position_offset = 2;  // OPTLearnedPositionalEmbedding.offset
  c.sliding_window = undeclared_sliding_window(r, c.n_layers);
}

// Phi-3 (transformers 5.23.0's Phi3Config and modeling_phi3): Llama with q, k
// and v fused in qkv_proj and gate and up in gate_up_proj (split at load),
// no biases, RoPE on the first partial_rotary_factor of each head (Phi3
// reads it, unlike 5.23.0's Llama), and Mistral's window rule (null or
// missing: none). longrope (and its old names su, yarn) is refused by name.
void parse_phi3(const JsonReader& r, ModelConfig& c) {
  c.arch = Arch::Phi3;
  parse_llama_sizes(r, c);
  c.n_kv_heads =
      r.has("num_key_value_heads") && !is_null(r, "num_key_value_heads") ? r.get_int("num_key_value_heads") : c.n_heads;
  if (c.n_kv_heads <= 0 || c.n_heads % c.n_kv_heads != 0)
    r.fail("num_key_value_heads", "must divide num_attention_heads (" + std::to_string(c.n_heads) + ")");
  // Phi3Config has no head_dim; the attention reads one config.json carries.
  parse_head_dim(r, c);
  c.norm = NormKind::RMSNorm;
  c.norm_eps = norm_epsilon(r, "rms_norm_eps", 1e-5);
  parse_gated_silu(r, c);
  c.parallel_residual = false;
  c.qkv_bias = c.o_bias = c.mlp_bias = false;
  for (const char* k : {"attention_bias", "mlp_bias"})
    if (r.get_bool(k, false))
      r.fail(k, "true is not supported for phi3 (transformers 5.23.0 builds it without biases)");
  c.tied_embeddings = r.get_bool("tie_word_embeddings", false);
  c.sliding_window = is_null(r, "sliding_window") || !r.has("sliding_window") ? 0 : positive_window(r, 0);
  c.rope = RopeStyle::Half;
  // Phi3's rope_scaling / rope_parameters: only the default type runs here.
  for (const char* k : {"rope_scaling", "rope_parameters"}) {
    if (!r.has(k) || is_null(r, k) || !r.raw(k).is_object()) continue;
    const JsonReader s = r.child(k);
    const std::string tkey = s.has("rope_type") ? "rope_type" : "type";
    const std::string type = s.get_string(tkey, "default");
    if (type != "default")
      s.fail(tkey, "unsupported RoPE type '" + type +
                       "' for phi3 (supported: default; longrope, su and yarn are not "
                       "implemented)");
  }
  parse_rope(r, c, kLlamaRope);
}

// MPT (transformers 5.23.0's MptConfig and modeling_mpt): ALiBi instead of
// positions, fused Wqkv, LayerNorms without bias, exact-GELU MLP of 4 x
// d_model, no biases, tied head. transformers builds its ALiBi slopes with
// alibi_bias_max 8 and its MLP 4 x d_model wide whatever the config says,
// builds no bias, no q/k LayerNorm and multi-head attention only: a config
// that asks otherwise is refused by name rather than computed as
// transformers does (or as MosaicML's code would).
void parse_mpt(const JsonReader& r, ModelConfig& c) {
  c.arch = Arch::MPT;
  c.hidden = positive_int(r, {"d_model", "hidden_size"});
  c.n_layers = positive_int(r, {"n_layers", "num_hidden_layers"});
  c.n_heads = positive_int(r, {"n_heads", "num_attention_heads"});
  c.max_positions = positive_int(r, {"max_seq_len"});
  if (c.hidden % c.n_heads != 0) r.fail("n_heads", "does not divide d_model");
  c.head_dim = c.hidden / c.n_heads;
  c.n_kv_heads = c.n_heads;
  c.intermediate = 4 * c.hidden;
  if (r.has("expansion_ratio") && r.get_number("expansion_ratio") != 4)
    r.fail("expansion_ratio", "is not read by transformers 5.23.0 for mpt (its MLP is 4 x d_model wide)");
  c.norm = NormKind::LayerNorm;
  c.norm_eps = norm_epsilon(r, "layer_norm_epsilon", 1e-5);
  const std::string norm_type = r.get_string("norm_type", "low_precision_layernorm");
  if (norm_type != "low_precision_layernorm" && norm_type != "layernorm")
    r.fail("norm_type", "'" + norm_type + "' is not supported (transformers 5.23.0 builds a LayerNorm)");
  c.act = Activation::GeluErf;
  c.gated_mlp = false;
  c.parallel_residual = false;
  c.qkv_bias = c.o_bias = c.mlp_bias = false;
  if (!r.get_bool("no_bias", true))
    r.fail("no_bias", "false is not supported (transformers 5.23.0 builds MPT without biases)");
  c.tied_embeddings = r.get_bool("tie_word_embeddings", true);
  if (r.has("logit_scale") && !is_null(r, "logit_scale") &&
      !(r.raw("logit_scale").is_number() && r.get_number("logit_scale") == 1.0))
    r.fail("logit_scale", "is not read by transformers 5.23.0 for mpt (it would scale the logits); remove it");
  c.rope = RopeStyle::None;
  c.rotary_dims = 0;
  c.learned_positions = false;  // learned_pos_emb: transformers' MPT has no position table
  c.softmax_scale = 1.0 / std::sqrt(static_cast<double>(c.hidden) / c.n_heads);
  if (r.has("attn_config") && !is_null(r, "attn_config")) {
    const JsonReader a = r.child("attn_config");
    const std::string type = a.get_string("attn_type", "multihead_attention");
    if (type != "multihead_attention")
      a.fail("attn_type", "'" + type + "' is not supported (transformers 5.23.0 builds multi-head attention)");
    for (const char* k : {"qk_ln", "prefix_lm", "attn_uses_sequence_id"})
      if (a.get_bool(k, false)) a.fail(k, "true is not supported (transformers 5.23.0 does not read it)");
    if (!a.get_bool("alibi", true))
      a.fail("alibi", "false is not supported (transformers 5.23.0's MPT always uses ALiBi)");
    if (a.has("alibi_bias_max") && a.get_number("alibi_bias_max") != 8)
      a.fail("alibi_bias_max", "is not read by transformers 5.23.0 (it builds the slopes with 8); it says " +
                                   number_text(a.get_number("alibi_bias_max")) + ": remove it or make it 8");
    if (a.has("softmax_scale") && !is_null(a, "softmax_scale")) {
      c.softmax_scale = a.get_number("softmax_scale");
      if (!(c.softmax_scale > 0)) a.fail("softmax_scale", "must be positive");
    }
    if (a.has("clip_qkv") && !is_null(a, "clip_qkv")) {
      // transformers clamps `if self.clip_qkv:`, so 0 clamps nothing.
      c.clip_qkv = static_cast<float>(a.get_number("clip_qkv"));
      if (!(c.clip_qkv >= 0)) a.fail("clip_qkv", "must be 0 (no clamp) or positive");
    }
  }
  c.alibi_slopes = mpt_alibi_slopes(c.n_heads, 8.0);
  c.sliding_window = undeclared_sliding_window(r, c.n_layers);
}

DType parse_dtype(const JsonReader& r) {
  // dtype, or its older spelling torch_dtype; both must name a type kvscope
  // reads, and the same one.
  auto read = [&](const std::string& key) {
    const std::string s = r.get_string(key, "float32");
    if (s == "float32") return DType::F32;
    if (s == "float16") return DType::F16;
    if (s == "bfloat16") return DType::BF16;
    r.fail(key, "unsupported dtype '" + s + "' (supported: float32, float16, bfloat16)");
  };
  const bool both = r.has("dtype") && r.has("torch_dtype");
  const DType t = read(r.has("torch_dtype") ? "torch_dtype" : "dtype");
  if (both && read("dtype") != t)
    r.fail("dtype", "'" + r.get_string("dtype") + "' but torch_dtype says '" + r.get_string("torch_dtype") +
                        "' (two spellings of one setting): remove one or make them agree");
  return t;
}

}  // namespace

ModelConfig parse_model_config(const nlohmann::json& j, const std::string& source) {
  if (!j.is_object()) throw Error(source, "", "expected a JSON object");
  JsonReader r(j, source);
  ModelConfig c;
  c.model_type = r.get_string("model_type");
  // transformers 5.23.0's DynamicCache(config=...), which every supported
  // model builds, reads attention_chunk_size from any config and keeps
  // chunks of it: not what kvscope computes, whatever the architecture.
  if (r.has("attention_chunk_size") && !is_null(r, "attention_chunk_size"))
    r.fail("attention_chunk_size", "is not supported (transformers 5.23.0's cache would keep chunks of it)");
  if (c.model_type == "gpt2") {
    parse_gpt2(r, c);
  } else if (c.model_type == "gpt_neox") {
    parse_neox(r, c);
  } else if (c.model_type == "llama" || c.model_type == "mistral" || c.model_type == "qwen2" ||
             c.model_type == "qwen3") {
    parse_llama(r, c);
  } else if (c.model_type == "gemma3_text") {
    parse_gemma3(r, c);
  } else if (c.model_type == "gptj") {
    parse_gptj(r, c);
  } else if (c.model_type == "opt") {
    parse_opt(r, c);
  } else if (c.model_type == "phi3") {
    parse_phi3(r, c);
  } else if (c.model_type == "mpt") {
    parse_mpt(r, c);
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
  // Gemma3TextConfig's class defaults when config.json leaves them out.
  if (c.arch == Arch::Gemma3) {
    if (!r.json().contains("eos_token_id")) c.eos_ids = {1};
    if (!r.json().contains("bos_token_id")) c.bos_id = 2;
  }
  // The same for the configs whose classes set both (GPTJConfig: 50256,
  // OPTConfig: 2, Phi3Config: eos 32000, bos 1).
  const int class_eos = c.arch == Arch::GPTJ ? 50256 : c.arch == Arch::OPT ? 2 : c.arch == Arch::Phi3 ? 32000 : -1;
  const int class_bos = c.arch == Arch::GPTJ ? 50256 : c.arch == Arch::OPT ? 2 : c.arch == Arch::Phi3 ? 1 : -1;
  if (class_eos >= 0 && !r.json().contains("eos_token_id")) c.eos_ids = {class_eos};
  if (class_bos >= 0 && !r.json().contains("bos_token_id")) c.bos_id = class_bos;
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
  // Checked here, so the message names this file rather than config.json.
  for (int e : eos)
    if (e < 0 || (cfg.vocab_size > 0 && e >= cfg.vocab_size))
      r.fail("eos_token_id", "id " + std::to_string(e) + " outside the vocabulary");
  if (!eos.empty()) cfg.eos_ids = eos;
  auto bos = token_ids(r, "bos_token_id");
  if (!bos.empty()) cfg.bos_id = bos[0];
}

}  // namespace kvscope
