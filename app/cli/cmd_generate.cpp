// kvscope-cli generate MODEL --prompt T: decoding with the full cache,
// streamed to stdout; timings to stderr.
#include <cstdio>

#include "cli_common.h"
#include "cli_policy.h"
#include "common/error.h"
#include "session/generator.h"
#include "session/memory_forecast.h"
#include "session_runner.h"

namespace kvscope::cli {
namespace {

struct GenerateArgs {
  std::string model, prompt, prompt_file, device = "cpu";
  int max_new_tokens = 64;
  float temperature = 0.0f, top_p = 1.0f;
  int top_k = 0;
  uint64_t seed = 0;
  bool no_stop = false;
  PolicyFlags flags;
};

void run_generate(GenerateArgs a) {
  // A long prompt (100k tokens) cannot go through the shell: --prompt-file.
  if (!a.prompt_file.empty()) a.prompt = read_text_file(a.prompt_file, "--prompt-file");
  else if (a.prompt.empty()) throw Error("--prompt", "", "give the prompt as --prompt TEXT or --prompt-file FILE");
  if (a.max_new_tokens < 0) throw Error("--max-new-tokens", "", "must be >= 0");
  // Before anything is printed: a bad flag gives its one-line error only.
  validate_sampling({a.temperature, a.top_k, a.top_p, a.seed});
  if (a.flags.needs_session()) {
    // Eviction, sharing or exports: the session stepper. Every setting is
    // checked (the export directory, the Session's layers and budget)
    // before the model runs.
    std::unique_ptr<OpenOutput> out;  // held to the end: the lock, the staging folder
    if (!a.flags.export_dir.empty()) out = open_export_dir(a.flags.export_dir);
    SessionConfig cfg;
    cfg.model = absolute_model_path(a.model);
    cfg.device = a.device;
    cfg.prompt = a.prompt;
    cfg.max_new_tokens = a.max_new_tokens;
    cfg.stop_at_eos = !a.no_stop;
    cfg.seed = a.seed;
    cfg.sampling = {a.temperature, a.top_k, a.top_p, a.seed};
    validate_sampling(cfg.sampling);
    apply_policy_flags(a.flags, cfg);
    resolve_device(a.device);
    auto s = make_flag_session(bundle_for(cfg.model), cfg);
    note_recording(*s, "--record-mb");
    run_session(*s, true, out ? out->folder.get() : nullptr);
    return;
  }
  resolve_device(a.device);  // a missing GPU is named before the model loads
  const ModelBundle b = load_bundle(a.model);
  const Device dev = resolve_device(a.device, b.config());
  const auto prompt = encode_prompt(b, a.prompt, a.max_new_tokens, "--prompt");
  // The KV cache against the memory available (KVSCOPE_MEMORY_MB lowers
  // it), as a session's plan checks it, before the model runs.
  if (dev == Device::Cpu) check_host_kv_fits(b.config(), static_cast<int>(prompt.size()), a.max_new_tokens);
  BackendOptions bo;
  bo.max_tokens = static_cast<int>(prompt.size()) + std::max(1, a.max_new_tokens);
  bo.weights = parse_weight_format(a.flags.weights);
  auto backend = make_backend(dev, b.config(), b.files.weights, bo);
  GenerateOptions go;
  go.max_new_tokens = a.max_new_tokens;
  go.sampling = {a.temperature, a.top_k, a.top_p, a.seed};
  go.stop_at_eos = !a.no_stop;

  std::fputs(a.prompt.c_str(), stdout);
  std::fflush(stdout);
  std::vector<int> shown;
  std::size_t printed = 0;
  auto on_token = [&](int id) {
    if (b.is_eos(id) && !a.no_stop) return;
    shown.push_back(id);
    const std::string text = b.tokenizer->decode(shown, true);
    // Hold back output while the last token is half of a UTF-8 character.
    if (text.size() >= 3 && text.compare(text.size() - 3, 3, "\xEF\xBF\xBD") == 0) return;
    if (text.size() > printed) {
      std::fwrite(text.data() + printed, 1, text.size() - printed, stdout);
      std::fflush(stdout);
      printed = text.size();
    }
  };
  const auto r = generate_tokens(*backend, prompt, go, b.config().eos_ids, on_token);
  const std::string text = b.tokenizer->decode(shown, true);
  if (text.size() > printed) std::fwrite(text.data() + printed, 1, text.size() - printed, stdout);
  std::printf("\n");
  std::fflush(stdout);  // the summary goes to stderr: keep it after the text when both are piped
  // The first new token comes from the prompt's pass: a decode rate needs
  // at least one more (a timed decode step).
  std::string decode;
  if (r.new_tokens.size() > 1 && r.decode_seconds > 0) {
    char buf[64];
    std::snprintf(buf, sizeof(buf), ", decode %.1f tok/s", (r.new_tokens.size() - 1) / r.decode_seconds);
    decode = buf;
  }
  std::fprintf(stderr, "[%s] prompt %zu tokens in %.3f s (%.1f tok/s); %zu new token%s%s; stop: %s\n",
               backend->name().c_str(), prompt.size(), r.prefill_seconds, prompt.size() / r.prefill_seconds,
               r.new_tokens.size(), r.new_tokens.size() == 1 ? "" : "s", decode.c_str(), r.stop_reason.c_str());
}

}  // namespace

void register_generate(CLI::App& app) {
  auto args = std::make_shared<GenerateArgs>();
  auto* cmd = app.add_subcommand("generate", "Continue a prompt (greedy by default)");
  add_model_arg(*cmd, args->model);
  auto* prompt = cmd->add_option("--prompt", args->prompt, "Prompt text");
  cmd->add_option("--prompt-file", args->prompt_file, "Read the prompt from this file (UTF-8, used as it is)")
      ->excludes(prompt);
  cmd->add_option("--max-new-tokens", args->max_new_tokens, "Tokens to generate")->default_val(64);
  cmd->add_option("--temperature", args->temperature, "0 = greedy")->default_val(0);
  cmd->add_option("--top-k", args->top_k, "Keep the k most likely tokens (0 = off)")->default_val(0);
  cmd->add_option("--top-p", args->top_p, "Nucleus sampling mass (1 = off)")->default_val(1);
  cmd->add_option("--seed", args->seed, "Seed of the sampling random stream")->default_val(0);
  cmd->add_flag("--ignore-eos", args->no_stop, "Keep generating after the end-of-text token");
  add_device_opt(*cmd, args->device);
  add_policy_flags(*cmd, args->flags);
  cmd->callback([args] { run_generate(*args); });
}

}  // namespace kvscope::cli
