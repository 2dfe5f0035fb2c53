// kvscope-cli inspect MODEL [--json]: what a checkpoint is and what its KV
// cache costs.
#include <algorithm>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "backend/cpu/cpu_backend.h"
#include "cli_common.h"
#include "io/json_file.h"
#include "reports/provenance.h"
#include "session/session_config.h"

namespace kvscope::cli {
namespace {

struct InspectArgs {
  std::string model;
  bool json = false;
};

const char* norm_name(NormKind n) { return n == NormKind::LayerNorm ? "layernorm" : "rmsnorm"; }
const char* act_name(Activation a) {
  switch (a) {
    case Activation::GeluTanh: return "gelu_tanh";
    case Activation::GeluErf: return "gelu";
    case Activation::Silu: return "silu";
    case Activation::Relu: return "relu";
  }
  return "?";
}

void run_inspect(const InspectArgs& a) {
  const ModelBundle b = load_bundle(a.model);
  const ModelConfig& c = b.config();
  const int64_t params = b.files.weights.numel();
  const std::size_t elem = dtype_size(c.dtype);
  // Which layers slide (all of them when the window is model-wide).
  std::vector<int> sliding;
  std::string sliding_list;
  for (int l = 0; l < c.n_layers; ++l)
    if (c.window_of(l) > 0) {
      sliding.push_back(l);
      sliding_list += (sliding_list.empty() ? "" : ",") + std::to_string(l);
    }
  nlohmann::json j = {
      {"model", b.files.dir.string()},
      {"model_type", c.model_type},
      {"architecture", c.describe_arch()},
      {"layers", c.n_layers},
      {"heads", c.n_heads},
      {"kv_heads", c.n_kv_heads},
      {"kv_layers", c.n_kv_layers},
      {"head_dim", c.head_dim},
      {"hidden_size", c.hidden},
      {"intermediate_size", c.intermediate},
      {"vocab_size", c.vocab_size},
      {"max_positions", c.max_positions},
      {"parameters", params},
      {"dtype", dtype_name(c.dtype)},
      {"kv_bytes_per_token", c.kv_bytes_per_token(elem)},
      {"kv_bytes_per_token_fp32", c.kv_bytes_per_token(4)},
      {"norm", norm_name(c.norm)},
      {"activation", act_name(c.act)},
      {"gated_mlp", c.gated_mlp},
      {"parallel_residual", c.parallel_residual},
      {"post_norm", c.post_norm},
      {"word_embed_proj_dim", c.embed_width()},
      {"lm_head_bias", c.lm_head_bias},
      {"positions", c.learned_positions         ? "learned"
                    : c.rope == RopeStyle::Half ? "rope"
                    : !c.alibi_slopes.empty()   ? "alibi"
                                                : "none"},
      {"rotary_dims", c.rotary_dims},
      {"rope_theta", c.rope_theta},
      {"rope_local_theta", c.rope_local_theta},
      {"sliding_window", c.sliding_window},
      {"sliding_layers", sliding},
      {"attention_scale", c.attention_scale()},
      {"tied_embeddings", c.tied_embeddings},
      {"eos_token_ids", c.eos_ids},
      {"bos_token_id", c.bos_id},
      {"tokenizer_vocab", b.tokenizer->vocab_size()},
  };
  // How the parameters are stored: a GGUF file's mix of block types (a
  // Q4_K_M file is mostly Q4_K, with Q6_K for some matrices).
  const auto storage = b.files.weights.parameters_by_storage();
  j["parameters_by_storage"] = storage;
  // What the CPU backend holds for the weights under each --weights.
  nlohmann::json held = nlohmann::json::object();
  for (WeightFormat f : weight_formats()) held[weight_format_name(f)] = CpuModel::host_bytes(b.files.weights, f);
  j["cpu_weight_bytes"] = held;
  if (a.json) {
    SessionConfig cfg;  // no run: the model's files and configuration, the build and the command
    cfg.model = b.files.dir.string();
    j["provenance"] = to_json(model_provenance(b, cfg, nullptr));
    std::printf("%s\n", json_text(j).c_str());
    return;
  }
  std::printf("model            %s\n", b.files.dir.c_str());
  std::printf("architecture     %s\n", c.describe_arch().c_str());
  std::printf("layers           %d (%d own KV)\n", c.n_layers, c.n_kv_layers);
  std::printf("heads            %d query, %d KV, head dim %d\n", c.n_heads, c.n_kv_heads, c.head_dim);
  std::printf("hidden           %d, intermediate %d (%s%s, %s)\n", c.hidden, c.intermediate, act_name(c.act),
              c.gated_mlp ? " gated" : "", norm_name(c.norm));
  std::printf("positions        %s, max %d", j["positions"].get<std::string>().c_str(), c.max_positions);
  if (c.rope == RopeStyle::Half) std::printf(" (rotary dims %d, theta %g)", c.rotary_dims, c.rope_theta);
  if (c.rope_local_theta > 0) std::printf(", theta %g on sliding layers", c.rope_local_theta);
  if (c.sliding_window > 0)
    std::printf("\nwindow           %d tokens on %s", c.sliding_window,
                c.sliding_layers.empty() ? "every layer" : ("layers " + sliding_list).c_str());
  std::printf("\nresidual         %s%s%s\n", c.parallel_residual ? "parallel" : "sequential",
              c.sandwich_norm ? ", each branch normalised before the add; q and k normalised per head" : "",
              c.post_norm ? ", normalised after each add (post-norm, no final norm)" : "");
  if (c.word_embed_dim > 0)
    std::printf("embedding        %d wide, projected in to %d and out again\n", c.word_embed_dim, c.hidden);
  std::printf("vocab            %d (tokenizer %d)%s\n", c.vocab_size, b.tokenizer->vocab_size(),
              c.tied_embeddings ? (c.lm_head_bias ? ", tied head with a bias" : ", tied head")
                                : (c.lm_head_bias ? ", head with a bias" : ""));
  std::printf("parameters       %lld (%.2fM)\n", static_cast<long long>(params), params / 1e6);
  std::printf("dtype            %s\n", dtype_name(c.dtype));
  // The largest share first.
  std::vector<std::pair<std::string, int64_t>> shares(storage.begin(), storage.end());
  std::stable_sort(shares.begin(), shares.end(), [](const auto& x, const auto& y) { return x.second > y.second; });
  std::printf("stored as       ");
  for (std::size_t i = 0; i < shares.size(); ++i) {
    const double pct = 100.0 * double(shares[i].second) / double(std::max<int64_t>(params, 1));
    if (pct < 0.1) std::printf(" %s <0.1%%", shares[i].first.c_str());
    else std::printf(" %s %.1f%%", shares[i].first.c_str(), pct);
    std::printf("%s", i + 1 == shares.size() ? "\n" : ",");
  }
  std::printf("CPU weights     ");
  for (WeightFormat f : weight_formats())
    std::printf(" %s %.1f MB%s", weight_format_name(f), held[weight_format_name(f)].get<int64_t>() / 1e6,
                f == weight_formats().back() ? "\n" : ",");
  std::printf("KV bytes/token   %lld in %s (2 x %d layers x %d heads x %d dims x %zu bytes)",
              static_cast<long long>(c.kv_bytes_per_token(elem)), dtype_name(c.dtype), c.n_kv_layers, c.n_kv_heads,
              c.head_dim, elem);
  // What a CPU run's figures (metrics.csv's kv_bytes_*) count: its cache
  // holds fp32 whatever the weights' type (the CUDA one 16 bits).
  if (elem != sizeof(float))
    std::printf("; the CPU backend's cache holds F32: %lld",
                static_cast<long long>(c.kv_bytes_per_token(sizeof(float))));
  std::printf("\n");
}

}  // namespace

void register_inspect(CLI::App& app) {
  auto args = std::make_shared<InspectArgs>();
  auto* cmd = app.add_subcommand("inspect", "Architecture, sizes, dtype and KV bytes per token of a model");
  add_model_arg(*cmd, args->model);
  cmd->add_flag("--json", args->json, "Print JSON");
  cmd->callback([args] { run_inspect(*args); });
}

}  // namespace kvscope::cli
