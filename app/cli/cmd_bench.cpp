// kvscope-cli bench [MODEL | --shape NAME]: prefill and decode tokens/s, with
// the memory-bandwidth roofline that decode speed should be judged against.
#include <chrono>
#include <cstdio>
#include <thread>

#include <nlohmann/json.hpp>

#include "backend/parallel.h"
#include "bench_policy.h"
#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/cpu_info.h"
#include "cli_common.h"
#include "common/error.h"
#include "common/counter_random.h"
#include "memory_bandwidth.h"
#include "model/loader.h"
#include "model/shapes.h"
#include "bundle/downloaded_models.h"
#include "io/json_file.h"
#ifdef KVSCOPE_HAVE_CUDA
#include "backend/cuda/cuda_backend.h"
#endif

namespace kvscope::cli {
namespace {

struct BenchArgs {
  std::string model, shape, device = "cpu";
  int prompt_tokens = 128, decode_tokens = 32;
  uint64_t seed = 1;
  bool json = false;
  int repeats = 3;
  PolicyFlags flags;
};

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Bytes of weights one decoded token reads: every matrix once (the embedding
// only one row, ignored), in the backend's element size.
void run_bench(const BenchArgs& a) {
  if (!a.model.empty() && !a.shape.empty())
    throw Error("bench", "", "give either a MODEL (directory or .gguf file) or --shape NAME");
  if (a.flags.policy != "full" || a.flags.text("budget") != "100%") {
    PolicyBenchArgs p;
    p.model = a.model;
    p.shape = a.shape;
    p.device = a.device;
    p.prompt_tokens = a.prompt_tokens;
    p.decode_tokens = a.decode_tokens;
    p.repeats = a.repeats;
    p.seed = a.seed;
    p.json = a.json;
    p.flags = a.flags;
    run_policy_bench(p);
    return;
  }
  if (a.model.empty() && a.shape.empty())
    throw Error("bench", "", "give either a MODEL (directory or .gguf file) or --shape NAME");
  if (a.prompt_tokens < 1 || a.decode_tokens < 1) throw Error("bench", "", "--prompt-tokens and --decode-tokens must be >= 1");
  resolve_device(a.device);  // a missing GPU is named before the model loads
  ModelConfig cfg;
  ModelWeights weights;
  std::string what;
  if (!a.shape.empty()) {
    cfg = shape_config(a.shape);
    weights = random_weights(cfg, a.seed);
    what = "shape " + a.shape + " (random weights)";
  } else {
    auto files = load_model_files(resolve_model_reference(a.model));
    cfg = files.config;
    weights = std::move(files.weights);
    what = a.model;
  }
  const Device dev = resolve_device(a.device, cfg);
  if (a.prompt_tokens + a.decode_tokens > cfg.max_positions)
    throw Error("bench", "", "--prompt-tokens + --decode-tokens exceed the model's maximum positions (" +
                                 std::to_string(cfg.max_positions) + ")");
  const int64_t params = weights.numel();
  if (dev == Device::Cpu) check_host_memory(what, weights, a.flags.weights);
  BackendOptions bo;
  bo.max_tokens = a.prompt_tokens + a.decode_tokens;
  bo.weights = parse_weight_format(a.flags.weights);
  const double t_load = now_s();
  auto backend = make_backend(dev, cfg, weights, bo);
  const double load_s = now_s() - t_load;

  std::vector<int> prompt(a.prompt_tokens);
  for (int i = 0; i < a.prompt_tokens; ++i)
    prompt[i] = static_cast<int>(philox4(a.seed, i, 0, 0, 0).v[0] % static_cast<uint32_t>(cfg.vocab_size));
  ForwardOptions fo;
  ForwardOutput out;
  // Warm-up (first-touch of weights, BLAS thread start, CUDA module load).
  backend->forward(std::span<const int>(prompt.data(), std::min(8, a.prompt_tokens)), fo, out);
  const int one_tok[1] = {prompt[0]};
  backend->forward(one_tok, fo, out);
  backend->reset();

  double t0 = now_s();
  backend->forward(prompt, fo, out);
  const double prefill_s = now_s() - t0;
  const int V = cfg.vocab_size;
  t0 = now_s();
  for (int s = 0; s < a.decode_tokens; ++s) {
    int best = 0;
    for (int i = 1; i < V; ++i)
      if (out.logits[i] > out.logits[best]) best = i;
    const int tok[1] = {best};
    backend->forward(tok, fo, out);
  }
  const double decode_s = now_s() - t0;

  // What a decode step reads: the CPU backend's matrices as it holds them,
  // 16 bits a weight on CUDA.
  const int64_t wbytes = dev == Device::Cpu ? CpuModel::decode_read_bytes(weights, bo.weights)
                                            : CpuModel::decode_read_bytes(weights, WeightFormat::F16);
  double bw = 0;
  std::string bw_what;
  if (dev == Device::Cpu) {
    const int threads = static_cast<int>(std::thread::hardware_concurrency());
    bw = host_read_bandwidth_gbs(threads);
    bw_what = "host read, " + std::to_string(threads) + " threads";
  } else {
#ifdef KVSCOPE_HAVE_CUDA
    bw = cuda_measure_bandwidth_gbs();
    bw_what = "device copy";
#endif
  }
  const double prefill_tps = a.prompt_tokens / prefill_s;
  const double decode_tps = a.decode_tokens / decode_s;
  const double roofline = bw * 1e9 / double(wbytes);
  // The floor of a decode step: every weight and the whole KV cache read
  // once (fp32 on the CPU, 16 bits on CUDA), the cache at the steps' mean
  // length (step s reads prompt + s + 1 rows) -- the same floor as
  // bench/compare_cpu.py's.
  const int64_t kv_row = cfg.kv_bytes_per_token(dev == Device::Cpu ? 4 : 2);
  const double kv_read = double(kv_row) * (a.prompt_tokens + (a.decode_tokens + 1) / 2.0);
  const double floor_tps = bw * 1e9 / (double(wbytes) + kv_read);
  // The CPU backend's threads (KVSCOPE_THREADS, else the cores it may use).
  // and the kernels it ran: OpenBLAS's set and kvscope's own vector path.
  const CpuInfo cpu = dev == Device::Cpu ? cpu_info() : CpuInfo{};
  const std::string where = dev == Device::Cpu ? backend->name() + ", " + std::to_string(cpu.threads) +
                                                     (cpu.threads == 1 ? " thread" : " threads") + ", OpenBLAS " +
                                                     cpu.openblas_core + ", " + cpu.simd_path
                                               : backend->name();
  nlohmann::json j = {{"what", what},
                      {"device", where},
                      {"parameters", params},
                      {"load_seconds", load_s},
                      {"prompt_tokens", a.prompt_tokens},
                      {"prefill_seconds", prefill_s},
                      {"prefill_tokens_per_s", prefill_tps},
                      {"decode_tokens", a.decode_tokens},
                      {"decode_seconds", decode_s},
                      {"decode_tokens_per_s", decode_tps},
                      {"weight_bytes_per_token", wbytes},
                      {"bandwidth_gbs", bw},
                      {"roofline_tokens_per_s", roofline},
                      {"decode_fraction_of_roofline", decode_tps / roofline},
                      {"kv_bytes_read_per_token", kv_read},
                      {"floor_tokens_per_s", floor_tps},
                      {"decode_fraction_of_floor", decode_tps / floor_tps},
                      {"prefill_over_decode", prefill_tps / decode_tps}};
  if (!a.shape.empty()) j["shape"] = a.shape;
  // The processor by vendor, family and model (a VM's "AMD EPYC" alone does
  // not tell a Zen 3 from a Zen 4), so a noted number says where it was made.
  if (dev == Device::Cpu) j["cpu"] = cpu_description(cpu);
  if (a.json) {
    std::printf("%s\n", json_text(j).c_str());
    return;
  }
  std::printf("%s: %s, %.1fM parameters, on %s (setup %.2f s)\n", what.c_str(), cfg.describe_arch().c_str(),
              params / 1e6, where.c_str(), load_s);
  std::printf("prefill  %5d tokens  %8.3f s  %9.1f tok/s\n", a.prompt_tokens, prefill_s, prefill_tps);
  std::printf("decode   %5d tokens  %8.3f s  %9.1f tok/s  (%.2f ms/token)\n", a.decode_tokens, decode_s, decode_tps,
              1e3 * decode_s / a.decode_tokens);
  std::printf("weights read per token %.1f MB; bandwidth %.1f GB/s (%s) -> roofline %.1f tok/s; decode at %.0f%%\n",
              wbytes / 1e6, bw, bw_what.c_str(), roofline, 100.0 * decode_tps / roofline);
  std::printf("with the KV cache read per token (%.1f MB at the steps' mean length): floor %.1f tok/s; decode at %.0f%%\n",
              kv_read / 1e6, floor_tps, 100.0 * decode_tps / floor_tps);
  std::printf("prefill / decode throughput: %.1fx\n", prefill_tps / decode_tps);
  if (dev == Device::Cpu) std::printf("cpu: %s\n", cpu_description(cpu).c_str());
}

}  // namespace

void register_bench(CLI::App& app) {
  auto args = std::make_shared<BenchArgs>();
  auto* cmd = app.add_subcommand("bench", "Prefill and decode tokens/s against the memory-bandwidth roofline");
  cmd->add_option("model", args->model, "Hugging Face model directory or .gguf file (or --shape)");
  cmd->add_option("--shape", args->shape, "A real architecture's shape with random weights (no files): " +
                                              [] {
                                                std::string s;
                                                for (const auto& n : known_shapes()) s += (s.empty() ? "" : ", ") + n;
                                                return s;
                                              }());
  cmd->add_option("--prompt-tokens", args->prompt_tokens, "Prefill length")->default_val(128);
  cmd->add_option("--decode-tokens", args->decode_tokens, "Decode steps")->default_val(32);
  cmd->add_option("--seed", args->seed, "Seed of the random weights and prompt")->default_val(1);
  cmd->add_flag("--json", args->json, "Print JSON");
  add_device_opt(*cmd, args->device);
  cmd->add_option("--repeats", args->repeats, "With --policy: runs of each variant (the best is reported)")->default_val(3);
  // With --policy: the per-token cost of eviction and recording against
  // plain full-cache decoding, on MODEL (the bundled one when left out) or
  // on --shape's random weights; --record-layers picks the layers recorded
  // (all by default) and --no-metrics leaves out the run with the metrics.
  add_policy_flags(*cmd, args->flags, /*with_export=*/false);
  cmd->callback([args] { run_bench(*args); });
}

}  // namespace kvscope::cli
