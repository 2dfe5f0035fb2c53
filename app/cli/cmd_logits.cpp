// kvscope-cli logits MODEL --prompt T --out F.npy: float32 logits of every
// prompt position, shape [n, vocab], for comparisons with other engines.
#include <cstdio>

#include "cli_common.h"
#include "common/error.h"
#include "io/npy.h"

namespace kvscope::cli {
namespace {

struct LogitsArgs {
  std::string model, prompt, out, device = "cpu", weights = weight_format_name(kDefaultWeightFormat);
};

void run_logits(const LogitsArgs& a) {
  resolve_device(a.device);  // a missing GPU is named before the model loads
  const ModelBundle b = load_bundle(a.model);
  const Device dev = resolve_device(a.device, b.config());
  const auto ids = encode_prompt(b, a.prompt, 0, "--prompt");
  BackendOptions bo;
  bo.max_tokens = static_cast<int>(ids.size());
  bo.weights = parse_weight_format(a.weights);
  auto backend = make_backend(dev, b.config(), b.files.weights, bo);
  ForwardOptions fo;
  fo.all_logits = true;
  ForwardOutput out;
  backend->forward(ids, fo, out);
  write_npy_f32(a.out, out.logits, {static_cast<int64_t>(ids.size()), b.config().vocab_size});
  std::fprintf(stderr, "wrote %s: [%zu, %d] float32 (%s)\n", a.out.c_str(), ids.size(), b.config().vocab_size,
               backend->name().c_str());
}

}  // namespace

void register_logits(CLI::App& app) {
  auto args = std::make_shared<LogitsArgs>();
  auto* cmd = app.add_subcommand("logits", "Write the logits of every prompt position to a .npy file");
  add_model_arg(*cmd, args->model);
  cmd->add_option("--prompt", args->prompt, "Prompt text")->required();
  cmd->add_option("--out", args->out, "Output .npy path")->required();
  add_device_opt(*cmd, args->device);
  add_weights_opt(*cmd, args->weights);
  cmd->callback([args] { run_logits(*args); });
}

}  // namespace kvscope::cli
